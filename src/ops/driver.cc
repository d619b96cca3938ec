#include "ops/driver.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <cstdint>

#include "leaky/reference.hpp"
#include "runtime/error.h"
#include "runtime/pool.h"

#if defined(__SANITIZE_THREAD__)
// pthreadpool is not instrumented: tell ThreadSanitizer about the
// happens-before edges its atomics create between a task and the caller.
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#define LEAKY_TSAN_ACQUIRE(address) __tsan_acquire(address)
#define LEAKY_TSAN_RELEASE(address) __tsan_release(address)
#else
#define LEAKY_TSAN_ACQUIRE(address) ((void)(address))
#define LEAKY_TSAN_RELEASE(address) ((void)(address))
#endif

namespace leaky::internal {
namespace {

// A second core pays only when its share outweighs waking a pthreadpool
// worker. Measured with leaky-bench (f32 forward, same run, 2-core EPYC):
// XNNPACK, which always wakes its pool, got 44 GB/s on 2 threads against 114
// on 1 at 4 Ki elements (32 KiB moved) and 92 against 82 at 16 Ki (128 KiB);
// with this threshold leaky splits 64 Ki elements (512 KiB moved) over two
// cores: 131 GB/s against 77 on one. 256 KiB per core keeps small calls on
// the caller's thread with a margin.
constexpr uint64_t kDefaultMinBytesPerCore = 256u << 10;
std::atomic<uint64_t> min_bytes_per_core{kDefaultMinBytesPerCore};

// Granules of one cache line: cores never share a line, so no false sharing
// between their stores, and each core range starts on a line boundary.
constexpr uint32_t kCacheLineBytes = 64;

struct Job {
  const leaky_tiling* tiling;
  void (*run_tile)(const Job& job, uint64_t start, uint64_t length);
  const void* kernel;
  const char* src0;
  const char* src1;
  const void* bias;  // per-channel kernels only
  char* dst;
  void* aux;         // per-channel kernels only: indexed from element 0
  kernels::Params params;
};

void RunCore(const Job& job, uint32_t core) {
  // Kernels need IEEE defaults (no FTZ/DAZ, round to nearest) on whichever
  // thread runs them; the caller's state comes back when the core is done.
  const reference::ieee_environment ieee;
  const leaky_tiling* tiling = job.tiling;
  uint64_t first, count;
  leaky_tiling_core_granules(tiling, core, &first, &count);
  // Walk the tiles incrementally: the same ranges as leaky_tiling_tile_range,
  // without its divisions per tile (they show at 4 Ki-element calls).
  const uint64_t per_tile = leaky_tiling_tile_granules(tiling);
  const uint64_t end = first + count;
  uint64_t start = leaky_tiling_granule_start(tiling, first);
  for (uint64_t granule = first; granule < end;) {
    granule = end - granule > per_tile ? granule + per_tile : end;
    const uint64_t stop = leaky_tiling_granule_start(tiling, granule);
    job.run_tile(job, start, stop - start);
    start = stop;
  }
}

void RunCoreTask(void* context, size_t core) {
  LEAKY_TSAN_ACQUIRE(context);
  const Job& job = *static_cast<const Job*>(context);
  RunCore(job, static_cast<uint32_t>(core));
  LEAKY_TSAN_RELEASE(context);
}

void Execute(Job& job) {
  const uint32_t cores = job.tiling->cores_used;
  pthreadpool_t pool = cores > 1 ? Pool() : nullptr;
  if (pool == nullptr) {
    // One core, or no pool could be made: the calling thread does it all.
    for (uint32_t core = 0; core < cores; ++core) RunCore(job, core);
    return;
  }
  LEAKY_TSAN_RELEASE(&job);
  // Workers sleep in the kernel as soon as the call is done. By default
  // pthreadpool spins them for up to a million pause loops (tens of
  // milliseconds) waiting for the next call; between our calls the
  // application runs other threaded work (PyTorch's intra-op threads, a
  // second process), and the spinning workers take its cores. Seen in this
  // project's tests: two test processes on two cores, each alternating small
  // split calls with serial checking, ran up to 10x slower with spinning.
  pthreadpool_parallelize_1d(pool, &RunCoreTask, &job, cores, PTHREADPOOL_FLAG_YIELD_WORKERS);
  LEAKY_TSAN_ACQUIRE(&job);
}

void RunUnaryTile(const Job& job, uint64_t start, uint64_t length) {
  const size_t offset = start * job.tiling->element_bytes;
  reinterpret_cast<kernels::UnaryKernel>(job.kernel)(length, job.src0 + offset, job.dst + offset,
                                                      job.params);
}

void RunChannelTile(const Job& job, uint64_t start, uint64_t length) {
  const size_t offset = start * job.tiling->element_bytes;
  reinterpret_cast<kernels::ChannelKernel>(job.kernel)(
      length, start, job.src0 != nullptr ? job.src0 + offset : nullptr, job.src1 + offset,
      job.bias, job.dst + offset, job.aux, job.params);
}

void RunBinaryTile(const Job& job, uint64_t start, uint64_t length) {
  const size_t offset = start * job.tiling->element_bytes;
  reinterpret_cast<kernels::BinaryKernel>(job.kernel)(
      length, job.src0 + offset, job.src1 + offset, job.dst + offset, job.params);
}

}  // namespace

size_t ElementBytes(const char* function, leaky_dtype dtype, leaky_status* status) {
  switch (dtype) {
    case LEAKY_F32: return 4;
    case LEAKY_F64: return 8;
    case LEAKY_F16:
    case LEAKY_BF16: return 2;
  }
  *status = Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: dtype %d is not one of LEAKY_F32, LEAKY_F64, "
                 "LEAKY_F16, LEAKY_BF16", function, static_cast<int>(dtype));
  return 0;
}

leaky_status ResolveOptions(const char* function, const leaky_options* options,
                            leaky_options* resolved) {
  *resolved = options != nullptr ? *options : leaky_options{0, -1};
  if (resolved->num_threads < 0) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS, "%s: num_threads %d is negative (0 = all cores)",
                function, resolved->num_threads);
  }
  if (resolved->stream_stores < -1 || resolved->stream_stores > 1) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: stream_stores %d is not -1 (automatic), 0 (never) or 1 (always)", function,
                resolved->stream_stores);
  }
  if (resolved->num_threads == 0) resolved->num_threads = static_cast<int>(Cpu().cores);
  return LEAKY_OK;
}

leaky_status CheckBuffer(const char* function, const char* name, const void* pointer, size_t n,
                         size_t element_bytes) {
  if (pointer == nullptr) {
    return Fail(LEAKY_ERROR_NULL_POINTER, "%s: %s is null but n = %zu > 0", function, name, n);
  }
  if (n > SIZE_MAX / element_bytes ||
      reinterpret_cast<uintptr_t>(pointer) > UINTPTR_MAX - n * element_bytes) {
    return Fail(LEAKY_ERROR_SIZE, "%s: %s with n = %zu elements of %zu bytes wraps the address "
                "space", function, name, n, element_bytes);
  }
  return LEAKY_OK;
}

leaky_status CheckNoPartialOverlap(const char* function, const char* output_name,
                                   const void* output, const char* input_name, const void* input,
                                   size_t bytes) {
  const uintptr_t out = reinterpret_cast<uintptr_t>(output);
  const uintptr_t in = reinterpret_cast<uintptr_t>(input);
  if (out != in && out < in + bytes && in < out + bytes) {
    return Fail(LEAKY_ERROR_OVERLAP, "%s: %s overlaps %s without being identical to it (in-place "
                "needs the same pointer)", function, output_name, input_name);
  }
  return LEAKY_OK;
}

leaky_status CheckDisjoint(const char* function, const char* a_name, const void* a,
                           size_t a_bytes, const char* b_name, const void* b, size_t b_bytes) {
  const auto ua = reinterpret_cast<uintptr_t>(a), ub = reinterpret_cast<uintptr_t>(b);
  if (a_bytes > 0 && b_bytes > 0 && ua < ub + b_bytes && ub < ua + a_bytes) {
    return Fail(LEAKY_ERROR_OVERLAP, "%s: %s overlaps %s", function, a_name, b_name);
  }
  return LEAKY_OK;
}

leaky_status CheckStreamRange(const char* function, uint64_t offset, size_t n) {
  if (n > UINT64_MAX - offset) {
    return Fail(LEAKY_ERROR_SIZE, "%s: offset + n exceeds 2^64 stream words", function);
  }
  return LEAKY_OK;
}

leaky_status CheckFiniteParameter(const char* function, const char* name, double value) {
  if (!std::isfinite(value)) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: %s = %g is not finite", function, name, value);
  }
  return LEAKY_OK;
}

leaky_options InPlacePolicy(const leaky_options& options, bool in_place) {
  leaky_options resolved = options;
  if (in_place && resolved.stream_stores == -1) resolved.stream_stores = 0;
  return resolved;
}

static void FillCpuRequest(size_t n, size_t element_bytes, uint32_t streams,
                    const leaky_options& options, uintptr_t output_address,
                    double negative_slope, leaky_plan_request* request) {
  const CpuFacts& cpu = Cpu();
  std::memset(request, 0, sizeof(*request));  // padding too: requests are compared bytewise
  request->total_length = n;
  request->element_bytes = static_cast<uint32_t>(element_bytes);
  request->streams = streams;
  request->max_cores = static_cast<uint32_t>(options.num_threads);
  request->align_bytes = kCacheLineBytes;
  // Half the per-core L2 for the tile: the rest holds the other streams'
  // prefetched lines and whatever the application keeps there.
  request->buffer_bytes = cpu.core_cache_bytes / 2;
  request->buffer_count = 1;  // hardware prefetchers double-buffer for us
  request->address_offset = static_cast<uint32_t>(output_address % kCacheLineBytes);
  request->min_bytes_per_core = min_bytes_per_core.load(std::memory_order_relaxed);
  // Automatic store policy: non-temporal stores skip the read-for-ownership
  // of each output line (a third of the traffic of an out-of-place op) but
  // evict the result from cache, so they pay only once the bytes moved no
  // longer stay in the last-level cache. Measured with leaky-bench (f32
  // forward, forced cached vs forced streaming stores, same run, this 2-core
  // EPYC with a 32 MiB L3): 1 Mi elements (8 MiB moved) 58.6 vs 36.1 GB/s on
  // one thread - cached wins; 4 Mi (32 MiB moved) 13.3 vs 22.2 GB/s on one
  // thread and 25.9 vs 38.1 on two - streaming wins. The threshold sits
  // between, at 16 MiB. It is a constant, not sysconf's L3 size: this VM
  // reports 256 MiB there. In-place calls never stream (see the drivers).
  request->stream_threshold_bytes = uint64_t{16} << 20;
  request->stream_stores = options.stream_stores;
  request->negative_slope = negative_slope;
}

leaky_tiling PlanForCpu(size_t n, size_t element_bytes, uint32_t streams,
                        const leaky_options& options, const void* output, double negative_slope) {
  leaky_plan_request request;
  FillCpuRequest(n, element_bytes, streams, options, reinterpret_cast<uintptr_t>(output),
                 negative_slope, &request);
  // Callers repeat the same shape call after call (a training step, a
  // benchmark loop): the last plan of this thread is reused when the request
  // is identical, so a 4 Ki-element call does not pay the planner's divisions.
  // One thread_local object: in a shared library each one costs a
  // __tls_get_addr call.
  struct LastPlan {
    leaky_plan_request request;
    leaky_tiling tiling;
    bool valid;
  };
  thread_local LastPlan last{};
  if (last.valid && std::memcmp(&request, &last.request, sizeof(request)) == 0) return last.tiling;
  leaky_tiling tiling;
  // Every field was validated by the driver, so planning cannot fail here.
  (void)leaky_plan_tiling(&request, &tiling);
  last.request = request;
  last.tiling = tiling;
  last.valid = true;
  return tiling;
}

void RunTiles(const leaky_tiling& tiling, kernels::UnaryKernel kernel, kernels::Params params,
              const void* src, void* dst) {
  params.stream_stores = tiling.stream_stores != 0;
  Job job{&tiling, &RunUnaryTile, reinterpret_cast<const void*>(kernel),
          static_cast<const char*>(src), nullptr, nullptr, static_cast<char*>(dst), nullptr, params};
  Execute(job);
}

void RunTiles(const leaky_tiling& tiling, kernels::BinaryKernel kernel, kernels::Params params,
              const void* src0, const void* src1, void* dst) {
  params.stream_stores = tiling.stream_stores != 0;
  Job job{&tiling, &RunBinaryTile, reinterpret_cast<const void*>(kernel),
          static_cast<const char*>(src0), static_cast<const char*>(src1), nullptr,
          static_cast<char*>(dst), nullptr, params};
  Execute(job);
}

void RunTiles(const leaky_tiling& tiling, kernels::ChannelKernel kernel, kernels::Params params,
              const void* dy, const void* x, const void* bias, void* dst, void* aux) {
  params.stream_stores = tiling.stream_stores != 0;
  Job job{&tiling, &RunChannelTile, reinterpret_cast<const void*>(kernel),
          static_cast<const char*>(dy), static_cast<const char*>(x), bias,
          static_cast<char*>(dst), aux, params};
  Execute(job);
}

namespace {

leaky_status CheckParameters(const char* function, leaky_dtype dtype,
                             const leaky_options* options,
                             std::initializer_list<NamedValue> parameters, size_t* element_bytes,
                             leaky_options* resolved) {
  leaky_status status = LEAKY_OK;
  *element_bytes = ElementBytes(function, dtype, &status);
  if (*element_bytes == 0) return status;
  status = ResolveOptions(function, options, resolved);
  if (status != LEAKY_OK) return status;
  for (const NamedValue& parameter : parameters) {
    status = CheckFiniteParameter(function, parameter.name, parameter.value);
    if (status != LEAKY_OK) return status;
  }
  return LEAKY_OK;
}

}  // namespace


leaky_status RunUnaryOp(const char* function, leaky_dtype dtype, size_t n, const void* x, void* y,
                        const leaky_options* options, std::initializer_list<NamedValue> parameters,
                        UnaryKernels kernels::KernelTable::*table_field,
                        const kernels::Params& params) {
  size_t element_bytes = 0;
  leaky_options resolved{0, -1};
  LEAKY_RETURN_IF_ERROR(
      CheckParameters(function, dtype, options, parameters, &element_bytes, &resolved));
  if (n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "x", x, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "y", y, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(function, "y", y, "x", x, n * element_bytes));
  const leaky_tiling tiling = PlanForCpu(n, element_bytes, 2, InPlacePolicy(resolved, x == y), y,
                                         params.negative_slope);
  RunTiles(tiling, (kernels::Dispatched().*table_field)[dtype], params, x, y);
  return LEAKY_OK;
}

leaky_status RunBinaryOp(const char* function, leaky_dtype dtype, size_t n, const void* dy,
                         const void* saved, void* dx, const leaky_options* options,
                         std::initializer_list<NamedValue> parameters, const char* unsupported,
                         BinaryKernels kernels::KernelTable::*table_field,
                         const kernels::Params& params) {
  size_t element_bytes = 0;
  leaky_options resolved{0, -1};
  LEAKY_RETURN_IF_ERROR(
      CheckParameters(function, dtype, options, parameters, &element_bytes, &resolved));
  if (unsupported != nullptr) return Fail(LEAKY_ERROR_UNSUPPORTED, "%s: %s", function, unsupported);
  if (n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "dy", dy, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "saved", saved, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "dx", dx, n, element_bytes));
  const size_t bytes = n * element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(function, "dx", dx, "dy", dy, bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(function, "dx", dx, "saved", saved, bytes));
  const leaky_tiling tiling = PlanForCpu(n, element_bytes, 3,
                                         InPlacePolicy(resolved, dx == dy || dx == saved), dx,
                                         params.negative_slope);
  RunTiles(tiling, (kernels::Dispatched().*table_field)[dtype], params, dy, saved, dx);
  return LEAKY_OK;
}

}  // namespace leaky::internal

extern "C" leaky_status leaky_cpu_plan_request(leaky_dtype dtype, uint64_t n, uint32_t streams,
                                               const leaky_options* options,
                                               leaky_plan_request* request) {
  using namespace leaky::internal;
  static constexpr char kFunction[] = "leaky_cpu_plan_request";
  leaky_status status = LEAKY_OK;
  const size_t element_bytes = ElementBytes(kFunction, dtype, &status);
  if (element_bytes == 0) return status;
  if (request == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: request is null", kFunction);
  leaky_options resolved{0, -1};
  const leaky_status options_status = ResolveOptions(kFunction, options, &resolved);
  if (options_status != LEAKY_OK) return options_status;
  FillCpuRequest(n, element_bytes, streams, resolved, 0, 0.0, request);
  return LEAKY_OK;
}

namespace leaky::internal {

void SetMinBytesPerCoreForTesting(uint64_t bytes) {
  min_bytes_per_core.store(bytes == 0 ? kDefaultMinBytesPerCore : bytes,
                           std::memory_order_relaxed);
}

}  // namespace leaky::internal

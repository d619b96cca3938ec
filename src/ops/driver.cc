#include "ops/driver.h"

#include "plan/cpu_plan.h"
#include "runtime/parallel.h"

namespace leaky::internal {
namespace {

// One call's work, shared by every core's task.
struct Job {
  const leaky_tiling* tiling;
  void (*run_tile)(const Job& job, uint64_t start, uint64_t length);
  const void* kernel;
  const char* src0;
  const char* src1;
  const void* side_input;  // indexed kernels only
  char* dst;
  void* side_array;        // indexed kernels only: indexed from element 0
  kernels::Params params;
};

void RunCore(void* context, size_t core) {
  const Job& job = *static_cast<const Job*>(context);
  const leaky_tiling* tiling = job.tiling;
  uint64_t first, count;
  leaky_tiling_core_granules(tiling, static_cast<uint32_t>(core), &first, &count);
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

void RunUnaryTile(const Job& job, uint64_t start, uint64_t length) {
  const size_t offset = start * job.tiling->element_bytes;
  reinterpret_cast<kernels::UnaryKernel>(job.kernel)(length, job.src0 + offset, job.dst + offset,
                                                      job.params);
}

void RunBinaryTile(const Job& job, uint64_t start, uint64_t length) {
  const size_t offset = start * job.tiling->element_bytes;
  reinterpret_cast<kernels::BinaryKernel>(job.kernel)(
      length, job.src0 + offset, job.src1 + offset, job.dst + offset, job.params);
}

void RunIndexedTile(const Job& job, uint64_t start, uint64_t length) {
  const size_t offset = start * job.tiling->element_bytes;
  reinterpret_cast<kernels::IndexedKernel>(job.kernel)(
      length, start, job.src0 != nullptr ? job.src0 + offset : nullptr, job.src1 + offset,
      job.side_input, job.dst + offset, job.side_array, job.params);
}

// Plans a pass over `streams` arrays whose output is `dst` (in place when
// it is one of the sources) and runs `job` on every core's tiles.
void PlanAndRun(const Call& call, uint32_t streams, bool in_place, void* dst, Job& job) {
  const leaky_tiling tiling = PlanForCpu(call.n, call.element_bytes, streams,
                                         InPlacePolicy(call.options, in_place), dst);
  job.tiling = &tiling;
  job.params.common.stream_stores = tiling.stream_stores != 0;
  ParallelFor(tiling.cores_used, static_cast<int>(tiling.cores_used), &RunCore, &job,
              call.options.executor);
}

}  // namespace

leaky_status DescribeCall(const char* function, leaky_dtype dtype, size_t n,
                          const leaky_options* options, std::initializer_list<NamedValue> scalars,
                          Call* call) {
  leaky_status status = LEAKY_OK;
  *call = Call{function, dtype, n, ElementBytes(function, dtype, &status), {0, -1, nullptr}};
  if (call->element_bytes == 0) return status;
  LEAKY_RETURN_IF_ERROR(ResolveOptions(function, options, &call->options));
  return CheckFinite(function, scalars);
}

leaky_status RunUnaryOp(const Call& call, const void* x, void* y,
                        UnaryKernels kernels::KernelTable::*field, const kernels::Params& params) {
  if (call.n == 0) return LEAKY_OK;
  const size_t n = call.n, bytes = call.element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckOperands(call.function, {{"x", x, n, bytes, Role::kInput},
                                                      {"y", y, n, bytes, Role::kOutput}}));
  Job job{nullptr, &RunUnaryTile,
          reinterpret_cast<const void*>((kernels::Dispatched().*field)[call.dtype]),
          static_cast<const char*>(x), nullptr, nullptr, static_cast<char*>(y), nullptr, params};
  PlanAndRun(call, 2, x == y, y, job);
  return LEAKY_OK;
}

leaky_status RunBinaryOp(const Call& call, const void* dy, const void* saved, void* dx,
                         BinaryKernels kernels::KernelTable::*field, const kernels::Params& params,
                         const char* saved_name) {
  if (call.n == 0) return LEAKY_OK;
  const size_t n = call.n, bytes = call.element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckOperands(call.function, {{"dy", dy, n, bytes, Role::kInput},
                                                      {saved_name, saved, n, bytes, Role::kInput},
                                                      {"dx", dx, n, bytes, Role::kOutput}}));
  Job job{nullptr, &RunBinaryTile,
          reinterpret_cast<const void*>((kernels::Dispatched().*field)[call.dtype]),
          static_cast<const char*>(dy), static_cast<const char*>(saved), nullptr,
          static_cast<char*>(dx), nullptr, params};
  PlanAndRun(call, 3, dx == dy || dx == saved, dx, job);
  return LEAKY_OK;
}

void RunIndexedOp(const Call& call, uint32_t streams, kernels::IndexedKernel kernel,
                  const kernels::Params& params, const void* dy, const void* x,
                  const void* side_input, void* dst, void* side_array) {
  Job job{nullptr, &RunIndexedTile, reinterpret_cast<const void*>(kernel),
          static_cast<const char*>(dy), static_cast<const char*>(x), side_input,
          static_cast<char*>(dst), side_array, params};
  PlanAndRun(call, streams, dst == x || dst == dy, dst, job);
}

}  // namespace leaky::internal

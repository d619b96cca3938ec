// leaky-bench: GB/s (bytes read + bytes written) of this library, oneDNN,
// XNNPACK, a plain loop and two limits (memcpy, a non-temporal streaming copy
// of the same bytes), for sizes 1 Ki .. 256 Mi elements, f32/f16/bf16/f64,
// forward out-of-place, forward in-place and backward, 1 thread and all.
//
// Benchmark names are contender/dtype/mode/elements/threads; `leaky bench`
// turns the JSON into a table of same-run ratios and a plot.
#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <pthreadpool.h>
#include <unistd.h>
#include <xnnpack.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <string>
#include <vector>

#include "leaky/leaky.hpp"

extern "C" void omp_set_num_threads(int);

namespace {

constexpr double kSlope = 0.2;
// In-place cases run the op on their own output again and again; slope 1
// keeps the data (and so the work) the same every time, where 0.2 would
// shrink negatives into subnormals within a few hundred runs.
constexpr double kInPlaceSlope = 1.0;

// LeakyReLU's three modes, and the forward of two relatives (ELU with
// alpha 1, ReLU) against oneDNN's same algorithms.
enum class Mode {
  kForward, kForwardInPlace, kBackward, kEluForward, kReluForward,
  kPreluForward,           // one shared slope (oneDNN's prelu with a broadcast weight)
  kRreluForward,           // training, no noise output
  kBiasActDropoutForward,  // f32 [outer, 64 channels, inner]: bias, LeakyReLU(0.2), gain, p = 0.1
};
const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kForward: return "fwd";
    case Mode::kForwardInPlace: return "fwd_inplace";
    case Mode::kBackward: return "bwd";
    case Mode::kEluForward: return "elu_fwd";
    case Mode::kReluForward: return "relu_fwd";
    case Mode::kPreluForward: return "prelu_fwd";
    case Mode::kRreluForward: return "rrelu_fwd";
    case Mode::kBiasActDropoutForward: return "bias_act_dropout_fwd";
  }
  return "?";
}
const char* DtypeName(leaky_dtype d) {
  switch (d) {
    case LEAKY_F32: return "f32";
    case LEAKY_F64: return "f64";
    case LEAKY_F16: return "f16";
    case LEAKY_BF16: return "bf16";
  }
  return "?";
}
size_t DtypeBytes(leaky_dtype d) { return d == LEAKY_F64 ? 8 : d == LEAKY_F32 ? 4 : 2; }

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

// A page-aligned buffer of random values of both signs, touched (so page
// faults stay out of the timing). Filling 1 GiB costs about a second, and
// Google Benchmark calls each case more than once, so buffers are cached per
// (dtype, size, seed); a new size drops the old ones.
char* CachedBuffer(leaky_dtype dtype, size_t n, uint32_t seed) {
  struct Entry {
    leaky_dtype dtype;
    uint32_t seed;
    Buffer buffer;
  };
  static size_t cached_n = 0;
  static std::vector<Entry> cache;
  if (n != cached_n) {
    cache.clear();
    cached_n = n;
  }
  for (Entry& e : cache) {
    if (e.dtype == dtype && e.seed == seed) return e.buffer.get();
  }
  const size_t bytes = (n * DtypeBytes(dtype) + 4095) / 4096 * 4096;
  Buffer buffer(static_cast<char*>(std::aligned_alloc(4096, bytes)));
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  // A 4 Ki-element random pattern repeated: cheap to fill 1 GiB.
  constexpr size_t kPattern = 4096;
  std::vector<char> pattern(kPattern * DtypeBytes(dtype));
  for (size_t i = 0; i < kPattern; ++i) {
    const float v = normal(rng);
    char* p = pattern.data() + i * DtypeBytes(dtype);
    switch (dtype) {
      case LEAKY_F32: std::memcpy(p, &v, 4); break;
      case LEAKY_F64: { const double d = v; std::memcpy(p, &d, 8); break; }
      case LEAKY_F16: { const auto h = leaky::float16(v); std::memcpy(p, &h, 2); break; }
      case LEAKY_BF16: { const auto h = leaky::bfloat16(v); std::memcpy(p, &h, 2); break; }
    }
  }
  for (size_t offset = 0; offset < bytes; offset += pattern.size()) {
    std::memcpy(buffer.get() + offset, pattern.data(), std::min(pattern.size(), bytes - offset));
  }
  cache.push_back(Entry{dtype, seed, std::move(buffer)});
  return cache.back().buffer.get();
}

int AllThreads() { return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)); }

pthreadpool_t PoolFor(int threads) {
  static std::map<int, pthreadpool_t> pools;
  if (threads <= 1) return nullptr;
  auto& pool = pools[threads];
  if (pool == nullptr) pool = pthreadpool_create(static_cast<size_t>(threads));
  return pool;
}

// ------------------------------------------------------------- the limits
// Non-temporal copy (forward) and non-temporal a+b (backward: two streams
// read, one written), 32-byte AVX2 vectors, split over a pthreadpool.
struct StreamJob {
  const char* a;
  const char* b;
  char* out;
  size_t bytes;
  size_t chunks;
};

void StreamChunk(void* context, size_t chunk) {
  const auto& job = *static_cast<const StreamJob*>(context);
  const size_t per = job.bytes / job.chunks / 64 * 64;
  const size_t begin = chunk * per;
  const size_t end = chunk + 1 == job.chunks ? job.bytes : begin + per;
  size_t i = begin;
  for (; i + 64 <= end; i += 64) {
    __m256i v0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(job.a + i));
    __m256i v1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(job.a + i + 32));
    if (job.b != nullptr) {
      v0 = _mm256_add_epi32(v0, _mm256_load_si256(reinterpret_cast<const __m256i*>(job.b + i)));
      v1 = _mm256_add_epi32(v1, _mm256_load_si256(reinterpret_cast<const __m256i*>(job.b + i + 32)));
    }
    _mm256_stream_si256(reinterpret_cast<__m256i*>(job.out + i), v0);
    _mm256_stream_si256(reinterpret_cast<__m256i*>(job.out + i + 32), v1);
  }
  std::memcpy(job.out + i, job.a + i, end - i);
  _mm_sfence();
}

void MemcpyChunk(void* context, size_t chunk) {
  const auto& job = *static_cast<const StreamJob*>(context);
  const size_t per = job.bytes / job.chunks / 64 * 64;
  const size_t begin = chunk * per;
  const size_t end = chunk + 1 == job.chunks ? job.bytes : begin + per;
  std::memcpy(job.out + begin, job.a + begin, end - begin);
}

void RunSplit(pthreadpool_t pool, void (*fn)(void*, size_t), StreamJob& job, int threads) {
  if (pool == nullptr) {
    fn(&job, 0);
  } else {
    pthreadpool_parallelize_1d(pool, fn, &job, static_cast<size_t>(threads), 0);
  }
}

// ------------------------------------------------------------- one case
struct Case {
  std::string contender;
  leaky_dtype dtype;
  Mode mode;
  size_t n;
  int threads;
};

double SlopeFor(const Case& c) { return c.mode == Mode::kForwardInPlace ? kInPlaceSlope : kSlope; }

// One timed call of a contender; a maker returns an empty Runner when the
// contender cannot run the case (it is then reported as skipped).
using Runner = std::function<void()>;

void Register(const Case& c, std::function<Runner(const Case&, char*, char*, char*)> make) {
  const std::string name = c.contender + "/" + DtypeName(c.dtype) + "/" + ModeName(c.mode) + "/" +
                           std::to_string(c.n) + "/" + std::to_string(c.threads);
  benchmark::RegisterBenchmark(name.c_str(), [c, make](benchmark::State& state) {
    const size_t streams = c.mode == Mode::kBackward ? 3 : 2;
    // In-place cases get their own input buffer (seed 4): they rewrite it.
    char* a = CachedBuffer(c.dtype, c.n, c.mode == Mode::kForwardInPlace ? 4 : 1);
    char* b = CachedBuffer(c.dtype, c.n, 2);
    char* dst = c.mode == Mode::kForwardInPlace ? a : CachedBuffer(c.dtype, c.n, 3);
    Runner run;
    try {
      run = make(c, a, b, dst);
    } catch (const std::exception& e) {
      state.SkipWithError(e.what());
      return;
    }
    if (!run) {
      state.SkipWithError("unsupported");
      return;
    }
    run();  // warm-up: first-touch, JIT, pool wake-up
    for (auto _ : state) {
      run();
      benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * streams * c.n *
                                                 DtypeBytes(c.dtype)));
  })->UseRealTime()->Unit(benchmark::kMicrosecond);
}

Runner MakeLeakyWithStores(const Case& c, char* a, char* b, char* dst, int stream_stores) {
  const leaky_options options{c.threads, stream_stores, nullptr};
  if (c.mode == Mode::kEluForward) {
    return [=] { leaky_elu_forward(c.dtype, c.n, a, dst, 1.0, 1.0, 1.0, &options); };
  }
  if (c.mode == Mode::kReluForward) {
    return [=] { leaky_plain_relu_forward(c.dtype, c.n, a, dst, &options); };
  }
  if (c.mode == Mode::kPreluForward) {
    // The weight: the first element of the dy buffer (any value works).
    return [=] { leaky_prelu_forward(c.dtype, 1, 1, c.n, a, b, dst, &options); };
  }
  if (c.mode == Mode::kRreluForward) {
    const leaky_rrelu_params p{0.125, 1.0 / 3.0, 1, 1, 0};
    return [=] { leaky_rrelu_forward(c.dtype, c.n, a, dst, nullptr, &p, &options); };
  }
  if (c.mode == Mode::kBiasActDropoutForward) {
    constexpr size_t kChannels = 64;
    if (c.n % kChannels != 0) return nullptr;
    auto mask = std::make_shared<std::vector<uint8_t>>((c.n + 7) / 8);
    const leaky_bias_act_params p{LEAKY_ACT_LRELU, 0.2, std::sqrt(2.0), -1.0};
    const leaky_dropout_params dropout{0.1, 1, 0};
    const size_t inner = c.n / kChannels;
    return [=] {
      leaky_bias_act_dropout_forward(c.dtype, 1, kChannels, inner, a, b, dst, mask->data(), &p,
                                     &dropout, &options);
    };
  }
  if (c.mode == Mode::kBackward) {
    return [=] { leaky_relu_backward(c.dtype, c.n, b, a, 0, dst, kSlope, &options); };
  }
  return [=] { leaky_relu_forward(c.dtype, c.n, a, dst, SlopeFor(c), &options); };
}

Runner MakeLeaky(const Case& c, char* a, char* b, char* dst) {
  return MakeLeakyWithStores(c, a, b, dst, -1);
}

Runner MakeLoop(const Case& c, char* a, char* b, char* dst) {
  if (c.dtype != LEAKY_F32 || c.threads != 1) return nullptr;
  const auto* x = reinterpret_cast<const float*>(a);
  const auto* dy = reinterpret_cast<const float*>(b);
  auto* y = reinterpret_cast<float*>(dst);
  const size_t n = c.n;
  const float s = static_cast<float>(SlopeFor(c));
  if (c.mode == Mode::kBackward) {
    return [=] { for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? dy[i] : dy[i] * s; };
  }
  return [=] { for (size_t i = 0; i < n; ++i) y[i] = x[i] > 0 ? x[i] : x[i] * s; };
}

Runner MakeLimit(const Case& c, char* a, char* b, char* dst, bool stream) {
  if (c.mode == Mode::kForwardInPlace) return nullptr;  // the out-of-place limit applies
  if (!stream && c.mode == Mode::kBackward) return nullptr;
  auto job = std::make_shared<StreamJob>(
      StreamJob{a, c.mode == Mode::kBackward ? b : nullptr, dst, c.n * DtypeBytes(c.dtype),
                static_cast<size_t>(c.threads)});
  pthreadpool_t pool = PoolFor(c.threads);
  const int threads = c.threads;
  return [job, pool, threads, stream] {
    RunSplit(pool, stream ? &StreamChunk : &MemcpyChunk, *job, threads);
  };
}

Runner MakeOneDnn(const Case& c, char* a, char* b, char* dst) {
  using dnnl::memory;
  memory::data_type type;
  switch (c.dtype) {
    case LEAKY_F32: type = memory::data_type::f32; break;
    case LEAKY_BF16: type = memory::data_type::bf16; break;
    case LEAKY_F16: type = memory::data_type::f16; break;
    default: return nullptr;  // no f64 eltwise in oneDNN
  }
  omp_set_num_threads(c.threads);
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  auto stream = std::make_shared<dnnl::stream>(engine);
  const memory::desc md({static_cast<memory::dim>(c.n)}, type, memory::format_tag::a);
  if (c.mode == Mode::kPreluForward) {
    const memory::desc weight_md({1}, type, memory::format_tag::a);
    const dnnl::prelu_forward::primitive_desc pd(
        dnnl::prelu_forward::desc(dnnl::prop_kind::forward_training, md, weight_md), engine);
    memory src(md, engine, a), weight(weight_md, engine, b), out(md, engine, dst);
    auto primitive = std::make_shared<dnnl::prelu_forward>(pd);
    const int threads = c.threads;
    return [=] {
      omp_set_num_threads(threads);
      primitive->execute(*stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weight},
                                   {DNNL_ARG_DST, out}});
      stream->wait();
    };
  }
  if (c.mode == Mode::kRreluForward || c.mode == Mode::kBiasActDropoutForward) return nullptr;
  const dnnl::algorithm algorithm =
      c.mode == Mode::kEluForward ? dnnl::algorithm::eltwise_elu : dnnl::algorithm::eltwise_relu;
  const float alpha = c.mode == Mode::kEluForward    ? 1.0f
                      : c.mode == Mode::kReluForward ? 0.0f
                                                     : static_cast<float>(SlopeFor(c));
  const dnnl::eltwise_forward::primitive_desc forward_pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_training, algorithm, md, alpha),
      engine);
  memory src(md, engine, a), diff(md, engine, b), out(md, engine, dst);
  const int threads = c.threads;
  if (c.mode == Mode::kBackward) {
    const dnnl::eltwise_backward::primitive_desc backward_pd(
        dnnl::eltwise_backward::desc(dnnl::algorithm::eltwise_relu, md, md,
                                     static_cast<float>(kSlope)),
        engine, forward_pd);
    auto primitive = std::make_shared<dnnl::eltwise_backward>(backward_pd);
    return [=] {
      omp_set_num_threads(threads);
      primitive->execute(*stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_DST, diff},
                                   {DNNL_ARG_DIFF_SRC, out}});
      stream->wait();
    };
  }
  auto primitive = std::make_shared<dnnl::eltwise_forward>(forward_pd);
  return [=] {
    omp_set_num_threads(threads);
    primitive->execute(*stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, out}});
    stream->wait();
  };
}

Runner MakeXnnpack(const Case& c, char* a, char* b, char* dst) {
  (void)b;
  if (c.mode == Mode::kBackward || (c.dtype != LEAKY_F32 && c.dtype != LEAKY_F16)) return nullptr;
  static const bool initialized = xnn_initialize(nullptr) == xnn_status_success;
  if (!initialized) return nullptr;
  xnn_operator_t op = nullptr;
  const xnn_status created =
      c.dtype == LEAKY_F32
          ? xnn_create_leaky_relu_nc_f32(1, 1, 1, static_cast<float>(SlopeFor(c)), 0, &op)
          : xnn_create_leaky_relu_nc_f16(1, 1, 1, static_cast<float>(SlopeFor(c)), 0, &op);
  if (created != xnn_status_success) return nullptr;
  std::shared_ptr<xnn_operator> owner(op, xnn_delete_operator);
  pthreadpool_t pool = PoolFor(c.threads);
  const xnn_status setup =
      c.dtype == LEAKY_F32
          ? xnn_setup_leaky_relu_nc_f32(op, c.n, reinterpret_cast<const float*>(a),
                                        reinterpret_cast<float*>(dst), pool)
          : xnn_setup_leaky_relu_nc_f16(op, c.n, a, dst, pool);
  if (setup != xnn_status_success) return nullptr;
  return [owner, pool] { xnn_run_operator(owner.get(), pool); };
}

void RegisterAll(bool quick) {
  const std::vector<int> thread_counts = {1, AllThreads()};
  std::vector<size_t> f32_sizes;
  for (size_t n = 1024; n <= (size_t{1} << 28); n *= 4) f32_sizes.push_back(n);
  const std::vector<size_t> key_sizes = {4096, size_t{1} << 20, size_t{1} << 26};
  struct Contender {
    const char* name;
    std::function<Runner(const Case&, char*, char*, char*)> make;
  };
  const std::vector<Contender> contenders = {
      {"leaky", MakeLeaky},
      // The store policy's evidence: forced cached and forced streaming stores.
      {"leaky_cached", [](const Case& c, char* a, char* b, char* d) { return MakeLeakyWithStores(c, a, b, d, 0); }},
      {"leaky_stream", [](const Case& c, char* a, char* b, char* d) { return MakeLeakyWithStores(c, a, b, d, 1); }},
      {"onednn", MakeOneDnn},
      {"xnnpack", MakeXnnpack},
      {"loop", MakeLoop},
      {"memcpy", [](const Case& c, char* a, char* b, char* d) { return MakeLimit(c, a, b, d, false); }},
      {"stream_copy", [](const Case& c, char* a, char* b, char* d) { return MakeLimit(c, a, b, d, true); }},
  };
  for (leaky_dtype dtype : {LEAKY_F32, LEAKY_BF16}) {
    for (Mode mode : {Mode::kEluForward, Mode::kReluForward}) {
      for (size_t n : key_sizes) {
        for (int threads : thread_counts) {
          Register(Case{"leaky", dtype, mode, n, threads}, MakeLeaky);
          Register(Case{"onednn", dtype, mode, n, threads}, MakeOneDnn);
        }
      }
    }
  }
  // The family's forward ops on f32, each with its same-run limit.
  for (Mode mode : {Mode::kPreluForward, Mode::kRreluForward, Mode::kBiasActDropoutForward}) {
    for (size_t n : key_sizes) {
      for (int threads : thread_counts) {
        Register(Case{"leaky", LEAKY_F32, mode, n, threads}, MakeLeaky);
        if (mode == Mode::kPreluForward) Register(Case{"onednn", LEAKY_F32, mode, n, threads}, MakeOneDnn);
        Register(Case{"stream_copy", LEAKY_F32, mode, n, threads}, contenders.back().make);
      }
    }
  }
  for (leaky_dtype dtype : {LEAKY_F32, LEAKY_F16, LEAKY_BF16, LEAKY_F64}) {
    for (Mode mode : {Mode::kForward, Mode::kForwardInPlace, Mode::kBackward}) {
      const bool sweep = dtype == LEAKY_F32 && mode == Mode::kForward && !quick;
      // f32 in place also in cache, where waking the pool costs the most.
      std::vector<size_t> sizes = sweep ? f32_sizes : key_sizes;
      if (dtype == LEAKY_F32 && mode == Mode::kForwardInPlace && !quick)
        sizes.insert(sizes.begin() + 1, {size_t{1} << 16, size_t{1} << 18});
      for (size_t n : sizes) {
        for (int threads : thread_counts) {
          for (const Contender& contender : contenders) {
            Case c{contender.name, dtype, mode, n, threads};
            // Cheap pre-checks so unsupported cases are not even registered.
            if (std::string(contender.name).starts_with("leaky_") && !sweep) continue;
            if (std::string(contender.name) == "loop" && (dtype != LEAKY_F32 || threads != 1)) continue;
            if (std::string(contender.name) == "xnnpack" &&
                (mode == Mode::kBackward || (dtype != LEAKY_F32 && dtype != LEAKY_F16))) continue;
            if (std::string(contender.name) == "onednn" && dtype == LEAKY_F64) continue;
            if (std::string(contender.name) == "memcpy" && mode != Mode::kForward) continue;
            if (std::string(contender.name) == "stream_copy" && mode == Mode::kForwardInPlace) continue;
            Register(c, contender.make);
          }
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0) {
      quick = true;
    } else {
      args.push_back(argv[i]);
    }
  }
  int count = static_cast<int>(args.size());
  benchmark::Initialize(&count, args.data());
  RegisterAll(quick);
  benchmark::AddCustomContext("leaky_simd_target", leaky_simd_target());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

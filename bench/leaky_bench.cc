// leaky-bench: GB/s (bytes read + bytes written) of this library, oneDNN,
// XNNPACK, a plain loop and two limits (memcpy, a non-temporal streaming copy
// of the same bytes), for sizes 1 Ki .. 256 Mi elements, f32/f16/bf16/f64,
// forward out-of-place, forward in-place and backward, 1 thread and all.
//
// Benchmark names are contender/dtype/mode/elements/threads. The timing
// method (docs/design.md, "Performance targets") is this program's own, not
// Google Benchmark's, because Google Benchmark runs each benchmark in one
// block and drift between blocks on a shared machine became a ratio:
// benchmarks that share buffers (a group: one element count, one storage
// width) run in rounds, A B C A B C ..., each sample preceded by a pause
// until every other thread of the process sleeps and by one untimed call;
// the rounds are split into passes over all groups, so a benchmark's
// samples come from the whole run, not from one stretch of it.
// The JSON holds every round's sample; `leaky bench` turns it into medians,
// spreads, paired ratios and verdicts.
#include <dirent.h>
#include <fcntl.h>
#include <immintrin.h>
#include <pthreadpool.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <oneapi/dnnl/dnnl.hpp>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "leaky/eight_bit.h"
#include "leaky/family.h"
#include "leaky/leaky.hpp"

extern "C" void omp_set_num_threads(int);

namespace {

constexpr double kSlope = 0.2;
// In-place cases run the op on their own output again and again; slope 1
// keeps the data (and so the work) the same every time, where 0.2 would
// shrink negatives into subnormals within a few hundred runs.
constexpr double kInPlaceSlope = 1.0;

// LeakyReLU's three modes, the family's other rows (leaky/family.h) and
// the 8-bit forms.
enum class Mode {
  kForward,
  kForwardInPlace,
  kBackward,
  kFamily,                   // a row of leaky/family.h besides LeakyReLU's: Case::row
  kQu8Forward,               // LeakyReLU(0.1) on qu8 (eight_bit.h): type "qu8", mode "fwd"
  kQs8Forward,               // the same on qs8 (zero points shifted by 128): type "qs8", mode "fwd"
  kQu8Epilogue,              // the conv epilogue: int32 [1, 64 channels, inner] + bias, LeakyReLU,
                             // per-channel requantization to qu8: type "qu8", mode "epilogue"
  kQu8EpilogueChannelsLast,  // the same channels-last, [n / 64, 64 channels, 1]:
                             // mode "epilogue_channels_last"
};

// The family's rows, from the list itself: a row added to leaky/family.h
// stops this file's compilation until kFamilyCalls below calls its op.
struct FamilyRowName {
  std::string_view op;
  bool backward;
};
#define LEAKY_BENCH_FAMILY_ROW(op, direction, ...) \
  FamilyRowName{#op, std::string_view(#direction) == "backward"},
constexpr FamilyRowName kFamilyRows[] = {LEAKY_FAMILY(LEAKY_BENCH_FAMILY_ROW)};
#undef LEAKY_BENCH_FAMILY_ROW

// A row's mode name: elu_fwd, prelu_bwd, ...
std::string FamilyModeName(const FamilyRowName& row) {
  return std::string(row.op) + (row.backward ? "_bwd" : "_fwd");
}

const char* ModeName(Mode m) {
  switch (m) {
    case Mode::kForward: return "fwd";
    case Mode::kForwardInPlace: return "fwd_inplace";
    case Mode::kBackward: return "bwd";
    case Mode::kFamily: return "family";
    case Mode::kQu8Forward: return "fwd";
    case Mode::kQs8Forward: return "fwd";
    case Mode::kQu8Epilogue: return "epilogue";
    case Mode::kQu8EpilogueChannelsLast:
      return "epilogue_channels_last";
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

// qu8's parameters: input scale 0.05 around 128, output 0.04 around 100
// (XNNPACK takes them as floats: the same values), LeakyReLU(0.1).
constexpr float kQu8InputScale = 0.05f, kQu8OutputScale = 0.04f;
constexpr uint8_t kQu8InputZero = 128, kQu8OutputZero = 100;
constexpr float kQu8Slope = 0.1f;

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, FreeDeleter>;

// A page-aligned buffer of random values of both signs, touched (so page
// faults stay out of the timing), one per (dtype, seed) within a group: the
// group's contenders share them, and ClearBuffers() drops them between
// groups (a 256 Mi f32 group alone holds 3 GiB).
struct BufferEntry {
  leaky_dtype dtype;
  uint32_t seed;
  Buffer buffer;
};
std::vector<BufferEntry>& BufferCache() {
  static std::vector<BufferEntry> cache;
  return cache;
}
void ClearBuffers() { BufferCache().clear(); }

char* CachedBuffer(leaky_dtype dtype, size_t n, uint32_t seed) {
  std::vector<BufferEntry>& cache = BufferCache();
  for (BufferEntry& e : cache) {
    if (e.dtype == dtype && e.seed == seed) return e.buffer.get();
  }
  const size_t bytes = (n * DtypeBytes(dtype) + 4095) / 4096 * 4096;
  Buffer buffer(static_cast<char*>(std::aligned_alloc(4096, bytes)));
  if (buffer == nullptr) throw std::runtime_error("out of memory for " + std::to_string(bytes) + " bytes");
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
  cache.push_back(BufferEntry{dtype, seed, std::move(buffer)});
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

// The epilogue's limit: reads 4 bytes and writes 1 per element (bytes is
// the output's), narrowing with two saturating packs per 32 output bytes.
void StreamNarrowChunk(void* context, size_t chunk) {
  const auto& job = *static_cast<const StreamJob*>(context);
  const size_t per = job.bytes / job.chunks / 64 * 64;
  const size_t begin = chunk * per;
  const size_t end = chunk + 1 == job.chunks ? job.bytes : begin + per;
  const auto* in = reinterpret_cast<const __m256i*>(job.a);
  size_t i = begin;
  for (; i + 32 <= end; i += 32) {
    const __m256i v0 = _mm256_load_si256(in + i / 8), v1 = _mm256_load_si256(in + i / 8 + 1);
    const __m256i v2 = _mm256_load_si256(in + i / 8 + 2), v3 = _mm256_load_si256(in + i / 8 + 3);
    const __m256i narrow = _mm256_packs_epi16(_mm256_packs_epi32(v0, v1), _mm256_packs_epi32(v2, v3));
    _mm256_stream_si256(reinterpret_cast<__m256i*>(job.out + i), narrow);
  }
  for (; i < end; ++i) job.out[i] = job.a[4 * i];
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
  int row = -1;  // Mode::kFamily's row of kFamilyRows
};

double SlopeFor(const Case& c) { return c.mode == Mode::kForwardInPlace ? kInPlaceSlope : kSlope; }

// One call of a contender; a maker returns an empty Runner when the
// contender cannot run the case (it is then reported as unsupported).
using Runner = std::function<void()>;
using Maker = std::function<Runner(const Case&, char*, char*, char*)>;

// The element type's name and bytes: qu8 and qs8 cases carry f32 buffers
// (random bytes) and are named and counted as one byte per element.
// The epilogue's cases carry f32 buffers too (int32 accumulators: random
// bits) and write one byte per element.
bool IsEpilogue(const Case& c) {
  return c.mode == Mode::kQu8Epilogue || c.mode == Mode::kQu8EpilogueChannelsLast;
}
bool IsEightBit(const Case& c) {
  return c.mode == Mode::kQu8Forward || c.mode == Mode::kQs8Forward || IsEpilogue(c);
}
const char* TypeName(const Case& c) {
  return c.mode == Mode::kQs8Forward ? "qs8" : IsEightBit(c) ? "qu8" : DtypeName(c.dtype);
}
size_t ElementBytes(const Case& c) { return IsEightBit(c) ? 1 : DtypeBytes(c.dtype); }

// elu_fwd, prelu_bwd, ... for the family's rows; LeakyReLU's fwd,
// fwd_inplace, bwd; the 8-bit forms' fwd and epilogue.
std::string ModeOf(const Case& c) {
  if (c.mode != Mode::kFamily) return ModeName(c.mode);
  return FamilyModeName(kFamilyRows[c.row]);
}
// Whether the case reads two streams of n elements (x and dy).
bool ReadsTwo(const Case& c) {
  return c.mode == Mode::kBackward || (c.mode == Mode::kFamily && kFamilyRows[c.row].backward);
}

std::string Name(const Case& c) {
  return c.contender + "/" + TypeName(c) + "/" + ModeOf(c) + "/" + std::to_string(c.n) + "/" +
         std::to_string(c.threads);
}

// A library call's status: a refused call is an error of the case, never a
// fast sample (the first, untimed call of each case is checked in RunGroup;
// a later refusal ends the run).
void Expect(leaky_status status) {
  if (status != LEAKY_OK) throw std::runtime_error(leaky_last_error());
}

// Each row of leaky/family.h as the bench calls it: x is a, dy (and the
// per-channel operands: its first elements) b, the first output dst. The
// channel ops view the n elements as [1, 64, n / 64], except PReLU's
// forward: one shared slope ([1, 1, n]), as oneDNN's broadcast weight.
// ELU with alpha 1, ReLU and PReLU's forward meet oneDNN's same algorithms;
// RReLU and dropout train (seed 1), dropout with p = 0.1.
struct FamilyCall {
  leaky_dtype t;
  size_t n, inner;  // inner: n / kFamilyChannels
  bool backward;
  const char *a, *b;
  char* dst;
  std::shared_ptr<std::vector<char>> side;  // db, dweight or the mask; each runner keeps it
  leaky_options o;
};
constexpr size_t kFamilyChannels = 64;
const leaky_bias_act_params kBenchAct{LEAKY_ACT_LRELU, 0.2, 1.4142135623730951, -1.0};
const leaky_dropout_params kBenchDropout{0.1, 1, 0};
const leaky_rrelu_params kBenchRrelu{0.125, 1.0 / 3.0, 1, 1, 0};

Runner CallRelu(const FamilyCall& f) {
  if (f.backward)
    return [f] { Expect(leaky_plain_relu_backward(f.t, f.n, f.b, f.a, f.dst, &f.o)); };
  return [f] { Expect(leaky_plain_relu_forward(f.t, f.n, f.a, f.dst, &f.o)); };
}
Runner CallElu(const FamilyCall& f) {
  if (f.backward) {
    return [f] { Expect(leaky_elu_backward(f.t, f.n, f.b, f.a, 0, f.dst, 1.0, 1.0, 1.0, &f.o)); };
  }
  return [f] { Expect(leaky_elu_forward(f.t, f.n, f.a, f.dst, 1.0, 1.0, 1.0, &f.o)); };
}
Runner CallPrelu(const FamilyCall& f) {
  if (f.backward) {
    return [f] {
      Expect(leaky_prelu_backward(f.t, 1, kFamilyChannels, f.inner, f.b, f.a, f.b, f.dst,
                                  f.side->data(), &f.o));
    };
  }
  return [f] { Expect(leaky_prelu_forward(f.t, 1, 1, f.n, f.a, f.b, f.dst, &f.o)); };
}
Runner CallRrelu(const FamilyCall& f) {
  if (f.backward) {
    return [f] { Expect(leaky_rrelu_backward(f.t, f.n, f.b, f.a, f.dst, &kBenchRrelu, &f.o)); };
  }
  return [f] { Expect(leaky_rrelu_forward(f.t, f.n, f.a, f.dst, nullptr, &kBenchRrelu, &f.o)); };
}
Runner CallBiasAct(const FamilyCall& f) {
  if (f.backward) {
    return [f] {
      Expect(leaky_bias_act_backward(f.t, 1, kFamilyChannels, f.inner, f.b, f.a, f.b, f.dst,
                                     f.side->data(), &kBenchAct, &f.o));
    };
  }
  return [f] {
    Expect(leaky_bias_act_forward(f.t, 1, kFamilyChannels, f.inner, f.a, f.b, f.dst, &kBenchAct,
                                  &f.o));
  };
}
Runner CallBiasActDropout(const FamilyCall& f) {
  const auto forward = [f] {
    Expect(leaky_bias_act_dropout_forward(f.t, 1, kFamilyChannels, f.inner, f.a, f.b, f.dst,
                                          reinterpret_cast<uint8_t*>(f.side->data()), &kBenchAct,
                                          &kBenchDropout, &f.o));
  };
  if (!f.backward) return forward;
  forward();  // the forward's mask: the kept share the backward meets in training
  return [f] {
    Expect(leaky_bias_act_dropout_backward(f.t, 1, kFamilyChannels, f.inner, f.b, f.a, f.b,
                                           reinterpret_cast<const uint8_t*>(f.side->data()), f.dst,
                                           nullptr, &kBenchAct, kBenchDropout.p, &f.o));
  };
}

// The one dispatch from an op's name: a row of leaky/family.h whose op has
// no entry here stops this file's compilation (LeakyReLU's rows are the
// modes fwd, fwd_inplace and bwd).
struct FamilyCallOf {
  std::string_view op;
  Runner (*make)(const FamilyCall&);
  bool channels;  // viewed as [1, 64, n / 64] (PReLU's forward only in its backward)
};
constexpr FamilyCallOf kFamilyCalls[] = {
    {"relu", CallRelu, false},       {"elu", CallElu, false},
    {"prelu", CallPrelu, true},      {"rrelu", CallRrelu, false},
    {"bias_act", CallBiasAct, true}, {"bias_act_dropout", CallBiasActDropout, true}};
constexpr const FamilyCallOf* FindFamilyCall(std::string_view op) {
  for (const FamilyCallOf& call : kFamilyCalls) {
    if (call.op == op) return &call;
  }
  return nullptr;
}
constexpr bool EveryFamilyRowCalled() {
  for (const FamilyRowName& row : kFamilyRows) {
    if (row.op != "leaky_relu" && FindFamilyCall(row.op) == nullptr) return false;
  }
  return true;
}
static_assert(EveryFamilyRowCalled(), "a row of leaky/family.h that kFamilyCalls does not call");

Runner MakeFamily(const Case& c, char* a, char* b, char* dst, const leaky_options& options) {
  const FamilyRowName row = kFamilyRows[c.row];
  const FamilyCallOf* call = FindFamilyCall(row.op);
  if (call == nullptr) return nullptr;
  if (call->channels && c.n % kFamilyChannels != 0) return nullptr;
  const size_t side_bytes = std::max(kFamilyChannels * 8, (c.n + 7) / 8);
  return call->make(FamilyCall{c.dtype, c.n, c.n / kFamilyChannels, row.backward, a, b, dst,
                               std::make_shared<std::vector<char>>(side_bytes), options});
}

Runner MakeLeakyWithStores(const Case& c, char* a, char* b, char* dst, int stream_stores) {
  const leaky_options options{c.threads, stream_stores, nullptr};
  if (c.mode == Mode::kFamily) return MakeFamily(c, a, b, dst, options);
  if (c.mode == Mode::kBackward) {
    return [=] { Expect(leaky_relu_backward(c.dtype, c.n, b, a, 0, dst, kSlope, &options)); };
  }
  if (c.mode == Mode::kQu8Forward || c.mode == Mode::kQs8Forward) {
    // qs8: the same real values as qu8's (each zero point 128 lower).
    const bool qs8 = c.mode == Mode::kQs8Forward;
    leaky_q8_params q = leaky_q8_params_init(qs8 ? LEAKY_QS8 : LEAKY_QU8);
    q.input = {kQu8InputScale, kQu8InputZero - (qs8 ? 128 : 0)};
    q.output = {kQu8OutputScale, kQu8OutputZero - (qs8 ? 128 : 0)};
    return [=] { Expect(leaky_q8_leaky_relu_forward(&q, c.n, a, dst, kQu8Slope, &options)); };
  }
  if (IsEpilogue(c)) {
    // Accumulators of random bits (any int32), 64 channels, the bias the
    // first 64 words of b; multipliers that spread the outputs over the
    // range (2^-24 about), LeakyReLU(0.1), zero point 100; rows of one
    // channel or channels-last.
    constexpr size_t kChannels = 64;
    if (c.n % kChannels != 0) return nullptr;
    auto positive = std::make_shared<std::vector<double>>(kChannels);
    auto negative = std::make_shared<std::vector<double>>(kChannels);
    for (size_t k = 0; k < kChannels; ++k) {
      (*positive)[k] = std::ldexp(1.0 + static_cast<double>(k) / kChannels, -24);
      (*negative)[k] = (*positive)[k] * 0.1;
    }
    leaky_q8_bias_act_params p = leaky_q8_bias_act_params_init(LEAKY_QU8);
    p.output_zero_point = kQu8OutputZero;
    const bool last = c.mode == Mode::kQu8EpilogueChannelsLast;
    const size_t outer = last ? c.n / kChannels : 1, inner = last ? 1 : c.n / kChannels;
    return [=] {
      Expect(leaky_q8_bias_act_forward(
          &p, outer, kChannels, inner, reinterpret_cast<const int32_t*>(a),
          reinterpret_cast<const int32_t*>(b), positive->data(), negative->data(), dst, &options));
    };
  }
  return [=] { Expect(leaky_relu_forward(c.dtype, c.n, a, dst, SlopeFor(c), &options)); };
}

Runner MakeLeaky(const Case& c, char* a, char* b, char* dst) {
  return MakeLeakyWithStores(c, a, b, dst, -1);
}

Runner MakeLeakyOnPthreadpool(const Case& c, char* a, char*, char* dst) {
  if (c.threads < 2 || c.mode != Mode::kForward) return nullptr;
  auto executor = std::make_shared<leaky_executor>(
      leaky_executor{nullptr, nullptr, PoolFor(c.threads), c.threads});
  return [c, a, dst, executor] {
    const leaky_options options{c.threads, -1, executor.get()};
    Expect(leaky_relu_forward(c.dtype, c.n, a, dst, SlopeFor(c), &options));
  };
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
  if (!stream && ReadsTwo(c)) return nullptr;
  auto job = std::make_shared<StreamJob>(StreamJob{
      a, ReadsTwo(c) ? b : nullptr, dst, c.n * ElementBytes(c), static_cast<size_t>(c.threads)});
  pthreadpool_t pool = PoolFor(c.threads);
  const int threads = c.threads;
  if (IsEpilogue(c)) {
    if (!stream) return nullptr;
    return [job, pool, threads] { RunSplit(pool, &StreamNarrowChunk, *job, threads); };
  }
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
  const std::string mode = ModeOf(c);
  if (mode == "prelu_fwd") {
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
  // The eltwise algorithms of the rows above: LeakyReLU's, ELU's and ReLU's.
  if (c.mode == Mode::kFamily && mode != "elu_fwd" && mode != "relu_fwd") return nullptr;
  const dnnl::algorithm algorithm =
      mode == "elu_fwd" ? dnnl::algorithm::eltwise_elu : dnnl::algorithm::eltwise_relu;
  const float alpha = mode == "elu_fwd"    ? 1.0f
                      : mode == "relu_fwd" ? 0.0f
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

// A set-up XNNPACK operator's call; its status checked like this
// library's (Expect).
Runner RunXnnpackOperator(std::shared_ptr<xnn_operator> owner, pthreadpool_t pool) {
  return [owner, pool] {
    if (xnn_run_operator(owner.get(), pool) != xnn_status_success) {
      throw std::runtime_error("XNNPACK's operator failed");
    }
  };
}

Runner MakeXnnpack(const Case& c, char* a, char* b, char* dst) {
  (void)b;
  static const bool initialized = xnn_initialize(nullptr) == xnn_status_success;
  if (!initialized) return nullptr;
  xnn_operator_t op = nullptr;
  if (c.mode == Mode::kQu8Forward) {
    if (xnn_create_leaky_relu_nc_qu8(1, 1, 1, kQu8Slope, kQu8InputZero, kQu8InputScale,
                                     kQu8OutputZero, kQu8OutputScale, 0, 255, 0,
                                     &op) != xnn_status_success) {
      return nullptr;
    }
    std::shared_ptr<xnn_operator> owner(op, xnn_delete_operator);
    pthreadpool_t pool = PoolFor(c.threads);
    if (xnn_setup_leaky_relu_nc_qu8(op, c.n, reinterpret_cast<const uint8_t*>(a),
                                    reinterpret_cast<uint8_t*>(dst), pool) != xnn_status_success) {
      return nullptr;
    }
    return RunXnnpackOperator(owner, pool);
  }
  if (c.mode == Mode::kBackward || c.mode == Mode::kFamily ||
      (c.dtype != LEAKY_F32 && c.dtype != LEAKY_F16)) {
    return nullptr;
  }
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
  return RunXnnpackOperator(owner, pool);
}

// ------------------------------------------------------------- the list
struct Entry {
  Case c;
  Maker make;
};

std::vector<Entry> AllBenchmarks(bool quick) {
  std::vector<Entry> entries;
  auto add = [&entries](const Case& c, const Maker& make) { entries.push_back(Entry{c, make}); };
  const std::vector<int> thread_counts = {1, AllThreads()};
  std::vector<size_t> f32_sizes;
  for (size_t n = 1024; n <= (size_t{1} << 28); n *= 4) f32_sizes.push_back(n);
  const std::vector<size_t> key_sizes = {4096, size_t{1} << 20, size_t{1} << 26};
  struct Contender {
    const char* name;
    Maker make;
  };
  const std::vector<Contender> contenders = {
      {"leaky", MakeLeaky},
      // The store policy's evidence: forced cached and forced streaming stores.
      {"leaky_cached",
       [](const Case& c, char* a, char* b, char* d) { return MakeLeakyWithStores(c, a, b, d, 0); }},
      {"leaky_stream",
       [](const Case& c, char* a, char* b, char* d) { return MakeLeakyWithStores(c, a, b, d, 1); }},
      // The pool's hand-off isolated (issue 46, item 1): this library's
      // kernel and split on the pthreadpool XNNPACK runs on (the executor
      // of leaky.h), beside the same call on the library's own pool.
      {"leaky_pthreadpool", MakeLeakyOnPthreadpool},
      {"onednn", MakeOneDnn},
      {"xnnpack", MakeXnnpack},
      {"loop", MakeLoop},
      {"memcpy",
       [](const Case& c, char* a, char* b, char* d) { return MakeLimit(c, a, b, d, false); }},
      {"stream_copy",
       [](const Case& c, char* a, char* b, char* d) { return MakeLimit(c, a, b, d, true); }},
  };
  // The family's rows besides LeakyReLU's (leaky/family.h), on f32, each
  // with its same-run limit (two streams read for a backward); the forwards
  // oneDNN has (ELU, ReLU, PReLU) against it, ELU's and ReLU's on bf16 too.
  const Maker stream_copy = contenders.back().make;
  for (int row = 0; row < static_cast<int>(std::size(kFamilyRows)); ++row) {
    if (kFamilyRows[row].op == "leaky_relu") continue;  // the modes fwd, fwd_inplace, bwd
    const std::string mode = FamilyModeName(kFamilyRows[row]);
    const bool both_types = mode == "elu_fwd" || mode == "relu_fwd";
    const bool onednn = both_types || mode == "prelu_fwd";
    for (leaky_dtype dtype : {LEAKY_F32, LEAKY_BF16}) {
      if (dtype == LEAKY_BF16 && !both_types) continue;
      for (size_t n : key_sizes) {
        for (int threads : thread_counts) {
          add(Case{"leaky", dtype, Mode::kFamily, n, threads, row}, MakeLeaky);
          if (onednn) add(Case{"onednn", dtype, Mode::kFamily, n, threads, row}, MakeOneDnn);
          if (!both_types)
            add(Case{"stream_copy", dtype, Mode::kFamily, n, threads, row}, stream_copy);
        }
      }
    }
  }
  // qu8 LeakyReLU against XNNPACK's qu8 operator and the limit of its bytes.
  for (size_t n : {size_t{1} << 16, size_t{1} << 20, size_t{1} << 26}) {
    for (int threads : thread_counts) {
      add(Case{"leaky", LEAKY_F32, Mode::kQu8Forward, n, threads}, MakeLeaky);
      add(Case{"xnnpack", LEAKY_F32, Mode::kQu8Forward, n, threads}, MakeXnnpack);
      add(Case{"stream_copy", LEAKY_F32, Mode::kQu8Forward, n, threads}, stream_copy);
    }
  }
  // qs8 LeakyReLU against the limit (Debian's XNNPACK has no qs8 LeakyReLU).
  for (size_t n : {size_t{1} << 16, size_t{1} << 26}) {
    for (int threads : thread_counts) {
      add(Case{"leaky", LEAKY_F32, Mode::kQs8Forward, n, threads}, MakeLeaky);
      add(Case{"stream_copy", LEAKY_F32, Mode::kQs8Forward, n, threads}, stream_copy);
    }
  }
  // The conv epilogue (int32 to qu8) against the limit of reading 4 bytes
  // and writing 1 per element.
  for (Mode mode : {Mode::kQu8Epilogue, Mode::kQu8EpilogueChannelsLast}) {
    for (size_t n : {size_t{1} << 20, size_t{1} << 26}) {
      for (int threads : thread_counts) {
        add(Case{"leaky", LEAKY_F32, mode, n, threads}, MakeLeaky);
        add(Case{"stream_copy", LEAKY_F32, mode, n, threads}, stream_copy);
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
            const std::string name = contender.name;
            // Cheap pre-checks so unsupported cases are not even listed.
            if (name.starts_with("leaky_") && !sweep) continue;
            if (name == "loop" && (dtype != LEAKY_F32 || threads != 1)) continue;
            if (name == "leaky_pthreadpool" && threads < 2) continue;
            if (name == "xnnpack" &&
                (mode == Mode::kBackward || (dtype != LEAKY_F32 && dtype != LEAKY_F16))) continue;
            if (name == "onednn" && dtype == LEAKY_F64) continue;
            if (name == "memcpy" && mode != Mode::kForward) continue;
            if (name == "stream_copy" && mode == Mode::kForwardInPlace) continue;
            add(Case{contender.name, dtype, mode, n, threads}, contender.make);
          }
        }
      }
    }
  }
  return entries;
}

// A group: the benchmarks that run interleaved. Every ratio `leaky bench`
// checks compares benchmarks of one group (the limit and the peers of a case;
// bf16 against XNNPACK's f16; all threads against one), so its samples pair
// by round; one element count and one storage width keep a group's buffers
// to at most 3 GiB.
std::string GroupOf(const Case& c) {
  const char* width = c.mode == Mode::kQu8Epilogue               ? "qu8_epilogue"
                      : c.mode == Mode::kQu8EpilogueChannelsLast ? "qu8_epilogue_channels_last"
                      : c.mode == Mode::kQu8Forward              ? "qu8"
                      : c.mode == Mode::kQs8Forward              ? "qs8"
                      : c.dtype == LEAKY_F32                     ? "f32"
                      : c.dtype == LEAKY_F64                     ? "f64"
                                                                 : "f16+bf16";
  return std::string(width) + "/" + std::to_string(c.n);
}

// ------------------------------------------------------------- the pause
using Clock = std::chrono::steady_clock;

// Why a pause, and why this one: after a call, the other libraries' workers
// spin before they sleep (libgomp's, oneDNN's OpenMP team, up to
// GOMP_SPINCOUNT = 300000 pause loops, milliseconds on this CPU;
// pthreadpool's, XNNPACK's and the limits', a million; this library's pool
// LEAKY_POOL_SPIN_US, 50 us by default). A sample taken while they spin
// shares the cores with them, and which contender ran before decided the
// result. Rather than a fixed length that one library's defaults could
// outgrow, the pause lasts until every other thread of this process is
// asleep, which /proc shows: a spinning thread is 'R' (running or runnable),
// one waiting on a futex 'S'. The floor covers a worker that has not yet
// begun to spin; the cap keeps a thread that never sleeps (OMP_WAIT_POLICY=
// active) from stalling the run, and is reported.
constexpr std::chrono::microseconds kPauseFloor{1000};
constexpr std::chrono::microseconds kPausePoll{200};
constexpr std::chrono::milliseconds kPauseCap{500};

bool OtherThreadsAsleep() {
  static const long self = syscall(SYS_gettid);
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return true;
  bool asleep = true;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.' || std::atol(entry->d_name) == self) continue;
    char path[96];
    std::snprintf(path, sizeof(path), "/proc/self/task/%s/stat", entry->d_name);
    const int fd = open(path, O_RDONLY);
    if (fd < 0) continue;  // the thread has ended
    char text[512];
    const ssize_t got = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (got <= 0) continue;
    text[got] = '\0';
    // "tid (comm) S ...": comm may hold spaces and parentheses, the state
    // follows the last ')'.
    const char* paren = std::strrchr(text, ')');
    if (paren != nullptr && paren[1] == ' ' && paren[2] == 'R') {
      asleep = false;
      break;
    }
  }
  closedir(dir);
  return asleep;
}

// Waits as above; returns the wait in microseconds, and whether it hit the cap.
double Pause(bool* capped) {
  const Clock::time_point start = Clock::now();
  std::this_thread::sleep_for(kPauseFloor);
  *capped = false;
  while (!OtherThreadsAsleep()) {
    if (Clock::now() - start > kPauseCap) {
      *capped = true;
      break;
    }
    std::this_thread::sleep_for(kPausePoll);
  }
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

// ------------------------------------------------------------- the machine
// How busy the machine is, from /proc: the 1-minute load average (for the
// record), the threads runnable at the start, and over an interval the
// share of all CPUs' time that other processes used and that the
// hypervisor stole (`leaky bench` warns on the last three).
double LoadAverage() {
  std::ifstream file("/proc/loadavg");
  double load = NAN;
  file >> load;
  return load;
}

// Threads other than this one that were runnable, averaged over `span`.
// /proc/loadavg's fourth field ("2/90") counts the runnable threads at the
// moment it is read, this one included. Unlike the 1-minute load average,
// it forgets a process that has ended: right after a previous bench run,
// the load average still read 1.9 on an idle machine and warned.
double RunnableOthers(std::chrono::milliseconds span) {
  const Clock::time_point end = Clock::now() + span;
  double sum = 0;
  int reads = 0;
  do {
    std::ifstream file("/proc/loadavg");
    double skip = 0;
    long running = 0;
    if (file >> skip >> skip >> skip >> running) {
      sum += static_cast<double>(std::max(0L, running - 1));
      ++reads;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (Clock::now() < end);
  return reads > 0 ? sum / reads : NAN;
}

struct CpuTimes {
  double total = 0, busy = 0, steal = 0, own = 0;  // clock ticks, all CPUs
};

CpuTimes ReadCpuTimes() {
  CpuTimes t;
  std::ifstream file("/proc/stat");
  std::string cpu;
  file >> cpu;
  // user nice system idle iowait irq softirq steal (guest time is in user)
  double v[8] = {};
  for (double& x : v) file >> x;
  for (double x : v) t.total += x;
  t.busy = t.total - v[3] - v[4];
  t.steal = v[7];
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  t.own = seconds * static_cast<double>(sysconf(_SC_CLK_TCK));
  return t;
}

nlohmann::json Shares(const CpuTimes& a, const CpuTimes& b) {
  const double total = b.total - a.total;
  if (total <= 0) return {{"others_busy_pct", nullptr}, {"steal_pct", nullptr}};
  const double steal = b.steal - a.steal;
  const double others = std::max(0.0, b.busy - a.busy - steal - (b.own - a.own));
  return {{"others_busy_pct", 100 * others / total}, {"steal_pct", 100 * steal / total}};
}

// ------------------------------------------------------------- the rounds
struct Settings {
  bool list = false;
  bool quick = false;
  std::string filter;
  int rounds = 15;
  int passes = 3;  // over all groups, each taking its share of the rounds
  double min_time = 0.1;  // timed seconds per benchmark, over all its rounds
  std::string out;
};

// A contender whose call takes longer than this (oneDNN's PReLU at 64 Mi:
// 1.2-2.2 s, a third of a whole run at 11 rounds) is sampled in the first
// kSlowRounds rounds only: the fewest that `leaky bench` gives a verdict
// from (kMinRoundsForVerdict), enough for a ratio far from its target.
constexpr double kSlowCallSeconds = 0.25;
constexpr size_t kSlowRounds = 5;

struct Contestant {
  const Entry* entry;
  Runner run;
  std::string error;
  long reps = 1;  // calls per timed sample
  std::vector<double> seconds;  // per call, one per round
  std::vector<double> pauses_us;
  int capped = 0;
  bool slow = false;  // sampled in the first kSlowRounds rounds only

  bool Done() const { return slow && seconds.size() >= kSlowRounds; }
};

double Median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

size_t StreamBytes(const Case& c) {
  if (IsEpilogue(c)) return 5 * c.n;  // int32 read, one byte written
  return (ReadsTwo(c) ? 3 : 2) * c.n * ElementBytes(c);
}

void Sample(Contestant& x) {
  bool capped = false;
  x.pauses_us.push_back(Pause(&capped));
  x.capped += capped;
  x.run();  // untimed: wakes the contender's own threads, warms its caches
  const Clock::time_point start = Clock::now();
  for (long i = 0; i < x.reps; ++i) {
    x.run();
    asm volatile("" ::: "memory");  // the calls' stores stay calls
  }
  x.seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count() /
                      static_cast<double>(x.reps));
}

// Every benchmark's samples so far, over the passes.
using Samples = std::map<const Entry*, Contestant>;

// Runs one group's rounds [first, end) into `samples`: makes every contender
// still to be sampled, warms it and sizes its timed batch, then the rounds.
// Within a round each case's contenders run side by side, starting one
// further on each round so no contender always follows the same one.
void RunGroup(const std::vector<const Entry*>& entries, const Settings& settings, int first, int end,
              Samples& samples) {
  ClearBuffers();
  std::vector<Contestant> group;
  for (const Entry* e : entries) {
    const auto so_far = samples.find(e);
    if (so_far != samples.end() && (!so_far->second.error.empty() || so_far->second.Done())) continue;
    Contestant x{e, nullptr, "", 1, {}, {}, 0};
    if (so_far != samples.end()) x = std::move(so_far->second);
    const Case& c = e->c;
    try {
      // In-place cases get their own input buffer (seed 4): they rewrite it.
      char* a = CachedBuffer(c.dtype, c.n, c.mode == Mode::kForwardInPlace ? 4 : 1);
      char* b = CachedBuffer(c.dtype, c.n, 2);
      char* dst = c.mode == Mode::kForwardInPlace ? a : CachedBuffer(c.dtype, c.n, 3);
      x.run = e->make(c, a, b, dst);
      if (!x.run) x.error = "unsupported";
      if (x.run) x.run();  // first touch, JIT, pool start; a refused call is the case's error
    } catch (const std::exception& error) {
      x.error = error.what();
      x.run = nullptr;
    }
    if (x.run) {
      // The batch size from calls taken as a sample is (after a pause and a
      // warm call): right after the first call, or with another contender's
      // workers still spinning, a call can take milliseconds.
      bool capped = false;
      Pause(&capped);
      x.run();
      const double per_sample = settings.min_time / settings.rounds;
      const Clock::time_point start = Clock::now();
      long calls = 0;
      double elapsed = 0;
      do {
        x.run();
        ++calls;
        elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      } while (elapsed < per_sample && calls < 1000000);
      x.reps = std::clamp(std::lround(per_sample / (elapsed / static_cast<double>(calls))), 1L, 1000000L);
      x.slow = x.slow || elapsed / static_cast<double>(calls) > kSlowCallSeconds;
      x.seconds.reserve(static_cast<size_t>(settings.rounds));
    }
    group.push_back(std::move(x));
  }
  // Cases in listing order, each with its runnable contenders.
  std::vector<std::vector<Contestant*>> cases;
  std::map<std::string, size_t> case_index;
  for (Contestant& x : group) {
    if (!x.run) continue;
    Case key = x.entry->c;
    key.contender.clear();
    const auto [it, added] = case_index.emplace(Name(key), cases.size());
    if (added) cases.emplace_back();
    cases[it->second].push_back(&x);
  }
  for (int round = first; round < end; ++round) {
    for (std::vector<Contestant*>& contenders : cases) {
      for (size_t i = 0; i < contenders.size(); ++i) {
        Contestant& x = *contenders[(i + static_cast<size_t>(round)) % contenders.size()];
        if (!x.Done()) Sample(x);
      }
    }
  }
  for (Contestant& x : group) {
    x.run = nullptr;  // before the buffers go
    samples[x.entry] = std::move(x);
  }
  ClearBuffers();
}

std::string Now() {
  const std::time_t now = std::time(nullptr);
  char text[64];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  return text;
}

std::string HostName() {
  char name[256] = {};
  gethostname(name, sizeof(name) - 1);
  return name;
}

int Run(const Settings& settings) {
  std::regex filter;
  try {
    filter = std::regex(settings.filter.empty() ? "." : settings.filter);
  } catch (const std::regex_error&) {
    std::fprintf(stderr, "leaky-bench: --filter '%s' is not a regular expression\n",
                 settings.filter.c_str());
    return 2;
  }
  const std::vector<Entry> all = AllBenchmarks(settings.quick);
  std::vector<std::string> group_order;
  std::map<std::string, std::vector<const Entry*>> groups;
  for (const Entry& e : all) {
    if (!std::regex_search(Name(e.c), filter)) continue;
    if (settings.list) {
      std::printf("%s\n", Name(e.c).c_str());
      continue;
    }
    auto& group = groups[GroupOf(e.c)];
    if (group.empty()) group_order.push_back(GroupOf(e.c));
    group.push_back(&e);
  }
  if (settings.list) return 0;
  if (groups.empty()) {
    std::fprintf(stderr, "leaky-bench: no benchmark matches --filter '%s'\n", settings.filter.c_str());
    return 2;
  }
  if (settings.out.empty()) {
    std::fprintf(stderr, "leaky-bench: --out FILE is needed to run (the JSON of every sample)\n");
    return 2;
  }
  std::ofstream out(settings.out);
  if (!out) {
    std::fprintf(stderr, "leaky-bench: cannot write %s\n", settings.out.c_str());
    return 2;
  }
  // The machine before anything runs: half a second of other processes' use.
  const double load_start = LoadAverage();
  const CpuTimes idle_start = ReadCpuTimes();
  const double runnable_start = RunnableOthers(std::chrono::milliseconds(500));
  const CpuTimes run_start = ReadCpuTimes();
  std::printf("%-44s %6s %12s %8s %8s %10s\n", "benchmark (rounds interleaved per group)", "reps",
              "median us", "IQR %", "GB/s", "pause us");
  Samples samples;
  const int passes = std::min(settings.passes, settings.rounds);
  for (int pass = 0; pass < passes; ++pass) {
    const int first = settings.rounds * pass / passes, end = settings.rounds * (pass + 1) / passes;
    for (const std::string& name : group_order) {
      const Clock::time_point start = Clock::now();
      RunGroup(groups[name], settings, first, end, samples);
      std::fprintf(stderr, "leaky-bench: pass %d of %d, group %s, %zu benchmarks x %d rounds: %.1f s\n",
                   pass + 1, passes, name.c_str(), groups[name].size(), end - first,
                   std::chrono::duration<double>(Clock::now() - start).count());
    }
  }
  nlohmann::json benchmarks = nlohmann::json::array();
  for (const std::string& name : group_order) {
    for (const Entry* e : groups[name]) {
      const Contestant& x = samples.at(e);
      const Case& c = e->c;
      nlohmann::json row = {{"name", Name(c)},          {"group", name},
                            {"contender", c.contender}, {"dtype", TypeName(c)},
                            {"mode", ModeOf(c)},        {"elements", c.n},
                            {"threads", c.threads},     {"bytes", StreamBytes(c)}};
      if (!x.error.empty()) {
        row["error"] = x.error;
        std::printf("%-44s %s\n", Name(c).c_str(), x.error.c_str());
      } else {
        std::vector<double> sorted = x.seconds;
        std::sort(sorted.begin(), sorted.end());
        const double median = Median(sorted);
        const double q1 = sorted[sorted.size() / 4], q3 = sorted[sorted.size() * 3 / 4];
        row["reps"] = x.reps;
        row["seconds"] = x.seconds;
        row["pause_us_median"] = Median(x.pauses_us);
        row["pauses_capped"] = x.capped;
        std::printf("%-44s %6ld %12.2f %8.1f %8.1f %10.0f\n", Name(c).c_str(), x.reps, median * 1e6,
                    100 * (q3 - q1) / median, static_cast<double>(StreamBytes(c)) / median / 1e9,
                    Median(x.pauses_us));
      }
      benchmarks.push_back(std::move(row));
    }
  }
  std::fflush(stdout);
  const CpuTimes run_end = ReadCpuTimes();
  nlohmann::json raw = {
      {"format", "leaky-bench-rounds-1"},
      {"context",
       {{"date", Now()},
        {"host_name", HostName()},
        {"leaky_simd_target", leaky_simd_target()},
        {"cpus", AllThreads()},
        {"rounds", settings.rounds},
        {"passes", passes},
        {"min_time", settings.min_time},
        {"pause_floor_us", kPauseFloor.count()},
        {"pause_cap_us", std::chrono::duration_cast<std::chrono::microseconds>(kPauseCap).count()}}},
      {"machine",
       {{"load_1min_start", load_start},
        {"runnable_others_start", runnable_start},
        {"start", Shares(idle_start, run_start)},
        {"run", Shares(run_start, run_end)},
        {"load_1min_end", LoadAverage()}}},
      {"benchmarks", benchmarks}};
  out << raw.dump(1) << "\n";
  if (!out) {
    std::fprintf(stderr, "leaky-bench: cannot write %s\n", settings.out.c_str());
    return 1;
  }
  return 0;
}

constexpr const char* kUsage =
    "usage: leaky-bench [--list] [--quick] [--filter=REGEX] [--rounds=N] [--passes=N]\n"
    "                   [--min-time=SECONDS] --out=FILE\n"
    "  --list        print the benchmark names (contender/dtype/mode/elements/threads)\n"
    "  --quick       only 4Ki, 1Mi and 64Mi elements\n"
    "  --filter      a regular expression searched in the names\n"
    "  --rounds      samples per benchmark, the group's benchmarks interleaved (default 15)\n"
    "  --passes      runs over all groups that share the rounds out (default 3)\n"
    "  --min-time    timed seconds per benchmark, over all its rounds (default 0.1)\n"
    "  --out         the JSON of every sample (`leaky bench` reads it)\n";

}  // namespace

int main(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t equals = arg.find('=');
    const std::string flag = arg.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : arg.substr(equals + 1);
    char* end = nullptr;
    if (arg == "--list") {
      settings.list = true;
    } else if (arg == "--quick") {
      settings.quick = true;
    } else if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (flag == "--filter" && equals != std::string::npos) {
      settings.filter = value;
    } else if (flag == "--out" && equals != std::string::npos) {
      settings.out = value;
    } else if ((flag == "--rounds" || flag == "--passes") && equals != std::string::npos) {
      const bool rounds = flag == "--rounds";
      const long most = rounds ? 1000 : 100;
      const long number = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || number < 1 || number > most) {
        std::fprintf(stderr, "leaky-bench: %s must be a whole number from 1 to %ld, not '%s'\n",
                     flag.c_str(), most, value.c_str());
        return 2;
      }
      (rounds ? settings.rounds : settings.passes) = static_cast<int>(number);
    } else if (flag == "--min-time" && equals != std::string::npos) {
      const double seconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(seconds) || seconds < 0 || seconds > 3600) {
        std::fprintf(stderr, "leaky-bench: --min-time must be a number of seconds from 0 to 3600, not '%s'\n",
                     value.c_str());
        return 2;
      }
      settings.min_time = seconds;
    } else {
      std::fprintf(stderr, "leaky-bench: unknown option '%s' (--help lists them)\n", arg.c_str());
      return 2;
    }
  }
  try {
    return Run(settings);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "leaky-bench: %s\n", error.what());
    return 1;
  }
}

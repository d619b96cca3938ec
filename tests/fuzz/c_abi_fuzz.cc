// libFuzzer target for the stable C ABI (leaky.h): every float op and
// direction, every dtype, thread counts, store policies, executors that run
// in order, in reverse or twice, sizes from 0 to huge, in place, partial
// overlaps, null operands and extreme scalars. The property, for any input:
// either the call returns LEAKY_OK and every byte of the arena equals the
// scalar reference's (ELU within the bounds stated in leaky/reference.hpp),
// or it returns an error with leaky_last_error() naming the entry point and
// every byte of the arena untouched. A call built only from valid choices
// must succeed. Any other outcome, crash or sanitizer report is a bug.
//
// Built with libFuzzer by `make fuzz` (clang, ASan + UBSan); `make test`
// replays tests/fuzz/corpus/c_abi through the same function in the
// sanitizer build (replay_main.cc).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/leaky.hpp"
#include "leaky/reference.hpp"

namespace {

namespace ref = leaky::reference;

// Reads the fuzzer's bytes front to back; zeros once they run out.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), left_(size) {}
  uint8_t Byte() {
    if (left_ == 0) return 0;
    --left_;
    return *data_++;
  }
  uint64_t Bits(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  template <class T, size_t N>
  T Pick(const T (&choices)[N]) {
    return choices[Byte() % N];
  }
  double Double() {
    const uint64_t bits = Bits(8);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  const uint8_t* rest() const { return data_; }
  size_t left() const { return left_; }

 private:
  const uint8_t* data_;
  size_t left_;
};

[[noreturn]] void Bug(const char* op, const char* what, const std::string& detail) {
  std::fprintf(stderr, "c_abi_fuzz: %s: %s %s\n", op, what, detail.c_str());
  std::abort();
}

enum Op {
  kLeakyReluForward,
  kLeakyReluBackward,
  kPlainReluForward,
  kPlainReluBackward,
  kEluForward,
  kEluBackward,
  kPreluForward,
  kPreluBackward,
  kRreluForward,
  kRreluBackward,
  kBiasActForward,
  kBiasActBackward,
  kDropoutForward,
  kDropoutBackward,
  kOpCount
};
const char* const kNames[kOpCount] = {
    "leaky_relu_forward",    "leaky_relu_backward",     "leaky_plain_relu_forward",
    "leaky_plain_relu_backward", "leaky_elu_forward",   "leaky_elu_backward",
    "leaky_prelu_forward",   "leaky_prelu_backward",    "leaky_rrelu_forward",
    "leaky_rrelu_backward",  "leaky_bias_act_forward",  "leaky_bias_act_backward",
    "leaky_bias_act_dropout_forward", "leaky_bias_act_dropout_backward"};

// Executors the caller may pass: each runs every task at least once.
void InOrder(void*, size_t count, leaky_task task, void* context) {
  for (size_t i = 0; i < count; ++i) task(context, i);
}
void Reversed(void*, size_t count, leaky_task task, void* context) {
  for (size_t i = count; i-- > 0;) task(context, i);
}
void Twice(void*, size_t count, leaky_task task, void* context) {
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < count; ++i) task(context, i);
  }
}

// Scalars worth trying, besides raw bit patterns.
const double kScalars[] = {0.2, 0.0, -0.0, 1.0, -0.5, 0.01, 3.0, 1e-300, -1e300, 65504.0,
                           1e-45, 0.25, 1.5, -2.0, std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN(), 1e38, 0.999999};

struct Problem {
  Op op;
  int dtype;  // may be out of range
  size_t n, outer, channels, inner;
  leaky_options options;
  leaky_executor executor;
  double s0, s1, s2;  // the op's scalars
  int flag;           // saved_is_result, training, activation
  uint64_t seed, offset;
  bool must_succeed;  // every choice valid
};

// The arena: every operand is a region of it; guards on both sides.
struct Layout {
  size_t src0, src1, dst, side, side_out, reduce;  // byte offsets
  bool null_src0 = false, null_src1 = false, null_dst = false, null_side = false,
       null_side_out = false, null_reduce = false;
};

template <class T>
bool SameOrClose(Op op, T got, T want, int dtype) {
  uint64_t a = 0, b = 0;
  std::memcpy(&a, &got, sizeof(T));
  std::memcpy(&b, &want, sizeof(T));
  if (a == b) return true;
  if (op != kEluForward && op != kEluBackward) return false;
  const double g = static_cast<double>(static_cast<ref::compute_t<T>>(got));
  const double w = static_cast<double>(static_cast<ref::compute_t<T>>(want));
  if (std::isnan(g) && std::isnan(w)) return true;
  if (std::isnan(g) || std::isnan(w) || std::signbit(g) != std::signbit(w)) return false;
  // Distance in units in the last place of the storage type: the bit
  // patterns of same-signed values are ordered.
  const uint64_t distance = a > b ? a - b : b - a;
  int bound;
  if (dtype == LEAKY_F16 || dtype == LEAKY_BF16) bound = ref::kEluForwardMaxUlpHalf;
  else if (dtype == LEAKY_F32) bound = op == kEluForward ? ref::kEluForwardMaxUlpF32 : ref::kEluBackwardMaxUlpF32;
  else bound = op == kEluForward ? ref::kEluForwardMaxUlpF64NegativeInputScale : ref::kEluBackwardMaxUlpF64;
  return distance <= static_cast<uint64_t>(bound);
}

leaky_status Call(const Problem& p, uint8_t* arena, const Layout& l) {
  auto at = [&](size_t offset, bool null) -> void* { return null ? nullptr : arena + offset; };
  void* src0 = at(l.src0, l.null_src0);
  void* src1 = at(l.src1, l.null_src1);
  void* dst = at(l.dst, l.null_dst);
  void* side = at(l.side, l.null_side);
  void* side_out = at(l.side_out, l.null_side_out);
  void* reduce = at(l.reduce, l.null_reduce);
  const auto dtype = static_cast<leaky_dtype>(p.dtype);
  const leaky_options* o = &p.options;
  const leaky_bias_act_params act{static_cast<leaky_activation>(p.flag), p.s0, p.s1, p.s2};
  const leaky_rrelu_params rrelu{p.s0, p.s1, p.flag, p.seed, p.offset};
  const leaky_dropout_params dropout{p.s0, p.seed, p.offset};
  const leaky_bias_act_params dropout_act{LEAKY_ACT_LRELU, 0.2, p.s1, p.s2};
  switch (p.op) {
    case kLeakyReluForward: return leaky_relu_forward(dtype, p.n, src0, dst, p.s0, o);
    case kLeakyReluBackward:
      return leaky_relu_backward(dtype, p.n, src0, src1, p.flag, dst, p.s0, o);
    case kPlainReluForward: return leaky_plain_relu_forward(dtype, p.n, src0, dst, o);
    case kPlainReluBackward: return leaky_plain_relu_backward(dtype, p.n, src0, src1, dst, o);
    case kEluForward: return leaky_elu_forward(dtype, p.n, src0, dst, p.s0, p.s1, p.s2, o);
    case kEluBackward:
      return leaky_elu_backward(dtype, p.n, src0, src1, p.flag, dst, p.s0, p.s1, p.s2, o);
    case kPreluForward:
      return leaky_prelu_forward(dtype, p.outer, p.channels, p.inner, src0, side, dst, o);
    case kPreluBackward:
      return leaky_prelu_backward(dtype, p.outer, p.channels, p.inner, src0, src1, side, dst,
                                  reduce, o);
    case kRreluForward: return leaky_rrelu_forward(dtype, p.n, src0, dst, side_out, &rrelu, o);
    case kRreluBackward: return leaky_rrelu_backward(dtype, p.n, src0, src1, dst, &rrelu, o);
    case kBiasActForward:
      return leaky_bias_act_forward(dtype, p.outer, p.channels, p.inner, src0, side, dst, &act, o);
    case kBiasActBackward:
      return leaky_bias_act_backward(dtype, p.outer, p.channels, p.inner, src0, src1, side, dst,
                                     reduce, &act, o);
    case kDropoutForward:
      return leaky_bias_act_dropout_forward(dtype, p.outer, p.channels, p.inner, src0, side, dst,
                                            static_cast<uint8_t*>(side_out), &dropout_act,
                                            &dropout, o);
    case kDropoutBackward:
      return leaky_bias_act_dropout_backward(dtype, p.outer, p.channels, p.inner, src0, src1,
                                             side, static_cast<const uint8_t*>(side_out), dst,
                                             reduce, &dropout_act, p.s0, o);
    case kOpCount: break;
  }
  return LEAKY_ERROR_INTERNAL;
}

// The arena after a correct call: `before` with the reference's writes.
// Inputs are read from `before`, so in-place calls read what they overwrite.
template <class T>
void Expected(const Problem& p, const Layout& l, const std::vector<uint8_t>& before,
              std::vector<uint8_t>* after) {
  using C = ref::compute_t<T>;
  auto in = [&](size_t offset, size_t i) {
    T v;
    std::memcpy(&v, before.data() + offset + i * sizeof(T), sizeof(T));
    return v;
  };
  auto out = [&](size_t offset, size_t i, T v) {
    std::memcpy(after->data() + offset + i * sizeof(T), &v, sizeof(T));
  };
  auto channel_of = [&](size_t i) { return (i / p.inner) % p.channels; };
  auto side = [&](size_t i) { return l.null_side ? T(-0.0f) : in(l.side, channel_of(i)); };
  auto mask_bit = [&](size_t i) {
    return ((before[l.side_out + i / 8] >> (i % 8)) & 1) != 0;
  };
  auto eval_slope = [&]() {
    const double sum = p.s0 + p.s1;
    return std::isfinite(sum) ? sum / 2 : p.s0 / 2 + p.s1 / 2;
  };
  const leaky_bias_act_params act{static_cast<leaky_activation>(p.flag), p.s0, p.s1,
                                  p.s2 < 0 ? -1.0 : p.s2};
  const leaky_bias_act_params dropout_act{LEAKY_ACT_LRELU, 0.2, p.s1, p.s2 < 0 ? -1.0 : p.s2};
  for (size_t i = 0; i < p.n; ++i) {
    const T a = in(l.src0, i);
    switch (p.op) {
      case kLeakyReluForward: out(l.dst, i, ref::leaky_relu_forward(a, p.s0)); break;
      case kLeakyReluBackward:
        out(l.dst, i, ref::leaky_relu_backward(a, in(l.src1, i), p.s0));
        break;
      case kPlainReluForward: out(l.dst, i, ref::plain_relu_forward(a)); break;
      case kPlainReluBackward: out(l.dst, i, ref::plain_relu_backward(a, in(l.src1, i))); break;
      case kEluForward: out(l.dst, i, ref::elu_forward(a, p.s0, p.s1, p.s2)); break;
      case kEluBackward:
        out(l.dst, i, p.flag ? ref::elu_backward_from_result(a, in(l.src1, i), p.s0, p.s1, p.s2)
                             : ref::elu_backward(a, in(l.src1, i), p.s0, p.s1, p.s2));
        break;
      case kPreluForward: out(l.dst, i, ref::prelu_forward(a, side(i))); break;
      case kPreluBackward: out(l.dst, i, ref::prelu_backward(a, in(l.src1, i), side(i))); break;
      case kRreluForward:
        if (p.flag) {
          T noise;
          out(l.dst, i, ref::rrelu_forward(a, ref::stream_word(p.seed, p.offset + i), p.s0, p.s1,
                                           &noise));
          if (!l.null_side_out) out(l.side_out, i, noise);
        } else {
          out(l.dst, i, ref::leaky_relu_forward(a, eval_slope()));
        }
        break;
      case kRreluBackward:
        out(l.dst, i,
            p.flag ? ref::rrelu_backward(a, in(l.src1, i), ref::stream_word(p.seed, p.offset + i),
                                         p.s0, p.s1)
                   : ref::leaky_relu_backward(a, in(l.src1, i), eval_slope()));
        break;
      case kBiasActForward: out(l.dst, i, ref::bias_act_forward(a, side(i), act)); break;
      case kBiasActBackward:
        out(l.dst, i, ref::bias_act_backward(a, in(l.src1, i), side(i), act));
        break;
      case kDropoutForward: {
        const bool kept =
            ref::stream_half_word(p.seed, p.offset + i) >= ref::dropout_threshold(p.s0);
        out(l.dst, i, ref::bias_act_dropout_forward(a, side(i), dropout_act, kept, p.s0));
        uint8_t& byte = (*after)[l.side_out + i / 8];
        byte = static_cast<uint8_t>(kept ? byte | (1u << (i % 8)) : byte & ~(1u << (i % 8)));
        break;
      }
      case kDropoutBackward:
        out(l.dst, i,
            ref::bias_act_dropout_backward(a, in(l.src1, i), side(i), dropout_act, mask_bit(i),
                                           p.s0));
        break;
      case kOpCount: break;
    }
  }
  // Per-channel reductions, in double, in (outer, inner) order.
  if ((p.op == kPreluBackward || p.op == kBiasActBackward || p.op == kDropoutBackward) &&
      !l.null_reduce) {
    for (size_t c = 0; c < p.channels; ++c) {
      double sum = 0.0;
      for (size_t o = 0; o < p.outer; ++o) {
        for (size_t k = 0; k < p.inner; ++k) {
          const size_t i = (o * p.channels + c) * p.inner + k;
          if (p.op == kPreluBackward) {
            sum += static_cast<double>(ref::prelu_weight_term(in(l.src0, i), in(l.src1, i)));
          } else {
            T dx;
            std::memcpy(&dx, after->data() + l.dst + i * sizeof(T), sizeof(T));
            sum += static_cast<double>(static_cast<C>(dx));
          }
        }
      }
      out(l.reduce, c, T(static_cast<C>(sum)));
    }
  }
}

template <class T>
void Compare(const Problem& p, const std::vector<uint8_t>& got, const std::vector<uint8_t>& want) {
  for (size_t i = 0; i < got.size(); i += 1) {
    if (got[i] == want[i]) continue;
    // A differing byte: compare its element of T (ELU's bound), else a bug.
    const size_t start = i - i % sizeof(T);
    T g, w;
    std::memcpy(&g, got.data() + start, sizeof(T));
    std::memcpy(&w, want.data() + start, sizeof(T));
    if (!SameOrClose(p.op, g, w, p.dtype)) {
      Bug(kNames[p.op], "differs from the reference at arena byte", std::to_string(start) +
          " (n " + std::to_string(p.n) + ", dtype " + std::to_string(p.dtype) + ", threads " +
          std::to_string(p.options.num_threads) + ")");
    }
    i = start + sizeof(T) - 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r(data, size);
  Problem p{};
  p.must_succeed = true;
  p.op = static_cast<Op>(r.Byte() % kOpCount);
  const uint8_t dtype_choice = r.Byte();
  p.dtype = dtype_choice % 5 == 4 ? static_cast<int>(dtype_choice) : dtype_choice % 4;
  if (p.dtype > 3) p.must_succeed = false;
  // Sizes: small, around vector and tile boundaries, zero, or beyond memory.
  const uint8_t size_kind = r.Byte() % 8;
  size_t n;
  if (size_kind < 4) n = r.Bits(2) % 300;
  else if (size_kind < 6) n = r.Bits(3) % 40000;
  else if (size_kind == 6) n = 0;
  else n = static_cast<size_t>(r.Bits(8)) | (size_t{1} << 60);
  const bool huge = size_kind == 7;
  if (huge) p.must_succeed = false;
  // The channel view: outer x channels x inner == n (huge: overflowing).
  const size_t channel_choices[] = {1, 2, 3, 8, 17};
  p.channels = n == 0 ? r.Pick(channel_choices) % 2 : r.Pick(channel_choices);
  p.inner = 1 + r.Byte() % 9;
  if (!huge) {
    if (p.channels == 0) p.inner = 0, p.outer = 0;
    else {
      p.outer = n / (p.channels * p.inner);
      n = p.outer * p.channels * p.inner;
    }
  } else {
    p.outer = n;
  }
  const bool channel_op = p.op == kPreluForward || p.op == kPreluBackward ||
                          p.op == kBiasActForward || p.op == kBiasActBackward ||
                          p.op == kDropoutForward || p.op == kDropoutBackward;
  p.n = n;
  // Options.
  const int thread_choices[] = {0, 1, 2, 3, 7, 64, LEAKY_MAX_THREADS, LEAKY_MAX_THREADS + 1,
                                -1, std::numeric_limits<int>::max(), 1 << 20, 2};
  p.options.num_threads = r.Pick(thread_choices);
  if (p.options.num_threads < 0 || p.options.num_threads > LEAKY_MAX_THREADS) p.must_succeed = false;
  const int stream_choices[] = {-1, 0, 1, -1, 2, -7};
  p.options.stream_stores = r.Pick(stream_choices);
  if (p.options.stream_stores > 1 || p.options.stream_stores < -1) p.must_succeed = false;
  const uint8_t executor_kind = r.Byte() % 6;
  const int max_thread_choices[] = {1, 2, 3, 16, 0, LEAKY_MAX_THREADS + 1};
  p.executor = {nullptr, nullptr, nullptr, r.Pick(max_thread_choices)};
  if (executor_kind == 1) p.executor.parallel_for = &InOrder;
  if (executor_kind == 2) p.executor.parallel_for = &Reversed;
  if (executor_kind == 3) p.executor.parallel_for = &Twice;
  if (executor_kind >= 1 && executor_kind <= 4) {
    p.options.executor = &p.executor;
    if (executor_kind == 4 || p.executor.max_threads < 1 ||
        p.executor.max_threads > LEAKY_MAX_THREADS) {
      p.must_succeed = false;  // 4: neither parallel_for nor a pthreadpool
    }
  }
  // Scalars: a table of extremes or raw bits.
  auto scalar = [&]() {
    const uint8_t kind = r.Byte();
    return kind % 4 == 3 ? r.Double() : kScalars[kind % (sizeof(kScalars) / sizeof(double))];
  };
  p.s0 = scalar();
  p.s1 = scalar();
  p.s2 = scalar();
  p.flag = r.Byte() % 4;  // 3: an activation out of range for bias_act
  p.seed = r.Bits(8);
  p.offset = r.Byte() % 4 == 0 ? ~uint64_t{0} - r.Bits(2) : r.Bits(4);
  // Which validity rules of leaky.h the scalars break (the call must then fail).
  auto finite = [](double v) { return std::isfinite(v); };
  switch (p.op) {
    case kLeakyReluForward: if (!finite(p.s0)) p.must_succeed = false; break;
    case kLeakyReluBackward:
      p.flag &= 1;
      if (!finite(p.s0) || (p.flag && p.s0 < 0)) p.must_succeed = false;
      break;
    case kEluForward:
    case kEluBackward:
      if (p.op == kEluForward) p.flag = 0;
      p.flag &= 1;
      if (!finite(p.s0) || !finite(p.s1) || !finite(p.s2) || (p.flag && p.s0 < 0)) {
        p.must_succeed = false;
      }
      break;
    case kRreluForward:
    case kRreluBackward:
      p.flag &= 1;
      if (!finite(p.s0) || !finite(p.s1) || p.s0 > p.s1) p.must_succeed = false;
      if (p.flag && n > 0 && p.offset > ~uint64_t{0} - n) p.must_succeed = false;
      break;
    case kBiasActForward:
    case kBiasActBackward:
      if (p.flag > 2 || !finite(p.s0) || !finite(p.s1) || !finite(p.s2)) p.must_succeed = false;
      break;
    case kDropoutForward:
    case kDropoutBackward:
      if (!(p.s0 >= 0 && p.s0 < 1) || !finite(p.s1) || !finite(p.s2)) p.must_succeed = false;
      if (p.op == kDropoutForward && n > 0 && p.offset > ~uint64_t{0} - n) p.must_succeed = false;
      break;
    default: break;
  }
  // The arena: regions of n elements of 8 bytes, side arrays, a guard.
  const size_t elem = 8, span = (huge ? 64 : n) * elem + 64;
  Layout l;
  l.src0 = 64;
  l.src1 = l.src0 + span;
  l.dst = l.src1 + span;
  l.side = l.dst + span;
  l.side_out = l.side + 64 * elem + 64;  // channels <= 17: one small region
  l.reduce = l.side_out + span;
  const size_t arena_bytes = l.reduce + 64 * elem + 64;
  // Aliasing: separate, in place on either source, a partial overlap, or a
  // null operand.
  const uint8_t alias = r.Byte() % 10;
  const size_t element_bytes = p.dtype == LEAKY_F64 ? 8 : p.dtype == LEAKY_F32 ? 4 : 2;
  const bool binary = p.op == kLeakyReluBackward || p.op == kPlainReluBackward ||
                      p.op == kEluBackward || p.op == kPreluBackward ||
                      p.op == kRreluBackward || p.op == kBiasActBackward ||
                      p.op == kDropoutBackward;
  if (alias == 1) l.dst = l.src0;
  if (alias == 2 && binary) l.dst = l.src1;
  if (alias == 3 && n > 1) {  // dst starts inside src0, one element or one byte off
    l.dst = l.src0 + (r.Byte() % 2 ? element_bytes : 1);
    p.must_succeed = false;
  }
  if (alias == 4 && n > 0) {  // a null operand: required ones must be refused
    const uint8_t which = r.Byte() % 6;
    l.null_src0 = which == 0;
    l.null_src1 = which == 1 && binary;
    l.null_dst = which == 2;
    l.null_side = which == 3;
    l.null_side_out = which == 4;
    l.null_reduce = which == 5;
    p.must_succeed = false;
  }
  if (huge) {
    l.null_src0 = l.null_src1 = l.null_dst = false;
  }
  std::vector<uint8_t> arena(arena_bytes);
  for (size_t i = 0; i < arena_bytes; ++i) {
    arena[i] = r.left() > 0 ? r.rest()[i % r.left()] : static_cast<uint8_t>(i * 131 + 7);
  }
  // Channel weights and biases finite where the op requires it: PReLU's
  // weights may be anything (they are data); leave them raw.
  const std::vector<uint8_t> before = arena;
  const leaky_status status = Call(p, arena.data(), l);
  const std::string message = leaky_last_error();
  if (status != LEAKY_OK) {
    if (p.must_succeed) Bug(kNames[p.op], "refused a valid call:", message);
    if (arena != before) Bug(kNames[p.op], "wrote despite an error:", message);
    if (message.rfind(kNames[p.op], 0) != 0) {
      Bug(kNames[p.op], "error message does not start with the entry point:", message);
    }
    return 0;
  }
  if (huge) Bug(kNames[p.op], "accepted", std::to_string(p.n) + " elements");
  if (alias == 3 && n > 1) Bug(kNames[p.op], "accepted a partial overlap", "");
  std::vector<uint8_t> want = before;
  switch (p.dtype) {
    case LEAKY_F32: Expected<float>(p, l, before, &want); Compare<float>(p, arena, want); break;
    case LEAKY_F64: Expected<double>(p, l, before, &want); Compare<double>(p, arena, want); break;
    case LEAKY_F16:
      Expected<leaky::float16>(p, l, before, &want);
      Compare<leaky::float16>(p, arena, want);
      break;
    case LEAKY_BF16:
      Expected<leaky::bfloat16>(p, l, before, &want);
      Compare<leaky::bfloat16>(p, arena, want);
      break;
    default: Bug(kNames[p.op], "accepted dtype", std::to_string(p.dtype));
  }
  return 0;
}

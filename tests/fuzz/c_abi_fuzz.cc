// libFuzzer target for the stable C ABI (leaky.h): every float op and
// direction, every dtype, thread counts, store policies, executors that run
// in order, in reverse or twice, sizes from 0 to huge, in place, partial
// overlaps, null operands and extreme scalars. The property, for any input:
// either the call returns LEAKY_OK and every byte of the arena equals the
// scalar reference's (ELU within the bounds stated in leaky/reference.hpp),
// (NaN for NaN, any payload: docs/semantics.md), or it returns an error
// with leaky_last_error() naming the entry point and
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

#include "c_abi_calls.h"
#include "fuzz_input.h"
#include "leaky/leaky.h"
#include "leaky/leaky.hpp"
#include "leaky/reference.hpp"

namespace {

namespace ref = leaky::reference;
namespace fuzz = leaky::fuzz;

using fuzz::Reader;

[[noreturn]] void Bug(const char* op, const char* what, const std::string& detail) {
  fuzz::Bug("c_abi_fuzz", op, what, detail);
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
uint64_t Bits(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  return bits;
}

template <class T>
bool SameOrClose(Op op, T got, T want, int dtype) {
  uint64_t a = 0, b = 0;
  std::memcpy(&a, &got, sizeof(T));
  std::memcpy(&b, &want, sizeof(T));
  if (a == b) return true;
  const double g = static_cast<double>(static_cast<ref::compute_t<T>>(got));
  const double w = static_cast<double>(static_cast<ref::compute_t<T>>(want));
  // NaN for NaN: where two NaN operands meet, which payload survives is not
  // specified (docs/semantics.md); the exhaustive tests check the payloads
  // of one NaN operand.
  if (std::isnan(g) && std::isnan(w)) return true;
  if (op != kEluForward && op != kEluBackward) return false;
  if (std::isnan(g) || std::isnan(w)) return false;
  // ELU: distance on the ordered line of the storage type's values, +0 and
  // -0 sharing a rank (reference.hpp's and elu_accuracy_test's measure).
  const int bits = 8 * static_cast<int>(sizeof(T));
  const auto rank = [bits](uint64_t v) {
    const uint64_t sign = uint64_t{1} << (bits - 1);
    const int64_t magnitude = static_cast<int64_t>(v & (sign - 1));
    return (v & sign) != 0 ? -magnitude : magnitude;
  };
  const int64_t ra = rank(a), rb = rank(b);
  const uint64_t distance = static_cast<uint64_t>(ra > rb ? ra - rb : rb - ra);
  int bound;
  if (dtype == LEAKY_F16 || dtype == LEAKY_BF16) bound = ref::kEluForwardMaxUlpHalf;
  else if (dtype == LEAKY_F32) bound = op == kEluForward ? ref::kEluForwardMaxUlpF32 : ref::kEluBackwardMaxUlpF32;
  else bound = op == kEluForward ? ref::kEluForwardMaxUlpF64NegativeInputScale : ref::kEluBackwardMaxUlpF64;
  return distance <= static_cast<uint64_t>(bound);
}

leaky_status Call(const Problem& p, uint8_t* arena, const Layout& l) {
  auto at = [&](size_t offset, bool null) -> void* { return null ? nullptr : arena + offset; };
  leaky_fuzz_call_args args{};
  args.op = p.op;
  args.dtype = p.dtype;
  args.n = p.n;
  args.outer = p.outer;
  args.channels = p.channels;
  args.inner = p.inner;
  args.src0 = at(l.src0, l.null_src0);
  args.src1 = at(l.src1, l.null_src1);
  args.dst = at(l.dst, l.null_dst);
  args.side = at(l.side, l.null_side);
  args.side_out = at(l.side_out, l.null_side_out);
  args.reduce = at(l.reduce, l.null_reduce);
  args.s0 = p.s0;
  args.s1 = p.s1;
  args.s2 = p.s2;
  args.flag = p.flag;
  args.seed = p.seed;
  args.offset = p.offset;
  args.options = &p.options;
  return leaky_fuzz_call(&args);
}

// The arena after a correct call: `before` with the reference's writes.
// Inputs are read from `before`, so in-place calls read what they overwrite.
template <class T>
void Expected(const Problem& p, const Layout& l, const std::vector<uint8_t>& before,
              std::vector<uint8_t>* after, std::vector<uint8_t>* written) {
  using C = ref::compute_t<T>;
  auto in = [&](size_t offset, size_t i) {
    T v;
    std::memcpy(&v, before.data() + offset + i * sizeof(T), sizeof(T));
    return v;
  };
  auto out = [&](size_t offset, size_t i, T v) {
    std::memcpy(after->data() + offset + i * sizeof(T), &v, sizeof(T));
    std::memset(written->data() + offset + i * sizeof(T), 1, sizeof(T));
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
        (*written)[l.side_out + i / 8] = 2;  // a mask byte: compared bit for bit
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

// Bytes the reference wrote as elements (written == 1) match as values;
// every other byte (untouched, or a mask byte) bit for bit.
template <class T>
void Compare(const Problem& p, const Layout& l, const std::vector<uint8_t>& before,
             const std::vector<uint8_t>& got, const std::vector<uint8_t>& want,
             const std::vector<uint8_t>& written) {
  for (size_t i = 0; i < got.size(); i += 1) {
    if (got[i] == want[i]) continue;
    if (written[i] != 1) {
      Bug(kNames[p.op], "changed a byte it must not write, or a mask bit, at arena byte",
          std::to_string(i) + " (n " + std::to_string(p.n) + ", dtype " + std::to_string(p.dtype) +
              ")");
    }
    // A differing byte: compare its element of T (ELU's bound), else a bug.
    const size_t start = i - i % sizeof(T);
    T g, w;
    std::memcpy(&g, got.data() + start, sizeof(T));
    std::memcpy(&w, want.data() + start, sizeof(T));
    if (!SameOrClose(p.op, g, w, p.dtype)) {
      // The element's sources, when the byte is in dst.
      double source0 = NAN, source1 = NAN;
      if (start >= l.dst && start < l.dst + p.n * sizeof(T)) {
        const size_t i = (start - l.dst) / sizeof(T);
        T v0, v1;
        std::memcpy(&v0, before.data() + l.src0 + i * sizeof(T), sizeof(T));
        std::memcpy(&v1, before.data() + l.src1 + i * sizeof(T), sizeof(T));
        source0 = static_cast<double>(static_cast<ref::compute_t<T>>(v0));
        source1 = static_cast<double>(static_cast<ref::compute_t<T>>(v1));
      }
      char detail[640];
      std::snprintf(detail, sizeof(detail),
                    "%zu: got %.17g (bits %llx), want %.17g (bits %llx) from sources %.17g, %.17g "
                    "(n %zu = %zu x %zu x %zu, "
                    "dtype %d, threads %d, "
                    "stores %d, executor %s, scalars %.17g %.17g %.17g, flag %d)",
                    start, static_cast<double>(static_cast<ref::compute_t<T>>(g)),
                    static_cast<unsigned long long>(Bits(g)),
                    static_cast<double>(static_cast<ref::compute_t<T>>(w)),
                    static_cast<unsigned long long>(Bits(w)), source0, source1, p.n, p.outer,
                    p.channels, p.inner, p.dtype, p.options.num_threads, p.options.stream_stores,
                    p.options.executor != nullptr ? "yes" : "no", p.s0, p.s1, p.s2, p.flag);
      Bug(kNames[p.op], "differs from the reference at arena byte", detail);
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
  p.options = fuzz::ReadOptions(r, &p.executor, &p.must_succeed);
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
      // The stream's range is checked in evaluation too (leaky.h's rule).
      if (n > 0 && p.offset > ~uint64_t{0} - n) p.must_succeed = false;
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
  fuzz::SetForeignLastError();
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
  std::vector<uint8_t> want = before, written(before.size(), 0);
  switch (p.dtype) {
    case LEAKY_F32:
      Expected<float>(p, l, before, &want, &written);
      Compare<float>(p, l, before, arena, want, written);
      break;
    case LEAKY_F64:
      Expected<double>(p, l, before, &want, &written);
      Compare<double>(p, l, before, arena, want, written);
      break;
    case LEAKY_F16:
      Expected<leaky::float16>(p, l, before, &want, &written);
      Compare<leaky::float16>(p, l, before, arena, want, written);
      break;
    case LEAKY_BF16:
      Expected<leaky::bfloat16>(p, l, before, &want, &written);
      Compare<leaky::bfloat16>(p, l, before, arena, want, written);
      break;
    default: Bug(kNames[p.op], "accepted dtype", std::to_string(p.dtype));
  }
  return 0;
}

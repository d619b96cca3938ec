// The conv epilogue (eight_bit.h's leaky_q8_bias_act_forward): int32
// accumulators plus an int32 bias, times the sign's multiplier, rounded
// exactly (ties to even) to qu8/qs8, in one pass on f64 lanes.
//
// Why the result is exact. k = acc + bias is an integer with |k| < 2^33, so
// it is exact in a double, and so is the int32 -> f64 widening. For a double
// M the exact product k * M is the double-double p + e:
//   p = k * M           (rounded),
//   e = fma(k, M, -p)   (exact: TwoProduct's error term is representable
//                        whenever the product does not underflow; below,
//                        e is only read when |p| >= 1/2, where M >= 2^-35
//                        and every term is far above the subnormals).
// Let t = round_half_even(p) and f = p - t. f is exact: t is an integer
// within 1/2 of p, and when |p| < 2^52 (ulp(p) <= 1/2) both p and t are
// multiples of ulp(p), so f is one too with |f| <= 1/2.
//  * |f| < 1/2: then |f| <= 1/2 - ulp(p), and |e| <= ulp(p)/2 (p is the
//    nearest double; under a directed rounding mode |e| < ulp(p), still
//    enough), so t + f + e lies strictly within 1/2 of t: the answer is t.
//    |p| < 1/2 is this case (t = 0), k = 0 and M = 0 too (p = e = 0).
//  * f = +1/2: p was a tie, t = p - 1/2 is even. The exact value is
//    t + 1/2 + e: e > 0 rounds up to t + 1, e < 0 down to t, e = 0 is a
//    real tie and t is already the even neighbour.
//  * f = -1/2: symmetric: e < 0 gives t - 1, otherwise t.
// So the rounding is t + 2f where the tie's f and e have the same sign
// (f * e > 0: a product of 1/2 and e, not small enough to underflow), else
// t. A negative M only flips signs in the argument.
//  * |p| >= 2^52: p and t are integers beyond every clamp, and e (which may
//    now exceed 1/2) cannot change the side: the clamp decides. An
//    overflowing product gives p = t = +-inf (f = NaN fails every
//    comparison), which the clamp, done in double before any integer
//    conversion, also maps to output_max or output_min.
// The fma must be a true fused multiply-add: targets without one
// (HWY_NATIVE_FMA == 0: SSE2, SSSE3, SSE4, the scalar fallback) run the
// scalar loop with std::fma (glibc uses the CPU's FMA when it has one and a
// correctly rounded software fma otherwise).

#if defined(LEAKY_KERNELS_Q8_BIAS_ACT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_Q8_BIAS_ACT_INL_H_
#undef LEAKY_KERNELS_Q8_BIAS_ACT_INL_H_
#else
#define LEAKY_KERNELS_Q8_BIAS_ACT_INL_H_
#endif

#include <cmath>
#include <cstdint>

#include "hwy/highway.h"
#include "kernels/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {
namespace q8_bias_act {

namespace hn = hwy::HWY_NAMESPACE;

// The op's scalars, as doubles: the clamp relative to the zero point.
struct Scalars {
  double zero_point, low, high;  // low/high: output_min/max - zero_point
  explicit Scalars(const kernels::Q8BiasActParams& q)
      : zero_point(q.zero_point),
        low(static_cast<double>(q.output_min) - q.zero_point),
        high(static_cast<double>(q.output_max) - q.zero_point) {}
};

// round_half_even(v), whatever rounding mode the caller has set: v - floor(v)
// is exact, and |v| >= 2^52 is already an integer.
HWY_INLINE double RoundHalfEven(double v) {
  if (!(std::fabs(v) < 0x1p52)) return v;
  const double below = std::floor(v), fraction = v - below;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(below, 2.0) != 0.0)) return below + 1.0;
  return below;
}

// One element (tails, short channels-last runs, targets without FMA).
template <class Out>
HWY_INLINE Out RequantizeOne(int32_t acc, double bias, double positive, double negative,
                             const Scalars& s) {
  const double k = static_cast<double>(acc) + bias;
  const double m = k < 0 ? negative : positive;
  const double p = k * m;
  const double e = std::fma(k, m, -p);
  const double t = RoundHalfEven(p);
  const double f = p - t;
  double r = t;
  if (std::fabs(f) == 0.5 && f * e > 0) r += f + f;
  r = r < s.low ? s.low : (r > s.high ? s.high : r);  // +-inf clamps too
  return static_cast<Out>(static_cast<int32_t>(r + s.zero_point));
}

#if HWY_NATIVE_FMA
using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;

// The splatted scalars. Locals, not members: SVE vectors are sizeless
// types that no struct may hold.
#define LEAKY_Q8_SPLATS(s)                                  \
  const V splat_zero_point = hn::Set(D(), (s).zero_point); \
  const V splat_low = hn::Set(D(), (s).low);               \
  const V splat_high = hn::Set(D(), (s).high)

HWY_INLINE V Requantize(V k, V positive, V negative, V zero_point, V low, V high) {
  const D d;
  const V zero = hn::Zero(d), half = hn::Set(d, 0.5);
  const V m = hn::IfThenElse(hn::Lt(k, zero), negative, positive);
  const V p = hn::Mul(k, m);
  const V e = hn::MulSub(k, m, p);  // fma(k, m, -p)
  const V t = hn::Round(p);         // to nearest, ties to even, mode-independent
  const V f = hn::Sub(p, t);
  const auto round_away = hn::And(hn::Eq(hn::Abs(f), half), hn::Gt(hn::Mul(f, e), zero));
  const V r = hn::Add(t, hn::IfThenElseZero(round_away, hn::Add(f, f)));
  return hn::Add(hn::Min(hn::Max(r, low), high), zero_point);
}

template <class Out>
HWY_INLINE hn::Vec<hn::Rebind<Out, D>> ToBytes(V r) {
  // In range already: both demotions are exact.
  return hn::DemoteTo(hn::Rebind<Out, D>(), hn::DemoteTo(hn::Rebind<int32_t, D>(), r));
}

HWY_INLINE V LoadInt32(const int32_t* p) {
  return hn::PromoteTo(D(), hn::LoadU(hn::Rebind<int32_t, D>(), p));
}

// A run of n elements through `vector(j)` (lanes j..j+N-1, as Out) and
// `one(j)`. Streamed (when asked) one 64-byte line at a time: the results
// of a line gather in a buffer and go out as whole aligned vectors, since
// an f64 vector's results fill only an eighth of a byte vector.
template <class Out, class Vector, class One>
HWY_INLINE void RequantizeLoop(size_t n, Out* y, bool stream, const Vector& vector,
                               const One& one) {
  const hn::Rebind<Out, D> d_out;
  const hn::ScalableTag<Out> d_line;
  constexpr size_t kLine = 64;
  const size_t lanes = hn::Lanes(D());
  size_t i = 0;
  if (stream && hn::Lanes(d_line) <= kLine) {
    const size_t misalignment = reinterpret_cast<uintptr_t>(y) % kLine;
    const size_t head = HWY_MIN(n, misalignment == 0 ? 0 : kLine - misalignment);
    for (; i < head; ++i) y[i] = one(i);
    HWY_ALIGN Out line[kLine];
    for (; i + kLine <= n; i += kLine) {
      for (size_t j = 0; j < kLine; j += lanes) hn::StoreU(vector(i + j), d_out, line + j);
      for (size_t j = 0; j < kLine; j += hn::Lanes(d_line)) {
        hn::Stream(hn::Load(d_line, line + j), d_line, y + i + j);
      }
    }
    hwy::FlushStream();
  }
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    const auto v0 = vector(i), v1 = vector(i + lanes);
    hn::StoreU(v0, d_out, y + i);
    hn::StoreU(v1, d_out, y + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) hn::StoreU(vector(i), d_out, y + i);
  for (; i < n; ++i) y[i] = one(i);
}
#endif  // HWY_NATIVE_FMA

// n elements of one channel: one bias, one pair of multipliers.
template <class Out>
HWY_INLINE void OneChannel(size_t n, const int32_t* acc, Out* y, double bias, double positive,
                           double negative, const Scalars& s, bool stream) {
#if HWY_NATIVE_FMA
  LEAKY_Q8_SPLATS(s);
  const V b = hn::Set(D(), bias), mp = hn::Set(D(), positive), mn = hn::Set(D(), negative);
  RequantizeLoop<Out>(
      n, y, stream,
      [&](size_t j) { return ToBytes<Out>(Requantize(hn::Add(LoadInt32(acc + j), b), mp, mn, splat_zero_point, splat_low, splat_high)); },
      [&](size_t j) { return RequantizeOne<Out>(acc[j], bias, positive, negative, s); });
#else
  (void)stream;
  for (size_t j = 0; j < n; ++j) y[j] = RequantizeOne<Out>(acc[j], bias, positive, negative, s);
#endif
}

// Channels-last: element j of the run is channel first + j; the bias and
// the per-channel multipliers are vector sources (null bias: 0; a
// per-tensor multiplier: its one value).
template <class Out>
HWY_INLINE void ChannelRun(size_t n, size_t first, const int32_t* acc, Out* y,
                           const int32_t* bias, const kernels::Q8BiasActParams& q,
                           const Scalars& s, bool stream) {
  const double* positive = q.per_channel ? q.positive_multiplier + first : q.positive_multiplier;
  const double* negative = q.per_channel ? q.negative_multiplier + first : q.negative_multiplier;
  const int32_t* b = bias != nullptr ? bias + first : nullptr;
  const size_t step = q.per_channel ? 1 : 0;
  const auto one = [&](size_t j) {
    return RequantizeOne<Out>(acc[j], b != nullptr ? b[j] : 0.0, positive[j * step],
                              negative[j * step], s);
  };
#if HWY_NATIVE_FMA
  const D d;
  LEAKY_Q8_SPLATS(s);
  const V mp = hn::Set(d, positive[0]), mn = hn::Set(d, negative[0]);
  RequantizeLoop<Out>(
      n, y, stream,
      [&](size_t j) {
        V k = LoadInt32(acc + j);
        if (b != nullptr) k = hn::Add(k, LoadInt32(b + j));
        if (step != 0) {
          return ToBytes<Out>(
              Requantize(k, hn::LoadU(d, positive + j), hn::LoadU(d, negative + j), splat_zero_point, splat_low,
                         splat_high));
        }
        return ToBytes<Out>(Requantize(k, mp, mn, splat_zero_point, splat_low, splat_high));
      },
      one);
#else
  (void)stream;
  for (size_t j = 0; j < n; ++j) y[j] = one(j);
#endif
}

// Elements [start, start + n) of the [outer, channels, inner] view.
template <class Out>
void Run(size_t n, size_t start, const int32_t* acc, const int32_t* bias, Out* y,
         const kernels::Params& p) {
  const kernels::Q8BiasActParams& q = p.op.q8_bias_act;
  const Scalars s(q);
  const size_t channels = p.common.channels, inner = p.common.inner;
  const bool stream = p.common.stream_stores;
  for (size_t i = 0; i < n;) {
    const size_t index = start + i;
    size_t segment;
    if (channels == 1 || inner > 1) {
      const size_t c = channels == 1 ? 0 : (index / inner) % channels;
      segment = channels == 1 ? n - i : HWY_MIN(n - i, inner - index % inner);
      const size_t m = q.per_channel ? c : 0;
      OneChannel(segment, acc + i, y + i, bias != nullptr ? bias[c] : 0.0,
                 q.positive_multiplier[m], q.negative_multiplier[m], s, stream);
    } else {
      const size_t c = index % channels;
      segment = HWY_MIN(n - i, channels - c);
      ChannelRun(segment, c, acc + i, y + i, bias, q, s, stream);
    }
    i += segment;
  }
}

}  // namespace q8_bias_act
}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_Q8_BIAS_ACT_INL_H_

// The conv epilogue (eight_bit.h's leaky_q8_bias_act_forward): int32
// accumulators plus an int32 bias, times the sign's multiplier, rounded
// exactly (ties to even) to qu8/qs8, in one pass: a fast path on f32 lanes
// answers every vector whose lanes all lie clear of a rounding tie (the
// argument is above Requantize), and the exact path on f64 lanes, below, takes
// the rest (and every element on targets without FMA).
//
// Why the exact path's result is exact. k = acc + bias is an integer with |k| < 2^33, so
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
#include <type_traits>

#include "hwy/cache_control.h"
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
// The exact path: f64 lanes (half as many as the int32 vector's).
using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
// The fast path: the int32 vector's lanes, as f32.
using DF = hn::Repartition<float, D>;
using DI = hn::RebindToSigned<DF>;
using VF = hn::Vec<DF>;
using VI = hn::Vec<DI>;

// The fast path (every lane of an int32 vector at once, in f32) and why it
// is exact wherever it answers.
//
// k = acc + bias is added in int32 and, where that wraps (|k| in
// [2^31, 2^32]), mended by +-2^32 in f32: kf = fl(fl(w) +- 2^32) for the
// wrapped w, |w| <= |k|, is k within 2 * 2^-23 relative; otherwise
// kf = fl(k), within 2^-23. M goes to f32 once per channel, first capped at
// 2^64 in magnitude: a capped M gives |k M| >= 2^64 for every k != 0,
// clamped like the true product, and keeps the product finite. Each f32
// rounding is off by at most 2^-23 of its result (any rounding mode) plus
// 2^-149 should it land among the subnormals, so a = fl(kf * fl(M)) has
//   |a - k M| <= 4.0001 * 2^-23 |k M| + 2^-117
// (the last term: M's rounding among the subnormals, times |k| <= 2^32).
// Only |a| < 257 needs the bound: if |a| >= 257 then |k M| > 256.99, and
// round(a) and round(k M) both lie beyond every clamp (output_min and
// output_max are within 255 of the zero point) on the same side, so the
// clamp gives the same byte. If |a| < 257, |k M| < 257.01 and
// |a - k M| < 1.3e-4, below kFastBound = 2^-12 (2.4e-4). With t = round(a)
// (ties to even, mode-independent) and f = a - t (exact: a and t are
// multiples of ulp(a) while |a| < 2^23; beyond, f = 0): when
// |f| <= 1/2 - 2^-12, k M lies within |f| + 2^-12 < 1/2 of t, strictly, so
// t is round(k M) whatever the tie rule. A vector with any lane where
// |f| > 1/2 - 2^-12 (within the bound of a tie) takes the exact f64 path
// instead; the test is conservative because it flags every lane the
// argument does not cover (and some it would, at |a| >= 257: harmless).
//
// How often: a product spread over its fractional part is flagged with
// probability 2^-11 a lane, so 1 - (1 - 2^-11)^16 = 0.8% of 16-lane
// vectors fall back. Power-of-two multipliers with exact ties on many
// lanes fall back on those vectors and run at the exact path's speed.
constexpr float kFastBound = 0x1p-12f;
constexpr float kNearTie = 0.5f - kFastBound;
constexpr double kMultiplierCap = 0x1p64;
// Added to an integer r in [-2^22, 2^22], this float's bits are kMagicBits
// + r: the integer is a bit cast and a subtraction away (no conversion,
// whose overflow fix-up costs more).
constexpr float kMagic = 0x1.8p23f;
constexpr int32_t kMagicBits = 0x4B400000;

// Capped in double: converting a double beyond float's range is undefined.
HWY_INLINE double CapMultiplier(double m) {
  return HWY_MIN(HWY_MAX(m, -kMultiplierCap), kMultiplierCap);
}
HWY_INLINE float FastMultiplier(double m) { return static_cast<float>(CapMultiplier(m)); }

// The splatted scalars. Locals, not members: SVE vectors are sizeless
// types that no struct may hold.
#define LEAKY_Q8_SPLATS(s)                                          \
  const V splat_zero_point = hn::Set(D(), (s).zero_point);          \
  const V splat_low = hn::Set(D(), (s).low);                        \
  const V splat_high = hn::Set(D(), (s).high);                      \
  const VF fast_low = hn::Set(DF(), static_cast<float>((s).low));   \
  const VF fast_high = hn::Set(DF(), static_cast<float>((s).high)); \
  const VF fast_zero_point = hn::Set(DF(), static_cast<float>((s).zero_point) + kMagic)

HWY_INLINE V RequantizeExact(V k, V positive, V negative, V zero_point, V low, V high) {
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

HWY_INLINE V LoadInt32(const int32_t* p) {
  return hn::PromoteTo(D(), hn::LoadU(hn::Rebind<int32_t, D>(), p));
}

// The exact path's outputs of a block's Lanes(DI()) lanes as int32,
// `exact_at(h)` giving the f64 results of its lanes h..h+Lanes(D())-1.
template <class ExactAt>
HWY_INLINE VI ExactBlock(const ExactAt& exact_at) {
  const hn::Rebind<int32_t, D> d32;
  const size_t half = hn::Lanes(D());
  return hn::Combine(DI(), hn::DemoteTo(d32, exact_at(half)), hn::DemoteTo(d32, exact_at(0)));
}

// The outputs of Lanes(DI()) elements as int32 (zero point added, clamped):
// the fast path's from kf (k = acc + bias in f32) when no lane is near a
// tie, else the exact path's (ExactBlock's `exact_at`).
template <class ExactAt>
HWY_INLINE VI Requantize(VF kf, VF positive, VF negative, VF low, VF high, VF zero_point,
                         const ExactAt& exact_at) {
  const DF df;
  const DI di;
  const VF a = hn::Mul(kf, hn::IfThenElse(hn::Lt(kf, hn::Zero(df)), negative, positive));
  const VF t = hn::Round(a);
  if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Gt(hn::Abs(hn::Sub(a, t)), hn::Set(df, kNearTie))))) {
    return ExactBlock(exact_at);
  }
  const VF r = hn::Add(hn::Min(hn::Max(t, low), high), zero_point);
  return hn::Sub(hn::BitCast(di, r), hn::Set(di, kMagicBits));
}

// v + add where m is set, v elsewhere.
HWY_INLINE VF AddWhere(hn::Mask<DF> m, VF v, VF add) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return VF{_mm512_mask_add_ps(v.raw, m.raw, v.raw, add.raw)};  // one masked add
#else
  return hn::Add(v, hn::IfThenElseZero(m, add));
#endif
}

// The multipliers of Lanes(DF()) channels, capped and in f32.
HWY_INLINE VF LoadFastMultipliers(const double* m) {
  const D d;
  const DF df;
  const hn::Rebind<float, D> dh;
  const VF v = hn::Combine(df, hn::DemoteTo(dh, hn::LoadU(d, m + hn::Lanes(d))),
                           hn::DemoteTo(dh, hn::LoadU(d, m)));
  const VF cap = hn::Set(df, static_cast<float>(kMultiplierCap));
  return hn::Min(hn::Max(v, hn::Neg(cap)), cap);  // an infinity from the demotion too
}

// Lanes(DI()) outputs, in range already, as bytes.
template <class Out>
HWY_INLINE void StoreBytes(VI v, Out* y) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // vpmov(u)sdb: one saturating narrowing (Highway 1.0.3's DemoteTo is
  // four, and its TruncateTo for AVX3_DL permutes 32-bit lanes by byte
  // indices). Saturating, as the line's packs: the folded path below leaves
  // the type's own limits to them.
  const __m128i bytes = hwy::IsSame<Out, uint8_t>()
                            ? _mm512_cvtusepi32_epi8(_mm512_max_epi32(v.raw, _mm512_setzero_si512()))
                            : _mm512_cvtsepi32_epi8(v.raw);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(y), bytes);
#else
  hn::StoreU(hn::DemoteTo(hn::Rebind<Out, DI>(), v), hn::Rebind<Out, DI>(), y);
#endif
}

// Where a run's elements sit in a table of per-channel values (channels-last
// runs of many rows, ChannelsLast below): element j reads the entries from
// u(j) on, u advancing with j and wrapping at the period (the channel
// count). A table holds kTableSpill entries past its period, so that a
// line or a block never wraps inside. Runs of one channel have no table:
// the period is 1 and u stays 0.
constexpr size_t kLine = 64;  // bytes of output a line (an AVX-512 vector)
constexpr size_t kTableSpill = kLine;
static_assert(HWY_LANES(int32_t) <= kTableSpill, "a block may not read past the spill");
struct Wrap {
  size_t period, line_step, lane_step;
  Wrap(size_t channels, size_t lanes)
      : period(channels), line_step(kLine % channels), lane_step(lanes % channels) {}
  HWY_INLINE size_t Add(size_t u, size_t step) const {
    u += step;
    return u >= period ? u - period : u;
  }
};

// A run of n elements through `block(j, u)` (the int32 outputs of lanes
// j..j+Lanes(DI())-1, u their table position) and `one(j)`, streamed when
// asked; u starts at u0. One 64-byte line at a time: on AVX-512 four blocks
// pack into one byte vector in registers (two saturating packs, exact for
// values in range, and a permute back to element order), on AVX2 two halves
// of four blocks each; elsewhere the blocks' bytes gather in a buffer and go
// out as whole aligned vectors when streamed. A line built by narrow stores
// and read back at once would stall on store forwarding on every line.
template <class Out, class Block, class One>
HWY_INLINE void RequantizeLoop(size_t n, Out* y, bool stream, size_t u0, const Wrap& wrap,
                               const Block& block, const One& one) {
  const size_t lanes = hn::Lanes(DI());
  size_t i = 0, u = u0;
  const auto skip_head = [&] {
    const size_t misalignment = reinterpret_cast<uintptr_t>(y) % kLine;
    const size_t head = HWY_MIN(n, misalignment == 0 ? 0 : kLine - misalignment);
    for (; i < head; ++i) y[i] = one(i);
    u = (u0 + head) % wrap.period;
  };
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // The line at element j (table position u), streamed or stored.
  const auto put_line = [&](size_t j, bool non_temporal) LEAKY_INLINE_LAMBDA {
    const __m512i w01 = _mm512_packs_epi32(block(j, u).raw, block(j + 16, u + 16).raw);
    const __m512i w23 = _mm512_packs_epi32(block(j + 32, u + 32).raw, block(j + 48, u + 48).raw);
    const __m512i bytes =
        hwy::IsSame<Out, uint8_t>() ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
    // Dword 4b + q of `bytes` holds block q's lanes 4b..4b+3.
    const __m512i v = _mm512_permutexvar_epi32(
        _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), bytes);
    if (non_temporal) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(y + j), v);
    } else {
      _mm512_storeu_si512(y + j, v);
    }
  };
#elif HWY_TARGET == HWY_AVX2
  // Two halves of four 8-lane blocks, packed as on AVX-512: DemoteTo and an
  // 8-byte store per block cost more than the blocks' own arithmetic.
  const auto half = [&](size_t j, size_t v) LEAKY_INLINE_LAMBDA {
    const __m256i w01 = _mm256_packs_epi32(block(j, v).raw, block(j + 8, v + 8).raw);
    const __m256i w23 = _mm256_packs_epi32(block(j + 16, v + 16).raw, block(j + 24, v + 24).raw);
    const __m256i bytes =
        hwy::IsSame<Out, uint8_t>() ? _mm256_packus_epi16(w01, w23) : _mm256_packs_epi16(w01, w23);
    // Dword 4h + q of `bytes` holds block q's lanes 4h..4h+3.
    return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  };
  const auto put_line = [&](size_t j, bool non_temporal) LEAKY_INLINE_LAMBDA {
    const __m256i v0 = half(j, u), v1 = half(j + 32, u + 32);
    auto* at = reinterpret_cast<__m256i*>(y + j);
    if (non_temporal) {
      _mm256_stream_si256(at, v0);
      _mm256_stream_si256(at + 1, v1);
    } else {
      _mm256_storeu_si256(at, v0);
      _mm256_storeu_si256(at + 1, v1);
    }
  };
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
  if (stream) {
    skip_head();
    for (; i + kLine <= n; i += kLine, u = wrap.Add(u, wrap.line_step)) put_line(i, true);
    hwy::FlushStream();
  }
  for (; i + kLine <= n; i += kLine, u = wrap.Add(u, wrap.line_step)) put_line(i, false);
#else
  const hn::ScalableTag<Out> d_line;
  if (stream && hn::Lanes(d_line) <= kLine) {
    skip_head();
    HWY_ALIGN Out line[kLine];
    for (; i + kLine <= n; i += kLine, u = wrap.Add(u, wrap.line_step)) {
      for (size_t j = 0; j < kLine; j += lanes) StoreBytes(block(i + j, u + j), line + j);
      for (size_t j = 0; j < kLine; j += hn::Lanes(d_line)) {
        hn::Stream(hn::Load(d_line, line + j), d_line, y + i + j);
      }
    }
    hwy::FlushStream();
  }
#endif
  for (; i + lanes <= n; i += lanes, u = wrap.Add(u, wrap.lane_step)) {
    StoreBytes(block(i, u), y + i);
  }
  for (; i < n; ++i) y[i] = one(i);
}

// The folded fast path (every target with FMA; a run of one channel, or
// channels-last rows from per-channel tables, ChannelsLast below): the bias
// and the zero point folded into the multiply,
// y~ = fl(fl(acc) * fl(M) + fl(bias * M + zp)) in one FMA per lane, the
// multiplier chosen per lane by the sign of k = acc + bias (acc > -bias, an
// integer compare: no sum, so no wrap to mend). Every rounding is to
// nearest, so each is off by at most 2^-24 of its result: on AVX-512 by
// EVEX embedded rounding and by the scalar conversions below, independent
// of the caller's mode; elsewhere the conversions and the FMA round by the
// FP environment, which the guard around every kernel
// (reference::ieee_environment) sets to nearest, with subnormals kept. It
// runs where |bias * M| <= 256 (the bias, in output units, within the
// output's range) and |M| <= 2^64, for both multipliers (FoldedFits), and
// is exact wherever it answers. With y = k M + zp the exact value,
//   |y~ - y| <= 2^-24 |y~|                    (the FMA's rounding)
//             + 2^-23 (1 + 2^-25) |acc * M|   (fl(acc) and fl(M))
//             + 2^-24 (|bias * M| + |zp|)     (the folded constant)
// (plus 2^31 * 2^-150 should fl(M) be subnormal, and 2^-50 * 511 for the
// constant's double arithmetic). Where |y~| < 512, |acc * M| =
// |y - zp - bias * M| <= 512 + 255 + 256 plus the error, so the error is
// below 2^-24 * 512 + 2^-23 * 1024 + 2^-24 * 511 = 1.9e-4, under
// kFastBound = 2^-12 (2.4e-4): a lane whose fraction f = y~ - round(y~)
// (exact) has |f| <= 1/2 - 2^-12 lies strictly within 1/2 of round(y~), so
// that is the exact rounding; a vector with any other lane takes the exact
// f64 path. Where |y~| >= 512 (|acc * M| <= |y| + 511), the error is below
// 2^-22 |y| + 1e-4: y lies on y~'s side beyond every clamp (all within
// [-128, 255]), as does round(y~), so the clamp gives the same byte;
// |y~| <= 2^95 + 511 is finite. The clamp to [output_min, output_max] is
// done in f32 (integer bounds commute with rounding); on AVX-512, when it is
// the type's own range, only the upper bound is applied, and the saturating
// packs (or vpmov(u)sdb) give the lower one, whatever the conversion (which
// raises no exception there) makes of a large negative lane.
// On AVX-512, 10 vector arithmetic instructions per 16 lanes (and the load
// and two mask instructions) against the general fast path's 16: the
// epilogue is compute-bound on AVX-512 (Zen 4, 1 thread, 128 Ki elements
// in L2: 0.150 ns an element before, 0.112 after; the memory limit at 64 Mi
// is 0.133; docs/design.md). On AVX2 (Zen 3) docs/design.md has the
// measurement.
constexpr double kFoldedBias = 256;
// Where the guard sets round-to-nearest (reference::ieee_environment: x86
// and AArch64); elsewhere the general fast path, whose bound holds under
// any rounding mode, answers instead.
constexpr bool kFoldedPath = HWY_ARCH_X86 || HWY_ARCH_ARM_A64;
// Each block asks for the accumulators 8 KiB ahead (into L1). At 1 thread
// the arithmetic between the loads keeps too few misses in flight for the
// hardware prefetchers alone (a loop with the same loads and streamed lines
// and no arithmetic runs at the limit): 64 Mi, Zen 4 AVX3_DL, leaky bench's
// ratio to the limit 0.72-0.83 without, 0.89-0.90 with, in three
// alternating runs; other distances in docs/design.md.
constexpr size_t kPrefetchBytes = 8192;

HWY_INLINE bool FoldedFits(int32_t bias, double positive, double negative) {
  const double m = HWY_MAX(std::fabs(positive), std::fabs(negative));
  return m <= kMultiplierCap && std::fabs(static_cast<double>(bias)) * m <= kFoldedBias;
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
// x rounded to the nearest float whatever the caller's rounding mode (an
// embedded-rounding conversion; |x| is below float's range here).
HWY_INLINE float NearestFloat(double x) {
  return _mm_cvtss_f32(_mm_cvt_roundsd_ss(_mm_setzero_ps(), _mm_set_sd(x), kNearest));
}
// The same for Lanes(D()) doubles.
HWY_INLINE hn::Vec<hn::Rebind<float, D>> NearestFloats(V x) {
  return hn::Vec<hn::Rebind<float, D>>{_mm512_cvt_roundpd_ps(x.raw, kNearest)};
}
#else
// x rounded to the nearest float (the guard's mode; |x| is below float's
// range here).
HWY_INLINE float NearestFloat(double x) { return static_cast<float>(x); }
HWY_INLINE hn::Vec<hn::Rebind<float, D>> NearestFloats(V x) {
  return hn::DemoteTo(hn::Rebind<float, D>(), x);
}
#endif

// The folded path's outputs of one block: acc's lanes a, and per lane the
// threshold (-bias), fl(M) and fl(bias * M + zero point) of each sign.
template <bool kTypeRange, class ExactAt>
HWY_INLINE VI FoldedBlock(VI a, VI threshold, VF mp, VF mn, VF cp, VF cn, VF low, VF high,
                          const ExactAt& exact_at) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  const __mmask16 up = _mm512_cmpgt_epi32_mask(a.raw, threshold.raw);
  const __m512 af = _mm512_cvt_roundepi32_ps(a.raw, kNearest);
  __m512 v = _mm512_mask_fmadd_round_ps(af, up, mp.raw, cp.raw, kNearest);
  v = _mm512_mask_fmadd_round_ps(v, static_cast<__mmask16>(~up), mn.raw, cn.raw, kNearest);
  // v - round(v), ties to even (imm 8: no rounding from MXCSR, no
  // precision exception).
  const __m512 fraction = _mm512_sub_ps(v, _mm512_roundscale_ps(v, 8));
  if (HWY_UNLIKELY(
          _mm512_cmp_ps_mask(_mm512_abs_ps(fraction), _mm512_set1_ps(kNearTie), _CMP_GT_OQ) != 0)) {
    return ExactBlock(exact_at);
  }
  v = _mm512_min_ps(v, high.raw);
  if (!kTypeRange) v = _mm512_max_ps(v, low.raw);
  return VI{_mm512_cvt_roundps_epi32(v, kNearest)};
#else
  const DF df;
  const auto up = hn::RebindMask(df, hn::Gt(a, threshold));
  const VF v = hn::MulAdd(hn::ConvertTo(df, a), hn::IfThenElse(up, mp, mn),
                          hn::IfThenElse(up, cp, cn));
  const VF t = hn::Round(v);  // ties to even
  if (HWY_UNLIKELY(!hn::AllFalse(df, hn::Gt(hn::Abs(hn::Sub(v, t)), hn::Set(df, kNearTie))))) {
    return ExactBlock(exact_at);
  }
  // Both bounds whatever kTypeRange: converting a lane beyond int32's range
  // would raise FE_INVALID in the caller's environment.
  (void)kTypeRange;
  const VF r = hn::Max(hn::Min(t, high), low);
  // An integer within the clamp: truncation is exact (on AVX2 one
  // cvttps2dq: ConvertTo's fix-up for positive overflow cost 4 instructions
  // of a block's 20).
#if HWY_TARGET == HWY_AVX2
  return VI{_mm256_cvttps_epi32(r.raw)};
#else
  return hn::ConvertTo(DI(), r);
#endif
#endif
}

// k > 0 where acc > threshold (never, for bias = INT32_MIN).
HWY_INLINE int32_t FoldedThreshold(int32_t bias) {
  return static_cast<int32_t>(HWY_MIN(-int64_t{bias}, int64_t{INT32_MAX}));
}

// Calls run(std::true_type()) when the clamp is the output type's own range
// (the saturating packs give its lower bound), else run(std::false_type()).
template <class Out, class Body>
HWY_INLINE void WithTypeRange(const Scalars& s, const Body& run) {
  constexpr double kTypeMin = hwy::IsSame<Out, uint8_t>() ? 0 : -128;
  constexpr double kTypeMax = hwy::IsSame<Out, uint8_t>() ? 255 : 127;
  if (s.low + s.zero_point == kTypeMin && s.high + s.zero_point == kTypeMax) {
    run(std::true_type());
  } else {
    run(std::false_type());
  }
}

template <class Out, class Exact, class One>
HWY_INLINE void FoldedChannel(size_t n, const int32_t* acc, Out* y, int32_t bias, double positive,
                              double negative, const Scalars& s, bool stream, const Exact& exact,
                              const One& one) {
  const DF df;
  const VF mp = hn::Set(df, NearestFloat(positive));
  const VF mn = hn::Set(df, NearestFloat(negative));
  const VF cp = hn::Set(df, NearestFloat(bias * positive + s.zero_point));
  const VF cn = hn::Set(df, NearestFloat(bias * negative + s.zero_point));
  const VF high = hn::Set(df, static_cast<float>(s.high + s.zero_point));
  const VF low = hn::Set(df, static_cast<float>(s.low + s.zero_point));
  const VI threshold = hn::Set(DI(), FoldedThreshold(bias));
  WithTypeRange<Out>(s, [&](auto type_range) LEAKY_INLINE_LAMBDA {
    RequantizeLoop<Out>(
        n, y, stream, 0, Wrap(1, hn::Lanes(DI())),
        [&](size_t j, size_t) LEAKY_INLINE_LAMBDA {
          kernels::PrefetchAhead(acc + j, kPrefetchBytes);
          return FoldedBlock<decltype(type_range)::value>(hn::LoadU(DI(), acc + j), threshold, mp,
                                                          mn, cp, cn, low, high,
                                                          [&](size_t h) { return exact(j + h); });
        },
        one);
  });
}

// Channels-last runs of several rows, kernels::kQ8TableChannels channels at
// most (ChannelsLast below): each channel's values are worked out once per
// kernel call into these tables, read per lane, and the rows go through one
// loop as one run. Position u holds channel u % channels, for u up to
// channels + kTableSpill.
struct Tables {
  static constexpr size_t kLength = kernels::kQ8TableChannels + kTableSpill;
  // The fast paths' multipliers: capped, in f32 (the folded path's fl(M)).
  HWY_ALIGN float positive[kLength], negative[kLength];
  // The folded path's fl(bias * M + zero point) and -bias (FoldedBlock).
  HWY_ALIGN float positive_constant[kLength], negative_constant[kLength];
  HWY_ALIGN int32_t threshold[kLength];
  HWY_ALIGN int32_t bias[kLength];     // 0 without a bias
  HWY_ALIGN int32_t channel[kLength];  // the exact path's multipliers' index
};

// What a kernel call must hold to fill Tables rather than run row by row.
// At 8 rows the two ways take about the same time (1 thread, in cache,
// Zen 4 AVX3_DL, paired per-element ratios of tables to rows: 512 channels
// 0.99, 64 channels 1.01, 100 channels 0.85, 33 channels 0.89); at 64 rows
// of 512 channels the tables take 0.44 of the time. Fewer than two lines
// of a few channels (24 elements of 3: 1.22) pay more for the tables'
// spill than they save.
constexpr size_t kTableRows = 8;
constexpr size_t kTableElements = 2 * kLine;

// Channel c's multiplier in f32 as the fast paths read it: capped and
// rounded to nearest (what the folded path needs; within the general fast
// path's bound).
HWY_INLINE float TableMultiplier(double m) { return NearestFloat(CapMultiplier(m)); }

// Fills `channels` channels of the tables and their spill; returns whether
// every channel fits the folded path.
HWY_INLINE bool FillTables(size_t channels, const int32_t* bias, const kernels::Q8BiasActParams& q,
                           const Scalars& s, Tables* t) {
  bool folded = kFoldedPath;
  const D d;
  const hn::Rebind<int32_t, D> d32;
  const hn::Rebind<float, D> d16;
  const size_t lanes = hn::Lanes(d);
  size_t c = 0;
  // Lanes(D) channels at a time (the scalar loop below, per channel, cost
  // about 1.4 ns a channel: as much as seven elements of the run).
  for (; c + lanes <= channels; c += lanes) {
    const V positive = q.per_channel ? hn::LoadU(d, q.positive_multiplier + c)
                                     : hn::Set(d, q.positive_multiplier[0]);
    const V negative = q.per_channel ? hn::LoadU(d, q.negative_multiplier + c)
                                     : hn::Set(d, q.negative_multiplier[0]);
    const auto b = bias != nullptr ? hn::LoadU(d32, bias + c) : hn::Zero(d32);
    hn::StoreU(b, d32, t->bias + c);
    hn::StoreU(hn::Iota(d32, static_cast<int32_t>(c)), d32, t->channel + c);
    const V cap = hn::Set(d, kMultiplierCap);
    const V capped_positive = hn::Min(hn::Max(positive, hn::Neg(cap)), cap);
    const V capped_negative = hn::Min(hn::Max(negative, hn::Neg(cap)), cap);
    hn::StoreU(NearestFloats(capped_positive), d16, t->positive + c);
    hn::StoreU(NearestFloats(capped_negative), d16, t->negative + c);
    const V bd = hn::PromoteTo(d, b);
    if (folded) {  // FoldedFits, lane by lane
      const V m = hn::Max(hn::Abs(positive), hn::Abs(negative));
      folded = hn::AllTrue(
          d, hn::And(hn::Le(m, cap), hn::Le(hn::Mul(hn::Abs(bd), m), hn::Set(d, kFoldedBias))));
    }
    if (folded) {
      const V zero_point = hn::Set(d, s.zero_point);
      hn::StoreU(NearestFloats(hn::Add(hn::Mul(bd, positive), zero_point)), d16,
                 t->positive_constant + c);
      hn::StoreU(NearestFloats(hn::Add(hn::Mul(bd, negative), zero_point)), d16,
                 t->negative_constant + c);
      // -bias, and INT32_MAX for INT32_MIN (FoldedThreshold).
      const auto most_negative = hn::Eq(b, hn::Set(d32, INT32_MIN));
      hn::StoreU(hn::IfThenElse(most_negative, hn::Set(d32, INT32_MAX), hn::Neg(b)), d32,
                 t->threshold + c);
    }
  }
  for (; c < channels; ++c) {
    const size_t m = q.per_channel ? c : 0;
    const double positive = q.positive_multiplier[m], negative = q.negative_multiplier[m];
    const int32_t b = bias != nullptr ? bias[c] : 0;
    t->bias[c] = b;
    t->channel[c] = static_cast<int32_t>(c);
    t->positive[c] = TableMultiplier(positive);
    t->negative[c] = TableMultiplier(negative);
    folded = folded && FoldedFits(b, positive, negative);
    if (folded) {
      t->positive_constant[c] = NearestFloat(b * positive + s.zero_point);
      t->negative_constant[c] = NearestFloat(b * negative + s.zero_point);
      t->threshold[c] = FoldedThreshold(b);
    }
  }
  for (size_t u = channels; u < channels + kTableSpill; ++u) {
    const size_t from = u - channels;  // written already: from < u
    t->positive[u] = t->positive[from];
    t->negative[u] = t->negative[from];
    t->bias[u] = t->bias[from];
    t->channel[u] = t->channel[from];
    if (folded) {  // the folded path's entries exist only then
      t->positive_constant[u] = t->positive_constant[from];
      t->negative_constant[u] = t->negative_constant[from];
      t->threshold[u] = t->threshold[from];
    }
  }
  return folded;
}
#endif  // HWY_NATIVE_FMA

// n elements of one channel: one bias, one pair of multipliers.
template <class Out>
HWY_INLINE void OneChannel(size_t n, const int32_t* acc, Out* y, int32_t bias, double positive,
                           double negative, const Scalars& s, bool stream) {
#if HWY_NATIVE_FMA
  LEAKY_Q8_SPLATS(s);
  const DI di;
  const V b = hn::Set(D(), bias), mp = hn::Set(D(), positive), mn = hn::Set(D(), negative);
  const VF fast_positive = hn::Set(DF(), FastMultiplier(positive));
  const VF fast_negative = hn::Set(DF(), FastMultiplier(negative));
  const DF df;
  const VI splat_bias = hn::Set(di, bias);
  const VF carry = hn::Set(df, bias < 0 ? -0x1p32f : 0x1p32f);
  const auto exact = [&](size_t j) {
    return RequantizeExact(hn::Add(LoadInt32(acc + j), b), mp, mn, splat_zero_point, splat_low,
                           splat_high);
  };
  const auto one = [&](size_t j) {
    return RequantizeOne<Out>(acc[j], bias, positive, negative, s);
  };
  if (kFoldedPath && FoldedFits(bias, positive, negative)) {
    FoldedChannel<Out>(n, acc, y, bias, positive, negative, s, stream, exact, one);
    return;
  }
  // acc + bias wraps exactly where (bias < 0 ? ~acc : acc) > INT32_MAX - |bias|
  // (for bias < 0: acc < INT32_MIN - bias, and ~acc = -acc - 1), and k is
  // then the wrapped sum plus 2^32 times the bias's sign. (A loop per sign
  // of the bias, testing the sum against acc, was measured slower: 8.1-9.1
  // GB/s against 10.2-11.0 at 64 Mi, 1 thread, in alternating runs.)
  const VI flip = hn::Set(di, bias < 0 ? -1 : 0);
  const VI limit = hn::Set(
      di, static_cast<int32_t>(int64_t{INT32_MAX} - (bias < 0 ? -int64_t{bias} : int64_t{bias})));
  RequantizeLoop<Out>(
      n, y, stream, 0, Wrap(1, hn::Lanes(di)),
      [&](size_t j, size_t) LEAKY_INLINE_LAMBDA {
        const VI a = hn::LoadU(di, acc + j);
        const auto wrapped = hn::RebindMask(df, hn::Gt(hn::Xor(a, flip), limit));
        const VF kf = AddWhere(wrapped, hn::ConvertTo(df, hn::Add(a, splat_bias)), carry);
        return Requantize(kf, fast_positive, fast_negative, fast_low, fast_high, fast_zero_point,
                          [&](size_t h) { return exact(j + h); });
      },
      one);
#else
  (void)stream;
  for (size_t j = 0; j < n; ++j) y[j] = RequantizeOne<Out>(acc[j], bias, positive, negative, s);
#endif
}

#if HWY_NATIVE_FMA
// k = acc + bias in f32 from int32 lanes: a wrapped sum's sign differs from
// both addends', and k is then the sum plus 2^32 times the bias's sign.
HWY_INLINE VF SumAsFloat(VI a, VI bias) {
  const DF df;
  const DI di;
  const VI k = hn::Add(a, bias);
  const auto wrapped =
      hn::RebindMask(df, hn::Lt(hn::And(hn::Xor(k, a), hn::Xor(k, bias)), hn::Zero(di)));
  const VF carry = hn::CopySign(hn::Set(df, 0x1p32f), hn::ConvertTo(df, bias));
  return AddWhere(wrapped, hn::ConvertTo(df, k), carry);
}
#endif

// Channels-last: element j of the run is channel first + j; the bias and
// the per-channel multipliers are vector sources (null bias: 0; a
// per-tensor multiplier: its one value).
template <class Out>
HWY_INLINE void ChannelRun(size_t n, size_t first, const int32_t* acc, Out* y, const int32_t* bias,
                           const kernels::Q8BiasActParams& q, const Scalars& s, bool stream) {
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
  const DI di;
  LEAKY_Q8_SPLATS(s);
  const V mp = hn::Set(d, positive[0]), mn = hn::Set(d, negative[0]);
  const VF fast_positive = hn::Set(DF(), FastMultiplier(positive[0]));
  const VF fast_negative = hn::Set(DF(), FastMultiplier(negative[0]));
  const auto exact = [&](size_t j) {
    V k = LoadInt32(acc + j);
    if (b != nullptr) k = hn::Add(k, LoadInt32(b + j));
    if (step != 0) {
      return RequantizeExact(k, hn::LoadU(d, positive + j), hn::LoadU(d, negative + j),
                             splat_zero_point, splat_low, splat_high);
    }
    return RequantizeExact(k, mp, mn, splat_zero_point, splat_low, splat_high);
  };
  RequantizeLoop<Out>(
      n, y, stream, 0, Wrap(1, hn::Lanes(di)),
      [&](size_t j, size_t) LEAKY_INLINE_LAMBDA {
        const VI a = hn::LoadU(di, acc + j);
        const VF kf = b != nullptr ? SumAsFloat(a, hn::LoadU(di, b + j)) : hn::ConvertTo(DF(), a);
        const auto exact_at = [&](size_t h) { return exact(j + h); };
        if (step != 0) {
          return Requantize(kf, LoadFastMultipliers(positive + j),
                            LoadFastMultipliers(negative + j), fast_low, fast_high, fast_zero_point,
                            exact_at);
        }
        return Requantize(kf, fast_positive, fast_negative, fast_low, fast_high, fast_zero_point,
                          exact_at);
      },
      one);
#else
  (void)stream;
  for (size_t j = 0; j < n; ++j) y[j] = one(j);
#endif
}

#if HWY_NATIVE_FMA
// A channels-last run of several rows, `channels` <= kernels::kQ8TableChannels,
// element j being channel (first + j) % channels: the per-channel values
// come from Tables, filled once here, and the rows go through one loop (one
// line after another across row ends; streamed when asked, as a run of one
// channel). One row at a time (ChannelRun) converted each row's
// multipliers to f32 again and paid a loop's head and tail per row.
template <class Out>
HWY_INLINE void ChannelsLast(size_t n, size_t first, size_t channels, const int32_t* acc, Out* y,
                             const int32_t* bias, const kernels::Q8BiasActParams& q,
                             const Scalars& s, bool stream) {
  Tables t;
  const bool folded = FillTables(channels, bias, q, s, &t);
  const D d;
  const DI di;
  LEAKY_Q8_SPLATS(s);
  const Wrap wrap(channels, hn::Lanes(di));
  const auto one = [&](size_t j) {
    const size_t c = (first + j) % channels, m = q.per_channel ? c : 0;
    return RequantizeOne<Out>(acc[j], t.bias[c], q.positive_multiplier[m], q.negative_multiplier[m],
                              s);
  };
  // The f64 results of elements j.. (table position u..).
  const auto exact = [&](size_t j, size_t u) {
    const V k = hn::Add(LoadInt32(acc + j), LoadInt32(t.bias + u));
    if (!q.per_channel) {
      return RequantizeExact(k, hn::Set(d, q.positive_multiplier[0]),
                             hn::Set(d, q.negative_multiplier[0]), splat_zero_point, splat_low,
                             splat_high);
    }
    const auto index =
        hn::PromoteTo(hn::RebindToSigned<D>(), hn::LoadU(hn::Rebind<int32_t, D>(), t.channel + u));
    return RequantizeExact(k, hn::GatherIndex(d, q.positive_multiplier, index),
                           hn::GatherIndex(d, q.negative_multiplier, index), splat_zero_point,
                           splat_low, splat_high);
  };
  if (folded) {
    const VF high = hn::Set(DF(), static_cast<float>(s.high + s.zero_point));
    const VF low = hn::Set(DF(), static_cast<float>(s.low + s.zero_point));
    // Not forced inline, unlike FoldedChannel's: forced, this loop ran at
    // 0.168-0.177 ns an element against 0.146-0.151 (1 Mi, in cache, 64
    // channels, alternated four times); FoldedChannel's ran at 0.12 ns
    // against 0.10 the other way round.
    WithTypeRange<Out>(s, [&](auto type_range) {
      RequantizeLoop<Out>(
          n, y, stream, first, wrap,
          [&](size_t j, size_t u) LEAKY_INLINE_LAMBDA {
            kernels::PrefetchAhead(acc + j, kPrefetchBytes);
            return FoldedBlock<decltype(type_range)::value>(
                hn::LoadU(di, acc + j), hn::LoadU(di, t.threshold + u),
                hn::LoadU(DF(), t.positive + u), hn::LoadU(DF(), t.negative + u),
                hn::LoadU(DF(), t.positive_constant + u), hn::LoadU(DF(), t.negative_constant + u),
                low, high, [&](size_t h) { return exact(j + h, u + h); });
          },
          one);
    });
    return;
  }
  const DF df;
  RequantizeLoop<Out>(
      n, y, stream, first, wrap,
      [&](size_t j, size_t u) LEAKY_INLINE_LAMBDA {
        const VF kf = SumAsFloat(hn::LoadU(di, acc + j), hn::LoadU(di, t.bias + u));
        return Requantize(kf, hn::LoadU(df, t.positive + u), hn::LoadU(df, t.negative + u),
                          fast_low, fast_high, fast_zero_point,
                          [&](size_t h) { return exact(j + h, u + h); });
      },
      one);
}
#endif  // HWY_NATIVE_FMA

// Elements [start, start + n) of the [outer, channels, inner] view.
template <class Out>
void Run(size_t n, size_t start, const int32_t* acc, const int32_t* bias, Out* y,
         const kernels::Params& p) {
  const kernels::Q8BiasActParams& q = p.op.q8_bias_act;
  const Scalars s(q);
  const size_t channels = p.common.channels, inner = p.common.inner;
  const bool stream = p.common.stream_stores;
#if HWY_NATIVE_FMA
  if (channels > 1 && inner == 1 && channels <= kernels::kQ8TableChannels &&
      n >= HWY_MAX(kTableRows * channels, kTableElements)) {
    ChannelsLast(n, start % channels, channels, acc, y, bias, q, s, stream);
    return;
  }
#endif
  for (size_t i = 0; i < n;) {
    const size_t index = start + i;
    size_t segment;
    if (channels == 1 || inner > 1) {
      const size_t c = channels == 1 ? 0 : (index / inner) % channels;
      segment = channels == 1 ? n - i : HWY_MIN(n - i, inner - index % inner);
      const size_t m = q.per_channel ? c : 0;
      OneChannel(segment, acc + i, y + i, bias != nullptr ? bias[c] : 0, q.positive_multiplier[m],
                 q.negative_multiplier[m], s, stream);
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

// ELU's vector functors. Each lane computes what leaky::reference computes
// for one element: bit for bit for the backward from the result, within the
// ulp bounds stated in reference.hpp where exp/expm1 enter.

#if defined(LEAKY_KERNELS_ELU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_ELU_INL_H_
#undef LEAKY_KERNELS_ELU_INL_H_
#else
#define LEAKY_KERNELS_ELU_INL_H_
#endif

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/kernels.h"
#include "kernels/splat-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// expm1/exp go through Highway's out-of-line CallExpm1/CallExp: inlined, the
// polynomial was copied into every unrolled loop body of every dtype and
// target, and kernels.cc took over 14 minutes to compile under ASan. The one
// exception is ELU's forward in f32 compute (f32, f16, bf16), the op the
// benchmark holds against oneDNN: it uses Expm1F32<true> below, inline.

// expm1(t) in f32 (NaN passes): Highway's reduction t = k ln2 + r and its
// expm1 polynomial on |r| <= ln2/2, but one reconstruction with one
// rounding, 2^k * p + (2^k - 1) as a fused multiply-add (2^k - 1 is exact for
// k >= -24; below, the result is -1 within an ulp), and no blends for ranges
// the caller rules out. kNonPositive: lanes with t > 0 come out unspecified
// (ELU with input_scale >= 0 discards them: x > 0 there), t < -87 is clamped
// (expm1 is -1 there) and nothing can overflow. Otherwise
// (a negative input_scale) the top of the range is handled too: k = 128
// scales by 2^127 and then 2, and t > 88.75 is +inf. Inline, because the
// out-of-line call was the difference between losing to oneDNN's ELU and not
// (docs/design.md). Error measured by elu_accuracy_test (bound in
// reference.hpp).
template <bool kNonPositive, class D>
HWY_INLINE hn::Vec<D> Expm1F32(D d, hn::Vec<D> t) {
  static_assert(sizeof(hn::TFromD<D>) == 4, "f32 compute only");
  const hn::RebindToSigned<D> di;
  const float top = 88.75f;
  // NaN: x86's min/max return their second operand when either is NaN, so
  // with t second a NaN lane stays NaN through every step; Highway's scalar
  // Min/Max and ARM's (FMAXNM/FMINNM) return the other operand, so those
  // targets put NaN back at the end.
  const auto low = hn::Set(d, -87.0f);
  const auto clamped = kNonPositive ? hn::Max(low, t) : hn::Max(low, hn::Min(hn::Set(d, top), t));
  // k = round(t / ln2) by the 1.5 * 2^23 trick: the sum's low bits are k
  // (two's complement), and subtracting it again gives k as a float.
  const auto shifter = hn::Set(d, 12582912.0f);
  const auto biased = hn::MulAdd(clamped, hn::Set(d, 1.442695040888963407359924681f), shifter);
  const auto kf = hn::Sub(biased, shifter);
  auto r = hn::MulAdd(kf, hn::Set(d, -0.693145751953125f), clamped);
  r = hn::MulAdd(kf, hn::Set(d, -1.428606765330187045e-6f), r);
  const auto r2 = hn::Mul(r, r);
  // Highway's ExpPoly coefficients: p = r + r^2 (k0 + k1 r + ... + k5 r^5).
  const auto q01 = hn::MulAdd(hn::Set(d, 0.166666671633720397949219f), r, hn::Set(d, 0.5f));
  const auto q23 = hn::MulAdd(hn::Set(d, 0.00833336077630519866943359f), r,
                              hn::Set(d, 0.0416664853692054748535156f));
  const auto q45 = hn::MulAdd(hn::Set(d, 0.000198527617612853646278381f), r,
                              hn::Set(d, 0.00139304355252534151077271f));
  const auto p = hn::MulAdd(hn::MulAdd(hn::MulAdd(q45, r2, q23), r2, q01), r2, r);
  auto pow2 = [&](hn::Vec<decltype(di)> k) {
    return hn::BitCast(d, hn::ShiftLeft<23>(hn::Add(k, hn::Set(di, 127))));
  };
  // The bits of `biased` are 0x4B400000 + k.
  const auto k = hn::Sub(hn::BitCast(di, biased), hn::Set(di, 0x4B400000));
  hn::Vec<D> result;
  if constexpr (kNonPositive) {
    const auto two_k = pow2(k);
    result = hn::MulAdd(two_k, p, hn::Sub(two_k, hn::Set(d, 1.0f)));
  } else {
    const auto k_low = hn::Min(k, hn::Set(di, 127));  // 2^128 is not a float
    const auto two_k = pow2(k_low);
    result = hn::Mul(hn::MulAdd(two_k, p, hn::Sub(two_k, hn::Set(d, 1.0f))),
                     pow2(hn::Sub(k, k_low)));
    result = hn::IfThenElse(hn::Gt(t, hn::Set(d, top)), hn::Inf(d), result);
  }
#if HWY_TARGET == HWY_SCALAR || !HWY_ARCH_X86
  result = hn::IfThenElse(hn::IsNaN(t), t, result);
#endif
  return result;
}

template <class D>
HWY_NOINLINE hn::Vec<D> CallExpm1AnySignF32(D d, hn::VecArg<hn::Vec<D>> t) {
  return Expm1F32<false>(d, t);
}

// Highway's exp/expm1 build 2^q from two halves, which holds to q = 254
// (f32) or 2046 (f64); beyond, the exponent field wraps. Arguments past
// overflow (reachable with a negative input_scale) become +inf here, and a
// NaN argument stays NaN: Highway's functions are specified on finite
// arguments only, and gave 0 for exp(NaN) (x = -inf with input_scale 0 made
// ELU's backward 0, not NaN: found by c_abi_fuzz).
template <class D>
HWY_INLINE hn::Vec<D> OverflowToInf(D d, hn::Vec<D> t, hn::Vec<D> value) {
  using T = hn::TFromD<D>;
  const T last = sizeof(T) == 4 ? T(88.75) : T(709.8);  // just past ln(max)
  return hn::IfThenElse(hn::IsNaN(t), t,
                        hn::IfThenElse(hn::Gt(t, hn::Set(d, last)), hn::Inf(d), value));
}

// ELU's coefficients, each rounded once to the compute type; the negative
// side's coefficient is alpha * scale multiplied in that type (as PyTorch).
template <class D>
struct EluCoefficients {
  using T = hn::TFromD<D>;
  Splat<D> negative_coef, scale, input_scale;
  explicit EluCoefficients(const kernels::Params& p)
      : negative_coef(static_cast<T>(static_cast<T>(p.op.elu.alpha) * static_cast<T>(p.op.elu.scale))),
        scale(p.op.elu.scale),
        input_scale(p.op.elu.input_scale) {}
};

// y = x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale.
template <class Codec>
struct elu_forward_op {
  using D = typename Codec::D;
  EluCoefficients<D> c;
  // t = x * input_scale <= 0 wherever x <= 0.
  bool non_positive_argument;
  explicit elu_forward_op(const kernels::Params& p)
      : c(p), non_positive_argument(p.op.elu.input_scale >= 0) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const {
    const hn::Vec<D> t = hn::Mul(x, c.input_scale());
    hn::Vec<D> expm1;
    if constexpr (sizeof(hn::TFromD<D>) == 4) {
      expm1 = non_positive_argument ? Expm1F32<true>(d, t) : CallExpm1AnySignF32(d, t);
    } else {
      expm1 = OverflowToInf(d, t, hn::CallExpm1(d, t));
    }
    const hn::Vec<D> negative = hn::Mul(expm1, c.negative_coef());
    return hn::IfThenElse(hn::Le(x, hn::Zero(d)), negative, hn::Mul(x, c.scale()));
  }
};

// From the input: dx = x <= 0 ? dy * input_scale * (alpha * scale) *
// exp(x * input_scale) : dy * scale, multiplied left to right.
template <class Codec>
struct elu_backward_op {
  using D = typename Codec::D;
  EluCoefficients<D> c;
  explicit elu_backward_op(const kernels::Params& p) : c(p) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> x) const {
    const hn::Vec<D> t = hn::Mul(x, c.input_scale());
    const hn::Vec<D> negative = hn::Mul(hn::Mul(hn::Mul(dy, c.input_scale()), c.negative_coef()),
                                        OverflowToInf(d, t, hn::CallExp(d, t)));
    return hn::IfThenElse(hn::Le(x, hn::Zero(d)), negative, hn::Mul(dy, c.scale()));
  }
};

// From the result: dx = y <= 0 ? dy * input_scale * (y + alpha * scale) :
// dy * scale. Plain arithmetic: bit-exact.
template <class Codec>
struct elu_backward_from_result_op {
  using D = typename Codec::D;
  EluCoefficients<D> c;
  explicit elu_backward_from_result_op(const kernels::Params& p) : c(p) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> y) const {
    const hn::Vec<D> negative =
        hn::Mul(hn::Mul(dy, c.input_scale()), hn::Add(y, c.negative_coef()));
    return hn::IfThenElse(hn::Le(y, hn::Zero(d)), negative, hn::Mul(dy, c.scale()));
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_ELU_INL_H_

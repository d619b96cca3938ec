// The vector functors of LeakyReLU's relatives: ReLU and ELU. Each lane
// computes what leaky::reference computes for one element (bit for bit for
// ReLU and ELU's backward from the result; within the ulp bounds stated in
// reference.hpp where exp/expm1 enter).

#if defined(LEAKY_KERNELS_ACTIVATIONS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_ACTIVATIONS_INL_H_
#undef LEAKY_KERNELS_ACTIVATIONS_INL_H_
#else
#define LEAKY_KERNELS_ACTIVATIONS_INL_H_
#endif

#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "kernels/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// y = x < 0 ? 0 : x (PyTorch's relu): NaN fails the compare and passes
// through, -0 stays -0.
template <class Codec>
struct relu_forward_op {
  using D = typename Codec::D;
  explicit relu_forward_op(const kernels::Params&) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const {
    return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
  }
};

// dx = saved <= 0 ? 0 : dy (PyTorch's threshold_backward at 0); the same
// from the input or the result.
template <class Codec>
struct relu_backward_op {
  using D = typename Codec::D;
  explicit relu_backward_op(const kernels::Params&) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> saved) const {
    return hn::IfThenZeroElse(hn::Le(saved, hn::Zero(d)), dy);
  }
};

// expm1/exp go through Highway's out-of-line CallExpm1/CallExp: inlined, the
// polynomial was copied into every unrolled loop body of every dtype and
// target, and kernels.cc took over 14 minutes to compile under ASan.

// ELU's coefficients, each rounded once to the compute type; the negative
// side's coefficient is alpha * scale multiplied in that type (as PyTorch).
template <class D>
struct EluCoefficients {
  using T = hn::TFromD<D>;
  hn::Vec<D> negative_coef, scale, input_scale;
  explicit EluCoefficients(const kernels::Params& p)
      : negative_coef(hn::Set(D(), static_cast<T>(static_cast<T>(p.alpha) *
                                                  static_cast<T>(p.scale)))),
        scale(hn::Set(D(), static_cast<T>(p.scale))),
        input_scale(hn::Set(D(), static_cast<T>(p.input_scale))) {}
};

// y = x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale.
template <class Codec>
struct elu_forward_op {
  using D = typename Codec::D;
  EluCoefficients<D> c;
  explicit elu_forward_op(const kernels::Params& p) : c(p) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const {
    const hn::Vec<D> negative =
        hn::Mul(hn::CallExpm1(d, hn::Mul(x, c.input_scale)), c.negative_coef);
    return hn::IfThenElse(hn::Le(x, hn::Zero(d)), negative, hn::Mul(x, c.scale));
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
    const hn::Vec<D> negative = hn::Mul(hn::Mul(hn::Mul(dy, c.input_scale), c.negative_coef),
                                        hn::CallExp(d, hn::Mul(x, c.input_scale)));
    return hn::IfThenElse(hn::Le(x, hn::Zero(d)), negative, hn::Mul(dy, c.scale));
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
        hn::Mul(hn::Mul(dy, c.input_scale), hn::Add(y, c.negative_coef));
    return hn::IfThenElse(hn::Le(y, hn::Zero(d)), negative, hn::Mul(dy, c.scale));
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_ACTIVATIONS_INL_H_

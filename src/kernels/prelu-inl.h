// PReLU's vector functors, an indexed op: the slope is the channel's weight,
// one value per segment or a vector source (channels-last).

#if defined(LEAKY_KERNELS_PRELU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_PRELU_INL_H_
#undef LEAKY_KERNELS_PRELU_INL_H_
#else
#define LEAKY_KERNELS_PRELU_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/kernels.h"
#include "kernels/splat-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// y = x > 0 ? x : weight * x.
template <class Codec>
struct prelu_forward_op {
  static constexpr bool kBackward = false;  // sources: x (, weight)
  static constexpr bool kPositional = false;
  using D = typename Codec::D;
  Splat<D> weight;
  prelu_forward_op(const kernels::Params&, double weight_value, const kernels::SideArrays&)
      : weight(weight_value) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const { return (*this)(d, x, weight()); }
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x, hn::Vec<D> w) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(w, x));
  }
};

// dx = x > 0 ? dy : weight * dy (dweight is reduced by the driver).
template <class Codec>
struct prelu_backward_op {
  static constexpr bool kBackward = true;  // sources: dy, x (, weight)
  static constexpr bool kPositional = false;
  using D = typename Codec::D;
  Splat<D> weight;
  prelu_backward_op(const kernels::Params&, double weight_value, const kernels::SideArrays&)
      : weight(weight_value) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> x) const {
    return (*this)(d, dy, x, weight());
  }
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> x, hn::Vec<D> w) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), dy, hn::Mul(w, dy));
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_PRELU_INL_H_

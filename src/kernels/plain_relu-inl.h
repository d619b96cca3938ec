// ReLU's vector functors (the C API's leaky_plain_relu_*, PyTorch's relu):
// bit for bit what leaky::reference computes for one element.

#if defined(LEAKY_KERNELS_PLAIN_RELU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_PLAIN_RELU_INL_H_
#undef LEAKY_KERNELS_PLAIN_RELU_INL_H_
#else
#define LEAKY_KERNELS_PLAIN_RELU_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// y = x < 0 ? 0 : x (PyTorch's relu): NaN fails the compare and passes
// through, -0 stays -0.
template <class Codec>
struct plain_relu_forward_op {
  using D = typename Codec::D;
  explicit plain_relu_forward_op(const kernels::Params&) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const {
    return hn::IfThenZeroElse(hn::Lt(x, hn::Zero(d)), x);
  }
};

// dx = saved <= 0 ? 0 : dy (PyTorch's threshold_backward at 0); the same
// from the input or the result.
template <class Codec>
struct plain_relu_backward_op {
  using D = typename Codec::D;
  explicit plain_relu_backward_op(const kernels::Params&) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> saved) const {
    return hn::IfThenZeroElse(hn::Le(saved, hn::Zero(d)), dy);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_PLAIN_RELU_INL_H_

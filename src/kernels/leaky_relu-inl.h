// LeakyReLU's vector functors: compare + multiply + select, nothing else, so
// each lane computes exactly what leaky::reference computes for one element.

#if defined(LEAKY_KERNELS_LEAKY_RELU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_LEAKY_RELU_INL_H_
#undef LEAKY_KERNELS_LEAKY_RELU_INL_H_
#else
#define LEAKY_KERNELS_LEAKY_RELU_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/kernels.h"
#include "kernels/splat-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// y = x > 0 ? x : x * slope. NaN fails the compare and takes the multiply,
// which keeps it NaN; -0 likewise gives -0 * slope.
template <class Codec>
struct leaky_relu_forward_op {
  using D = typename Codec::D;
  // Its only NaN results come from the multiply: an input NaN, quieted with
  // its payload, or the default NaN of -inf * 0; either has a zero low
  // half, so bf16 stores need no NaN guard (codecs-inl.h, StoreCodecOf).
  // The backward passes dy through unchanged, a signalling NaN too, so it
  // keeps the guard (which quiets it).
  static constexpr bool kQuietNaNsOnly = true;
  Splat<D> slope;
  explicit leaky_relu_forward_op(const kernels::Params& p) : slope(p.op.leaky_relu.negative_slope) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const {
    return hn::IfThenElse(hn::Gt(x, hn::Zero(d)), x, hn::Mul(x, slope()));
  }
};

// dx = saved > 0 ? dy : dy * slope.
template <class Codec>
struct leaky_relu_backward_op {
  using D = typename Codec::D;
  Splat<D> slope;
  explicit leaky_relu_backward_op(const kernels::Params& p) : slope(p.op.leaky_relu.negative_slope) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> saved) const {
    return hn::IfThenElse(hn::Gt(saved, hn::Zero(d)), dy, hn::Mul(dy, slope()));
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_LEAKY_RELU_INL_H_

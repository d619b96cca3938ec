// RReLU's vector functors (training; evaluation is LeakyReLU). Each negative
// element's slope comes from the random stream (random-inl.h), so they run in
// the positional loop.

#if defined(LEAKY_KERNELS_RRELU_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_RRELU_INL_H_
#undef LEAKY_KERNELS_RRELU_INL_H_
#else
#define LEAKY_KERNELS_RRELU_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/kernels.h"
#include "kernels/splat-inl.h"
#include "kernels/random-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// RReLU's training slope per lane, lower + u * (upper - lower), and what
// both directions tell the positional loop (flat, random words, no mask).
template <class D>
struct RreluSlopes {
  static constexpr bool kPositional = true;
  static constexpr bool kRandom = true;
  static constexpr bool kKeepBits = false;
  static constexpr bool kFlat = true;
  using T = hn::TFromD<D>;
  uint64_t seed, offset;
  Splat<D> low, range;
  explicit RreluSlopes(const kernels::Params& p)
      : seed(p.op.rrelu.seed),
        offset(p.op.rrelu.offset),
        low(p.op.rrelu.lower),
        range(static_cast<T>(static_cast<T>(p.op.rrelu.upper) - static_cast<T>(p.op.rrelu.lower))) {}
  HWY_INLINE hn::Vec<D> At(D d, const uint32_t* words) const {
    return hn::Add(low(), hn::Mul(UniformFromWords(d, words), range()));
  }
};

// Training forward: y = x <= 0 ? x * r : x; noise (the side output, may be null) gets
// x <= 0 ? r : 1.
template <class Codec>
struct rrelu_forward_op : RreluSlopes<typename Codec::D> {
  static constexpr bool kBackward = false;  // sources: x
  using D = typename Codec::D;
  using Storage = typename Codec::Storage;
  Storage* noise;
  rrelu_forward_op(const kernels::Params& p, double, const kernels::SideArrays& side)
      : RreluSlopes<D>(p), noise(static_cast<Storage*>(side.output)) {}
  HWY_INLINE hn::Vec<D> operator()(D d, const uint32_t* words, uint64_t e, size_t count,
                                   uint64_t, hn::Vec<D> x) const {
    const hn::Vec<D> r = this->At(d, words);
    const auto negative = hn::Le(x, hn::Zero(d));
    if (noise != nullptr) {
      const hn::Vec<D> v = hn::IfThenElse(negative, r, hn::Set(d, hn::TFromD<D>(1)));
      if (count == hn::Lanes(d)) Codec::Store(d, v, noise + e);
      else StorePartial<Codec>(d, v, count, noise + e);
    }
    return hn::IfThenElse(negative, hn::Mul(x, r), x);
  }
};

// Training backward: dx = x <= 0 ? dy * r : dy, r drawn again.
template <class Codec>
struct rrelu_backward_op : RreluSlopes<typename Codec::D> {
  static constexpr bool kBackward = true;  // sources: dy, x
  using D = typename Codec::D;
  rrelu_backward_op(const kernels::Params& p, double, const kernels::SideArrays&)
      : RreluSlopes<D>(p) {}
  HWY_INLINE hn::Vec<D> operator()(D d, const uint32_t* words, uint64_t, size_t, uint64_t,
                                   hn::Vec<D> dy, hn::Vec<D> x) const {
    return hn::IfThenElse(hn::Le(x, hn::Zero(d)), hn::Mul(dy, this->At(d, words)), dy);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_RRELU_INL_H_

// bias_act's vector functors: y = clamp(act(x + b) * gain, -clamp, +clamp)
// and its input gradient, computed in the compute type with the same
// operations, in the same order, as PyTorch's unfused sequence
// (add, leaky_relu/relu, mul, clamp) and its autograd, so f32 and f64 match
// that sequence bit for bit. The bias is either one value for the whole
// segment (set at construction) or a vector source (channels-last layouts).

#if defined(LEAKY_KERNELS_BIAS_ACT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_BIAS_ACT_INL_H_
#undef LEAKY_KERNELS_BIAS_ACT_INL_H_
#else
#define LEAKY_KERNELS_BIAS_ACT_INL_H_
#endif

#include "hwy/highway.h"
#include "kernels/kernels.h"
#include "kernels/splat-inl.h"
#include "kernels/random-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

template <class D>
struct BiasActMath {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  int activation;
  bool has_clamp;
  Splat<D> bias, alpha, gain, clamp_high, clamp_low;

  BiasActMath(const kernels::Params& p, double bias_value)
      : activation(p.op.bias_act.activation),
        has_clamp(p.op.bias_act.clamp >= 0),
        bias(bias_value),
        alpha(p.op.bias_act.alpha),
        gain(p.op.bias_act.gain),
        clamp_high(p.op.bias_act.clamp),
        clamp_low(-p.op.bias_act.clamp) {}

  HWY_INLINE V Activate(D d, V z) const {
    if (activation == LEAKY_ACT_LRELU) return hn::IfThenElse(hn::Gt(z, hn::Zero(d)), z, hn::Mul(z, alpha()));
    if (activation == LEAKY_ACT_RELU) return hn::IfThenZeroElse(hn::Lt(z, hn::Zero(d)), z);
    return z;
  }
  // torch.clamp: NaN passes through, bounds inclusive.
  HWY_INLINE V Clamp(V u) const {
    if (!has_clamp) return u;
    return hn::IfThenElse(hn::Gt(u, clamp_high()), clamp_high(),
                          hn::IfThenElse(hn::Lt(u, clamp_low()), clamp_low(), u));
  }
  HWY_INLINE V Forward(D d, V x, V b) const { return Clamp(hn::Mul(Activate(d, hn::Add(x, b)), gain())); }

  // dz from dy: clamp passes the gradient where low <= u <= high (PyTorch's
  // clamp_backward), then * gain, then the activation's backward at z.
  HWY_INLINE V Backward(D d, V dy, V x, V b) const {
    const V z = hn::Add(x, b);
    V g = dy;
    if (has_clamp) {
      const V u = hn::Mul(Activate(d, z), gain());
      const auto inside = hn::And(hn::Ge(u, clamp_low()), hn::Le(u, clamp_high()));
      g = hn::IfThenElseZero(inside, g);
    }
    g = hn::Mul(g, gain());
    if (activation == LEAKY_ACT_LRELU) return hn::IfThenElse(hn::Gt(z, hn::Zero(d)), g, hn::Mul(g, alpha()));
    if (activation == LEAKY_ACT_RELU) {
      // threshold_backward on the result relu(z): zero where relu(z) <= 0.
      const V a = hn::IfThenZeroElse(hn::Lt(z, hn::Zero(d)), z);
      return hn::IfThenZeroElse(hn::Le(a, hn::Zero(d)), g);
    }
    return g;
  }
};

template <class Codec>
struct bias_act_forward_op {
  static constexpr bool kBackward = false;  // sources: x (, bias)
  static constexpr bool kPositional = false;
  using D = typename Codec::D;
  BiasActMath<D> m;
  bias_act_forward_op(const kernels::Params& p, double bias_value, const kernels::SideArrays&)
      : m(p, bias_value) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x) const { return m.Forward(d, x, m.bias()); }
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> x, hn::Vec<D> b) const {
    return m.Forward(d, x, b);
  }
};

template <class Codec>
struct bias_act_backward_op {
  static constexpr bool kBackward = true;  // sources: dy, x (, bias)
  static constexpr bool kPositional = false;
  using D = typename Codec::D;
  BiasActMath<D> m;
  bias_act_backward_op(const kernels::Params& p, double bias_value, const kernels::SideArrays&)
      : m(p, bias_value) {}
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> x) const {
    return m.Backward(d, dy, x, m.bias());
  }
  HWY_INLINE hn::Vec<D> operator()(D d, hn::Vec<D> dy, hn::Vec<D> x, hn::Vec<D> b) const {
    return m.Backward(d, dy, x, b);
  }
};


// Dropout's kept-scale 1 / (1 - p), in the compute type.
template <class D>
Splat<D> DropoutScale(const kernels::Params& p) {
  using T = hn::TFromD<D>;
  return Splat<D>(static_cast<T>(T(1) / static_cast<T>(1.0 - p.op.bias_act.dropout_p)));
}

// bias_act then dropout: y = u * (kept ? 1 / (1 - p) : 0); the keep bits
// go to the mask (the side output).
template <class Codec>
struct bias_act_dropout_forward_op {
  static constexpr bool kBackward = false;  // sources: x (, bias)
  static constexpr bool kPositional = true;
  static constexpr bool kRandom = true;
  static constexpr bool kKeepBits = true;  // from 16 random bits per element
  using D = typename Codec::D;
  BiasActMath<D> m;
  Splat<D> scale;
  uint32_t threshold;
  uint64_t seed, offset;
  uint8_t* mask;
  bias_act_dropout_forward_op(const kernels::Params& p, double bias_value,
                              const kernels::SideArrays& side)
      : m(p, bias_value),
        scale(DropoutScale<D>(p)),
        threshold(p.op.bias_act.dropout_threshold),
        seed(p.op.bias_act.seed),
        offset(p.op.bias_act.offset),
        mask(static_cast<uint8_t*>(side.output)) {}
  HWY_INLINE hn::Vec<D> Apply(D d, size_t count, uint64_t kept_bits, hn::Vec<D> x,
                              hn::Vec<D> b) const {
    const auto kept =
        MaskFromBits(d, count >= 64 ? kept_bits : kept_bits & ((uint64_t{1} << count) - 1));
    return hn::Mul(m.Forward(d, x, b), hn::IfThenElseZero(kept, scale()));
  }
  HWY_INLINE hn::Vec<D> operator()(D d, const uint32_t*, uint64_t, size_t count,
                                   uint64_t kept_bits, hn::Vec<D> x) const {
    return Apply(d, count, kept_bits, x, m.bias());
  }
  HWY_INLINE hn::Vec<D> operator()(D d, const uint32_t*, uint64_t, size_t count,
                                   uint64_t kept_bits, hn::Vec<D> x, hn::Vec<D> b) const {
    return Apply(d, count, kept_bits, x, b);
  }
};

// Its gradient from the mask: dy * (kept ? 1 / (1 - p) : 0), then bias_act's.
template <class Codec>
struct bias_act_dropout_backward_op {
  static constexpr bool kBackward = true;  // sources: dy, x (, bias)
  static constexpr bool kPositional = true;
  static constexpr bool kRandom = false;
  static constexpr bool kKeepBits = false;
  using D = typename Codec::D;
  BiasActMath<D> m;
  Splat<D> scale;
  uint64_t seed = 0, offset = 0;
  const uint8_t* mask;
  bias_act_dropout_backward_op(const kernels::Params& p, double bias_value,
                               const kernels::SideArrays& side)
      : m(p, bias_value), scale(DropoutScale<D>(p)), mask(static_cast<const uint8_t*>(side.mask)) {}
  HWY_INLINE hn::Vec<D> Apply(D d, uint64_t e, size_t count, hn::Vec<D> dy, hn::Vec<D> x,
                              hn::Vec<D> b) const {
    const auto kept = MaskFromBits(d, LoadBits(mask, e, count));
    return m.Backward(d, hn::Mul(dy, hn::IfThenElseZero(kept, scale())), x, b);
  }
  HWY_INLINE hn::Vec<D> operator()(D d, const uint32_t*, uint64_t e, size_t count, uint64_t,
                                   hn::Vec<D> dy, hn::Vec<D> x) const {
    return Apply(d, e, count, dy, x, m.bias());
  }
  HWY_INLINE hn::Vec<D> operator()(D d, const uint32_t*, uint64_t e, size_t count, uint64_t,
                                   hn::Vec<D> dy, hn::Vec<D> x, hn::Vec<D> b) const {
    return Apply(d, e, count, dy, x, b);
  }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_BIAS_ACT_INL_H_

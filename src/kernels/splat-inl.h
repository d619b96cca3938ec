// A constant an op keeps for every vector it processes. SVE vectors are
// sizeless types that cannot be struct members, so ops keep the scalar and
// broadcast it where it is used; compilers hoist the broadcast out of loops.

#if defined(LEAKY_KERNELS_SPLAT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_SPLAT_INL_H_
#undef LEAKY_KERNELS_SPLAT_INL_H_
#else
#define LEAKY_KERNELS_SPLAT_INL_H_
#endif

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <class D>
struct Splat {
  hn::TFromD<D> value;
  explicit Splat(double v) : value(static_cast<hn::TFromD<D>>(v)) {}
  HWY_INLINE hn::Vec<D> operator()() const { return hn::Set(D(), value); }
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_SPLAT_INL_H_

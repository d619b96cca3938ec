// Compiles every kernel of kernel_list.inc once per SIMD target and exports
// one table per target for Highway's runtime dispatch.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "leaky/leaky.hpp"  // float16, bfloat16: the bias scalars of channel kernels
#include "kernels/kernels.h"
#include "kernels/activations-inl.h"
#include "kernels/bias_act-inl.h"
#include "kernels/leaky_relu-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// Walks [start, start + n) in segments of one bias value (inner > 1: a row
// of `inner` elements of one channel) or of one run of channels (inner == 1,
// channels-last: the bias is a second source), and runs the shared
// elementwise loop on each. Without a bias, -0 is added: it leaves every x,
// -0 included, as it is.
template <class Codec, class Op, class Type>
void ChannelElementwise(size_t n, size_t start, const typename Codec::Storage* dy,
                        const typename Codec::Storage* x, const Type* bias,
                        typename Codec::Storage* dst, const kernels::Params& p) {
  using Storage = typename Codec::Storage;
  const Storage* bias_storage = reinterpret_cast<const Storage*>(bias);
  for (size_t i = 0; i < n;) {
    const size_t index = start + i;
    size_t segment;
    if (bias == nullptr || p.inner > 1 || p.channels == 1) {
      double value = -0.0;
      if (bias == nullptr) {
        segment = n - i;
      } else {
        const size_t c = (index / p.inner) % p.channels;
        segment = HWY_MIN(n - i, p.inner - index % p.inner);
        if (p.channels == 1) segment = n - i;
        // Half types widen through float, their compute type.
        if constexpr (sizeof(Type) == 2) value = static_cast<float>(bias[c]);
        else value = static_cast<double>(bias[c]);
      }
      const Op op(p, value);
      if constexpr (Op::kBackward) {
        Elementwise<Codec>(segment, dst + i, p.stream_stores, op, dy + i, x + i);
      } else {
        Elementwise<Codec>(segment, dst + i, p.stream_stores, op, x + i);
      }
    } else {
      const size_t c = index % p.channels;
      segment = HWY_MIN(n - i, p.channels - c);
      const Op op(p, 0.0);
      if constexpr (Op::kBackward) {
        Elementwise<Codec>(segment, dst + i, p.stream_stores, op, dy + i, x + i,
                           bias_storage + c);
      } else {
        Elementwise<Codec>(segment, dst + i, p.stream_stores, op, x + i, bias_storage + c);
      }
    }
    i += segment;
  }
}

#define LEAKY_OP(op, arity)
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type)                                           \
  void op##_##Codec(size_t n, const void* src, void* dst, const kernels::Params& params) { \
    using Storage = typename Codec::Storage;                                                 \
    Elementwise<Codec>(n, static_cast<Storage*>(dst), params.stream_stores,                  \
                       op##_op<Codec>(params), static_cast<const Storage*>(src));            \
  }
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type)                                          \
  void op##_##Codec(size_t n, const void* src0, const void* src1, void* dst,                 \
                    const kernels::Params& params) {                                         \
    using Storage = typename Codec::Storage;                                                 \
    Elementwise<Codec>(n, static_cast<Storage*>(dst), params.stream_stores,                  \
                       op##_op<Codec>(params), static_cast<const Storage*>(src0),            \
                       static_cast<const Storage*>(src1));                                   \
  }
#define LEAKY_CHANNEL_KERNEL(op, dtype, Codec, Type)                                         \
  void op##_##Codec(size_t n, size_t start, const void* dy, const void* x, const void* bias,   \
                    void* dst, const kernels::Params& params) {                                 \
    using Storage = typename Codec::Storage;                                                 \
    ChannelElementwise<Codec, op##_op<Codec>, Type>(                                         \
        n, start, static_cast<const Storage*>(dy), static_cast<const Storage*>(x),           \
        static_cast<const Type*>(bias), static_cast<Storage*>(dst), params);                 \
  }
#include "kernels/kernel_list.inc"
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_CHANNEL_KERNEL

kernels::KernelTable MakeTable() {
  kernels::KernelTable table{};
  table.target_name = hwy::TargetName(HWY_TARGET);
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_CHANNEL_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#include "kernels/kernel_list.inc"
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_CHANNEL_KERNEL
  return table;
}

const kernels::KernelTable* GetTable() {
  static const kernels::KernelTable table = MakeTable();
  return &table;
}
#undef LEAKY_OP

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace leaky {
HWY_EXPORT(GetTable);

namespace kernels {
const KernelTable& Dispatched() { return *HWY_DYNAMIC_DISPATCH(GetTable)(); }
}  // namespace kernels
}  // namespace leaky
#endif  // HWY_ONCE

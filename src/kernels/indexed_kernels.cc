// Compiles the indexed kernels of kernel_list.inc (per-channel and
// positional ops) once per SIMD target; kernels.cc puts them in its table.
// A translation unit of its own so that the two halves compile in parallel.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/indexed_kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "leaky/leaky.hpp"  // float16, bfloat16: the per-channel scalars
#include "kernels/kernels.h"
#include "kernels/bias_act-inl.h"
#include "kernels/prelu-inl.h"
#include "kernels/rrelu-inl.h"
#include "kernels/random-inl.h"
#include "kernels/q8_bias_act-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// One segment through the loop its op needs.
template <class Codec, class Op, class... Sources>
HWY_INLINE void RunSegment(size_t n, uint64_t index, typename Codec::Storage* dst,
                           const kernels::Params& p, Op& op, const Sources*... srcs) {
  if constexpr (Op::kPositional) {
    PositionalElementwise<Codec>(n, index, dst, p.common.stream_stores, op, srcs...);
  } else {
    Elementwise<Codec>(n, dst, p.common.stream_stores, op, srcs...);
  }
}

// Flat ops (RReLU) take no per-channel values.
template <class Op>
inline constexpr bool kFlatOp = requires { Op::kFlat; };

// Walks [start, start + n) in segments of one per-channel value (inner > 1:
// a row of `inner` elements of one channel) or of one run of channels
// (inner == 1, channels-last: the values are a second source), and runs the
// op's loop on each. Without a per-channel array, -0 is the value: as a bias
// it leaves every x, -0 included, as it is.
template <class Codec, class Op, class Type>
void ChannelElementwise(size_t n, size_t start, const typename Codec::Storage* dy,
                        const typename Codec::Storage* x, const Type* values,
                        const kernels::SideArrays& side,
                        typename Codec::Storage* dst, const kernels::Params& p) {
  using Storage = typename Codec::Storage;
  const Storage* value_storage = reinterpret_cast<const Storage*>(values);
  for (size_t i = 0; i < n;) {
    const size_t index = start + i;
    size_t segment;
    if (kFlatOp<Op> || values == nullptr || p.common.inner > 1 || p.common.channels == 1) {
      double value = -0.0;
      if (values == nullptr || p.common.channels == 1) {
        segment = n - i;
      } else {
        segment = HWY_MIN(n - i, p.common.inner - index % p.common.inner);
      }
      if (values != nullptr) {
        const size_t c = p.common.channels == 1 ? 0 : (index / p.common.inner) % p.common.channels;
        // Half types widen through float, their compute type.
        if constexpr (sizeof(Type) == 2) value = static_cast<float>(values[c]);
        else value = static_cast<double>(values[c]);
      }
      Op op(p, value, side);
      if constexpr (Op::kBackward) {
        RunSegment<Codec>(segment, index, dst + i, p, op, dy + i, x + i);
      } else {
        RunSegment<Codec>(segment, index, dst + i, p, op, x + i);
      }
    } else if constexpr (!kFlatOp<Op>) {
      const size_t c = index % p.common.channels;
      segment = HWY_MIN(n - i, p.common.channels - c);
      Op op(p, 0.0, side);
      if constexpr (Op::kBackward) {
        RunSegment<Codec>(segment, index, dst + i, p, op, dy + i, x + i, value_storage + c);
      } else {
        RunSegment<Codec>(segment, index, dst + i, p, op, x + i, value_storage + c);
      }
    }
    i += segment;
  }
}

#define LEAKY_OP(op, arity)
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type)
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type)
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)                                         \
  void op##_##Codec(size_t n, size_t start, const void* dy, const void* x, const void* values, \
                    void* dst, const kernels::SideArrays& side, const kernels::Params& params) { \
    using Storage = typename Codec::Storage;                                                 \
    ChannelElementwise<Codec, op##_op<Codec>, Type>(                                         \
        n, start, static_cast<const Storage*>(dy), static_cast<const Storage*>(x),           \
        static_cast<const Type*>(values), side, static_cast<Storage*>(dst), params);         \
  }
#define LEAKY_REQUANTIZE_KERNEL(op, Out)                                                     \
  void op(size_t n, size_t start, const void* /*dy*/, const void* acc, const void* bias,      \
          void* dst, const kernels::SideArrays& /*side*/, const kernels::Params& params) {     \
    q8_bias_act::Run<Out>(n, start, static_cast<const int32_t*>(acc),                          \
                          static_cast<const int32_t*>(bias), static_cast<Out*>(dst), params);  \
  }
#include "kernels/kernel_list.inc"
#undef LEAKY_INDEXED_KERNEL
#undef LEAKY_REQUANTIZE_KERNEL

// Called by kernels.cc's MakeTable for the same target.
void FillIndexedKernels(kernels::KernelTable& table) {
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_REQUANTIZE_KERNEL(op, Out) table.op = &op;
#include "kernels/kernel_list.inc"
#undef LEAKY_INDEXED_KERNEL
#undef LEAKY_REQUANTIZE_KERNEL
}
#undef LEAKY_OP
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

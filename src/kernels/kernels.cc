// Compiles the Unary and Binary kernels of kernel_list.inc once per SIMD
// target and exports one table per target (with indexed_kernels.cc's
// kernels) for Highway's runtime dispatch.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/kernels.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "kernels/kernels.h"
#include "kernels/elu-inl.h"
#include "kernels/plain_relu-inl.h"
#include "kernels/leaky_relu-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// Defined in indexed_kernels.cc, compiled for the same targets.
void FillIndexedKernels(kernels::KernelTable& table);

#define LEAKY_OP(op, arity)
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type)                                           \
  void op##_##Codec(size_t n, const void* src, void* dst, const kernels::Params& params) { \
    using Storage = typename Codec::Storage;                                                 \
    Elementwise<Codec>(n, static_cast<Storage*>(dst), params.common.stream_stores,                  \
                       op##_op<Codec>(params), static_cast<const Storage*>(src));            \
  }
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type)                                          \
  void op##_##Codec(size_t n, const void* src0, const void* src1, void* dst,                 \
                    const kernels::Params& params) {                                         \
    using Storage = typename Codec::Storage;                                                 \
    Elementwise<Codec>(n, static_cast<Storage*>(dst), params.common.stream_stores,                  \
                       op##_op<Codec>(params), static_cast<const Storage*>(src0),            \
                       static_cast<const Storage*>(src1));                                   \
  }
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)
#include "kernels/kernel_list.inc"
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_INDEXED_KERNEL

kernels::KernelTable MakeTable() {
  kernels::KernelTable table{};
  table.target_name = hwy::TargetName(HWY_TARGET);
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)
#include "kernels/kernel_list.inc"
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_INDEXED_KERNEL
  FillIndexedKernels(table);
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

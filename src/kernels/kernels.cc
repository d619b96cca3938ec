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
#include "kernels/byte_lookup-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// Defined in indexed_kernels.cc, compiled for the same targets.
void FillIndexedKernels(kernels::KernelTable& table);

#define LEAKY_OP(op, arity)
// In place, the loop gets one pointer for its loads and stores: with two
// registers holding the same address, Zen 4 ran f32 in place at 64 Mi at
// 0.85-0.92 of a one-pointer loop (docs/design.md).
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type)                                           \
  void op##_##Codec(size_t n, const void* src, void* dst, const kernels::Params& params) { \
    using Storage = typename Codec::Storage;                                                 \
    Storage* out = static_cast<Storage*>(dst);                                               \
    const auto kernel_op = op##_op<Codec>(params);                                           \
    if (src == dst) {                                                                        \
      Elementwise<Codec>(n, out, params.common.stream_stores, kernel_op,                     \
                         static_cast<const Storage*>(out));                                  \
    } else {                                                                                 \
      Elementwise<Codec>(n, out, params.common.stream_stores, kernel_op,                     \
                         static_cast<const Storage*>(src));                                  \
    }                                                                                        \
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

void byte_lookup(size_t n, const void* src, void* dst, const kernels::Params& params) {
  ByteLookup(n, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst),
             params.op.byte_table.table, params.common.stream_stores);
}

void byte_select(size_t n, const void* dy, const void* saved, void* dst,
                 const kernels::Params& params) {
  ByteSelect(n, static_cast<const uint8_t*>(dy), static_cast<const uint8_t*>(saved),
             static_cast<uint8_t*>(dst), params.op.byte_table.table, params.op.byte_table.pass,
             params.op.byte_table.keep, params.common.stream_stores);
}

// PReLU's tables, one per channel (the side input, channels x 256 bytes),
// over [outer, channels, inner]: a row of `inner` elements shares a table;
// channels-last (inner == 1) indexes each element's own.
void byte_lookup_channels(size_t n, size_t start, const void* /*dy*/, const void* src,
                          const void* side_input, void* dst, const kernels::SideArrays& /*side*/,
                          const kernels::Params& params) {
  const auto* x = static_cast<const uint8_t*>(src);
  auto* y = static_cast<uint8_t*>(dst);
  const auto* tables = static_cast<const uint8_t*>(side_input);
  const size_t channels = params.common.channels, inner = params.common.inner;
  const bool stream = params.common.stream_stores;
  if (channels == 1) return ByteLookup(n, x, y, tables, stream);
  if (inner == 1) {
    size_t channel = start % channels;
    for (size_t i = 0; i < n; ++i) {
      y[i] = tables[256 * channel + x[i]];
      if (++channel == channels) channel = 0;
    }
    return;
  }
  for (size_t i = 0; i < n;) {
    const size_t index = start + i;
    const size_t segment = HWY_MIN(n - i, inner - index % inner);
    ByteLookup(segment, x + i, y + i, tables + 256 * ((index / inner) % channels), stream);
    i += segment;
  }
}

// PReLU's backward: dx = pass[x] ? keep[dy] : tables[channel][dy], the
// per-channel tables (round(weight[c] * dy)) as the side input, pass and
// keep shared (kernels.h's ByteTableParams), segments as above.
void byte_select_channels(size_t n, size_t start, const void* dy_bytes, const void* src,
                          const void* side_input, void* dst, const kernels::SideArrays& /*side*/,
                          const kernels::Params& params) {
  const auto* dy = static_cast<const uint8_t*>(dy_bytes);
  const auto* x = static_cast<const uint8_t*>(src);
  auto* dx = static_cast<uint8_t*>(dst);
  const auto* tables = static_cast<const uint8_t*>(side_input);
  const kernels::ByteTableParams& p = params.op.byte_table;
  const size_t channels = params.common.channels, inner = params.common.inner;
  const bool stream = params.common.stream_stores;
  if (channels == 1) return ByteSelect(n, dy, x, dx, tables, p.pass, p.keep, stream);
  if (inner == 1) {
    size_t channel = start % channels;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t g = dy[i];
      dx[i] = p.pass[x[i]] != 0 ? (p.keep != nullptr ? p.keep[g] : g) : tables[256 * channel + g];
      if (++channel == channels) channel = 0;
    }
    return;
  }
  for (size_t i = 0; i < n;) {
    const size_t index = start + i;
    const size_t segment = HWY_MIN(n - i, inner - index % inner);
    ByteSelect(segment, dy + i, x + i, dx + i, tables + 256 * ((index / inner) % channels), p.pass,
               p.keep, stream);
    i += segment;
  }
}

void byte_pair_lookup(size_t n, const void* dy, const void* saved, void* dst,
                      const kernels::Params& params) {
  BytePairLookup(n, static_cast<const uint8_t*>(dy), static_cast<const uint8_t*>(saved),
                 static_cast<uint8_t*>(dst), params.op.byte_table.table);
}

kernels::KernelTable MakeTable() {
  kernels::KernelTable table{};
  table.target_name = hwy::TargetName(HWY_TARGET);
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type) table.op[dtype] = &op##_##Codec;
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)
#define LEAKY_BYTE_KERNEL(op, arity) table.op = &op;
#include "kernels/kernel_list.inc"
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_INDEXED_KERNEL
#undef LEAKY_BYTE_KERNEL
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

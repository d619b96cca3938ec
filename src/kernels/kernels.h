// The kernel interface: pure functions (n, sources..., destination, params),
// one per (op, dtype, SIMD target), gathered in a table per target.
// Drivers (src/ops) own validation, planning and threads; kernels own none.
#ifndef LEAKY_KERNELS_KERNELS_H_
#define LEAKY_KERNELS_KERNELS_H_

#include <cstddef>

#include "leaky/leaky.h"

namespace leaky::kernels {

// The scalar arguments of every op; each kernel reads its own and rounds
// them once to its compute type.
struct Params {
  double negative_slope = 0.0;  // LeakyReLU
  double alpha = 0.0;           // ELU: negative-side scale alpha
  double scale = 1.0;           // ELU: output scale
  double input_scale = 1.0;     // ELU: input scale on the negative side
  int activation = 0;           // bias_act: a leaky_activation; alpha is its slope
  double gain = 1.0;            // bias_act
  double clamp = -1.0;          // bias_act: < 0 for none
  size_t channels = 1;          // bias_act: x is [outer, channels, inner]
  size_t inner = 1;
  bool stream_stores = false;   // non-temporal stores for whole aligned vectors
};

using UnaryKernel = void (*)(size_t n, const void* src, void* dst, const Params& params);
using BinaryKernel = void (*)(size_t n, const void* src0, const void* src1, void* dst,
                              const Params& params);
// Per-channel ops: elements [start, start + n) of the flat [outer, channels,
// inner] array; `dy` is null for forward ops, `bias` may be null.
using ChannelKernel = void (*)(size_t n, size_t start, const void* dy, const void* x,
                               const void* bias, void* dst, const Params& params);

inline constexpr int kDtypeCount = 4;  // indexed by leaky_dtype

struct KernelTable {
  const char* target_name;
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) 
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type)
#define LEAKY_CHANNEL_KERNEL(op, dtype, Codec, Type)
#define LEAKY_OP(op, arity) arity##Kernel op[kDtypeCount];
#include "kernels/kernel_list.inc"
#undef LEAKY_OP
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_CHANNEL_KERNEL
};

// The table of the target that Highway's runtime dispatch currently picks
// (tests switch it with hwy::SetSupportedTargetsForTest).
const KernelTable& Dispatched();

}  // namespace leaky::kernels

#endif  // LEAKY_KERNELS_KERNELS_H_

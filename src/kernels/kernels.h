// The kernel interface: pure functions (n, sources..., destination, params),
// one per (op, dtype, SIMD target), gathered in a table per target.
// Drivers (src/ops) own validation, planning and threads; kernels own none.
#ifndef LEAKY_KERNELS_KERNELS_H_
#define LEAKY_KERNELS_KERNELS_H_

#include <cstddef>
#include <cstdint>

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
  size_t channels = 1;          // channel ops: x is [outer, channels, inner]
  size_t inner = 1;
  double lower = 0.0;           // RReLU: slopes from U(lower, upper)
  double upper = 0.0;
  double dropout_p = 0.0;       // bias_act with dropout
  uint32_t dropout_threshold = 0;  // kept when the stream word >= this
  uint64_t seed = 0;            // the random stream (leaky.h)
  uint64_t offset = 0;
  bool stream_stores = false;   // non-temporal stores for whole aligned vectors
};

using UnaryKernel = void (*)(size_t n, const void* src, void* dst, const Params& params);
using BinaryKernel = void (*)(size_t n, const void* src0, const void* src1, void* dst,
                              const Params& params);
// Per-channel and positional ops: elements [start, start + n) of the flat
// [outer, channels, inner] array (start also places them in the random
// stream and the dropout mask); `dy` is null for forward ops, `bias` (or
// PReLU's weight) may be null; `aux` is the op's second array, indexed from
// element 0: RReLU's noise output (may be null), the dropout mask (written
// forward, read backward).
using ChannelKernel = void (*)(size_t n, size_t start, const void* dy, const void* x,
                               const void* bias, void* dst, void* aux, const Params& params);

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

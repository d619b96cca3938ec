// The kernel interface: pure functions (n, sources..., destination, params),
// one per (op, dtype, SIMD target), gathered in a table per target.
// Drivers (src/ops) own validation, planning and threads; kernels own none.
#ifndef LEAKY_KERNELS_KERNELS_H_
#define LEAKY_KERNELS_KERNELS_H_

#include <cstddef>
#include <cstdint>

#include "leaky/leaky.h"

// A kernel loop's per-vector lambdas, inlined by force: GCC 12 otherwise
// calls some of them out of line, reloading every splatted constant from
// the closure each time (the epilogue's folded path ran 2x slower; the AVX2
// byte lookup called its lambda once per 32 bytes).
#define LEAKY_INLINE_LAMBDA __attribute__((always_inline))

namespace leaky::kernels {

// Asks for the cache line `ahead` bytes past `p`, to read or to write. The
// address is computed as an integer: it may lie past the array, where a
// prefetch never faults (dropout's and the epilogue's loops ask 8 KiB ahead).
inline __attribute__((always_inline)) void PrefetchAhead(const void* p, size_t ahead,
                                                         bool write = false) {
  const void* at = reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(p) + ahead);
  if (write) {
    __builtin_prefetch(at, 1, 3);  // the builtin's arguments must be constants
  } else {
    __builtin_prefetch(at, 0, 3);
  }
}

// What every kernel may read besides its op's own scalars.
struct KernelCommon {
  size_t channels = 1;         // [outer, channels, inner] layout of indexed ops
  size_t inner = 1;
  bool stream_stores = false;  // non-temporal stores for whole aligned vectors (the plan's)
};

// Each op's own scalars (XNNPACK's per-op params). Kernels round them once
// to their compute type. ReLU and PReLU have none.
struct LeakyReluParams {
  double negative_slope;
};
struct EluParams {
  double alpha;        // negative-side scale
  double scale;        // output scale
  double input_scale;  // input scale on the negative side
};
struct BiasActParams {
  int activation;      // a leaky_activation; alpha is its slope
  double alpha, gain;
  double clamp;        // < 0 for none
  double dropout_p;    // with dropout only:
  uint32_t dropout_threshold;  // kept when the stream's 16 bits are >= this
  uint64_t seed, offset;       // the random stream (leaky.h)
};
struct RreluParams {
  double lower, upper;  // slopes from U(lower, upper)
  uint64_t seed, offset;
};
// The 8-bit ops' tables (256 entries each; byte_pair_lookup's 65536).
struct ByteTableParams {
  const uint8_t* table;
  const uint8_t* pass;  // byte_select(_channels): 0xFF where dy passes (through keep)
  const uint8_t* keep;  // byte_select(_channels): what a passed dy becomes; null: dy itself
};
// Channels-last q8_bias_act calls of at most this many channels run their
// rows as one contiguous stream (q8_bias_act-inl.h's ChannelsLast: each
// kernel call of 8 rows or more, on targets with FMA), so the plan may
// stream their stores. Shorter kernel calls (a call's last tile), targets
// without FMA and wider rows run one row at a time, fencing after each
// row when streamed; by itself the plan streams only calls moving 16 MiB or
// more, whose tiles hold far more than 8 rows (a call's last tile may not).
constexpr size_t kQ8TableChannels = 512;
// The conv epilogue (eight_bit.h's q8_bias_act): the multipliers, `channels`
// of each or one (per tensor); the clamp within the output type's range.
struct Q8BiasActParams {
  const double* positive_multiplier;
  const double* negative_multiplier;
  bool per_channel;
  int32_t zero_point, output_min, output_max;
};
union OpParams {
  LeakyReluParams leaky_relu;
  EluParams elu;
  BiasActParams bias_act;
  RreluParams rrelu;
  ByteTableParams byte_table;
  Q8BiasActParams q8_bias_act;
};

struct Params {
  KernelCommon common;
  OpParams op{};
};

using UnaryKernel = void (*)(size_t n, const void* src, void* dst, const Params& params);
using BinaryKernel = void (*)(size_t n, const void* src0, const void* src1, void* dst,
                              const Params& params);
// The side arrays of an indexed kernel, indexed from element 0 (not from
// the tile's start): what it reads or writes beside dst.
struct SideArrays {
  const void* mask = nullptr;  // dropout backward: the mask, read back
  void* output = nullptr;      // the side output: rrelu forward's noise (optional),
                               // dropout forward's mask
};
// Kernels that need each element's absolute index: its channel in the
// [outer, channels, inner] view, or its place in the random stream and the
// dropout mask. They run on elements [start, start + n). Per op:
//   op                    dy        x   side_input  side arrays
//   bias_act(_dropout)    backward  x   bias (opt)  dropout: mask (output forward, read backward)
//   prelu                 backward  x   weight      -
//   rrelu                 backward  x   -           forward: noise (output, optional)
//   q8_bias_act           -         acc bias (opt)  - (x int32, dst 8-bit)
//   byte_lookup_channels  -         x   channel tables  -
//   byte_select_channels  dy        x   channel tables  - (pass, keep in the params)
using IndexedKernel = void (*)(size_t n, size_t start, const void* dy, const void* x,
                               const void* side_input, void* dst, const SideArrays& side,
                               const Params& params);

inline constexpr int kDtypeCount = 4;  // indexed by leaky_dtype

struct KernelTable {
  const char* target_name;
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) 
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type)
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)
#define LEAKY_OP(op, arity) arity##Kernel op[kDtypeCount];
#define LEAKY_BYTE_KERNEL(op, arity) arity##Kernel op;
#define LEAKY_REQUANTIZE_KERNEL(op, Out) IndexedKernel op;
#include "kernels/kernel_list.inc"
#undef LEAKY_OP
#undef LEAKY_BYTE_KERNEL
#undef LEAKY_REQUANTIZE_KERNEL
#undef LEAKY_UNARY_KERNEL
#undef LEAKY_BINARY_KERNEL
#undef LEAKY_INDEXED_KERNEL
};

// The table of the target that Highway's runtime dispatch currently picks
// (tests switch it with hwy::SetSupportedTargetsForTest).
const KernelTable& Dispatched();

}  // namespace leaky::kernels

#endif  // LEAKY_KERNELS_KERNELS_H_

// What every op driver shares: argument checks that run before any output
// byte is written, the plan for this CPU, and the per-core tile loop on the
// thread pool.
#ifndef LEAKY_OPS_DRIVER_H_
#define LEAKY_OPS_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/tiling.h"

// Returns from the calling driver when a check fails.
#define LEAKY_RETURN_IF_ERROR(expression)                \
  do {                                                   \
    const leaky_status leaky_status_ = expression;       \
    if (leaky_status_ != LEAKY_OK) return leaky_status_; \
  } while (0)

namespace leaky::internal {

// Bytes per element, or 0 with the error recorded.
size_t ElementBytes(const char* function, leaky_dtype dtype, leaky_status* status);

// Fills defaults (NULL -> all defaults) and rejects out-of-range fields.
leaky_status ResolveOptions(const char* function, const leaky_options* options,
                            leaky_options* resolved);

// Rejects null pointers (n > 0) and byte counts that wrap the address space.
leaky_status CheckBuffer(const char* function, const char* name, const void* pointer, size_t n,
                         size_t element_bytes);

// In-place (output == input) is allowed; any other overlap is an error.
leaky_status CheckNoPartialOverlap(const char* function, const char* output_name,
                                   const void* output, const char* input_name, const void* input,
                                   size_t bytes);

// Any overlap at all is an error (for buffers that are never in place,
// such as a bias read while the output is written).
leaky_status CheckDisjoint(const char* function, const char* a_name, const void* a,
                           size_t a_bytes, const char* b_name, const void* b, size_t b_bytes);

leaky_status CheckFiniteParameter(const char* function, const char* name, double value);

// A call over n elements takes random-stream positions [offset, offset + n):
// they must not run past 2^64 (RReLU, dropout).
leaky_status CheckStreamRange(const char* function, uint64_t offset, size_t n);

// In-place calls keep the automatic policy from streaming: the output lines
// were just read, so they sit in cache and a non-temporal store only evicts
// them (measured: f32 in-place, 64 Mi elements, 2 threads, 14.5 GB/s
// streaming vs oneDNN's 20.0 cached, same run). An explicit choice stands.
leaky_options InPlacePolicy(const leaky_options& options, bool in_place);

// Plans an elementwise op over `streams` arrays of n elements for this CPU.
leaky_tiling PlanForCpu(size_t n, size_t element_bytes, uint32_t streams,
                        const leaky_options& options, const void* output, double negative_slope);

// Runs `kernel` over every tile of the plan, on the pool when cores_used > 1.
// The plan decides params.stream_stores.
void RunTiles(const leaky_tiling& tiling, kernels::UnaryKernel kernel, kernels::Params params,
              const void* src, void* dst);
void RunTiles(const leaky_tiling& tiling, kernels::BinaryKernel kernel, kernels::Params params,
              const void* src0, const void* src1, void* dst);
// Per-channel kernels: dy (null for forward) and x advance with the tile,
// the bias and aux (see ChannelKernel) do not.
void RunTiles(const leaky_tiling& tiling, kernels::ChannelKernel kernel, kernels::Params params,
              const void* dy, const void* x, const void* bias, void* dst, void* aux = nullptr);

// A scalar argument of an op, checked to be finite.
struct NamedValue {
  const char* name;
  double value;
};

using UnaryKernels = kernels::UnaryKernel[kernels::kDtypeCount];
using BinaryKernels = kernels::BinaryKernel[kernels::kDtypeCount];

// The whole driver of an elementwise op, y = op(x): checks dtype, options,
// every parameter, pointers and overlap before any byte is written, then
// plans and runs the dispatched kernel `table_field`.
leaky_status RunUnaryOp(const char* function, leaky_dtype dtype, size_t n, const void* x, void* y,
                        const leaky_options* options, std::initializer_list<NamedValue> parameters,
                        UnaryKernels kernels::KernelTable::*table_field,
                        const kernels::Params& params);

// dx = op(dy, saved). `unsupported` (a message, or null) is reported as
// LEAKY_ERROR_UNSUPPORTED once the common checks pass.
leaky_status RunBinaryOp(const char* function, leaky_dtype dtype, size_t n, const void* dy,
                         const void* saved, void* dx, const leaky_options* options,
                         std::initializer_list<NamedValue> parameters, const char* unsupported,
                         BinaryKernels kernels::KernelTable::*table_field,
                         const kernels::Params& params);

// Tests lower this to exercise multi-core plans on small arrays.
void SetMinBytesPerCoreForTesting(uint64_t bytes);  // 0 restores the default

}  // namespace leaky::internal

#endif  // LEAKY_OPS_DRIVER_H_

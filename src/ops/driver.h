// The op drivers' common path: describe a call (dtype, options, the op's
// scalars), check its operands (ops/operands.h), plan it for this CPU
// (plan/cpu_plan.h) and run its kernel tile by tile on the threads
// (runtime/parallel.h). Each op's entry point (leaky_relu.cc, elu.cc, ...)
// adds only its own rules and parameters.
#ifndef LEAKY_OPS_DRIVER_H_
#define LEAKY_OPS_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/operands.h"

namespace leaky::internal {

// A call whose dtype, options and scalars have been checked.
struct Call {
  const char* function;
  leaky_dtype dtype;
  size_t n;
  size_t element_bytes;
  leaky_options options;  // resolved: num_threads >= 1
};

// Checks dtype, options and that every scalar is finite; fills *call.
leaky_status DescribeCall(const char* function, leaky_dtype dtype, size_t n,
                          const leaky_options* options, std::initializer_list<NamedValue> scalars,
                          Call* call);

// Plans an indexed kernel's pass over `streams` arrays of call.n elements
// (in place when dst is x or dy), then runs it tile by tile on the call's
// threads. dy (null for forward) and x advance with the tile; side_input and
// side_array do not (kernels.h lists them per op). The plan decides
// params.common.stream_stores.
void RunIndexedOp(const Call& call, uint32_t streams, kernels::IndexedKernel kernel,
                  const kernels::Params& params, const void* dy, const void* x,
                  const void* side_input, void* dst, void* side_array = nullptr);

using UnaryKernels = kernels::UnaryKernel[kernels::kDtypeCount];
using BinaryKernels = kernels::BinaryKernel[kernels::kDtypeCount];

// y = op(x) for a described call: checks x and y (y may be x), plans, runs
// the dispatched kernel `field`.
leaky_status RunUnaryOp(const Call& call, const void* x, void* y,
                        UnaryKernels kernels::KernelTable::*field, const kernels::Params& params);

// dx = op(dy, saved), dx may be dy or saved (named `saved_name` in errors).
leaky_status RunBinaryOp(const Call& call, const void* dy, const void* saved, void* dx,
                         BinaryKernels kernels::KernelTable::*field, const kernels::Params& params,
                         const char* saved_name = "saved");

}  // namespace leaky::internal

#endif  // LEAKY_OPS_DRIVER_H_

// The op drivers' common path, describe then run: an op's entry point
// (leaky_relu.cc, elu.cc, ...) describes its call once - dtype, options and
// scalars (DescribeCall), then an OpDesc with its operands in the kernel's
// argument slots, its typed kernel and parameters - and RunOp checks every
// operand rule once (runtime/operands.h), plans the pass for this CPU
// (plan/cpu_plan.h) and runs the kernel tile by tile on the threads
// (runtime/parallel.h). Each op adds only its own rules and parameters.
#ifndef LEAKY_OPS_DRIVER_H_
#define LEAKY_OPS_DRIVER_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <variant>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/tiling.h"
#include "runtime/operands.h"

namespace leaky::internal {

// A call whose dtype, options and scalars have been checked.
struct Call {
  const char* function;
  leaky_dtype dtype;
  size_t n;
  size_t element_bytes;
  leaky_options options;  // resolved: num_threads >= 1
};

// The automatic store policy (stream_stores -1) resolved to cached stores;
// an explicit choice stands. For calls whose non-temporal stores lose
// (measured in docs/design.md, "Automatic non-temporal stores"): in place
// (the output lines were just read), rows too short to stream, and ops
// whose loop is compute-bound (ELU's exponentials, the Philox rounds of
// RReLU in training and of dropout's forward).
void KeepStoresCached(leaky_options* options);

// Checks dtype, options and that every scalar is finite; fills *call.
[[nodiscard]] leaky_status DescribeCall(const char* function, leaky_dtype dtype, size_t n,
                                        const leaky_options* options,
                                        std::initializer_list<NamedValue> scalars, Call* call);

// One argument slot of a kernel: absent while `name` is null; an optional
// one may be null (an absent bias, no noise output).
template <class Pointer>
struct Slot {
  const char* name = nullptr;
  Pointer pointer = nullptr;
  size_t count = 0;          // elements
  size_t element_bytes = 0;  // 1 for the bit mask's bytes
  bool optional = false;
};

// An op call described once (as oneDNN's primitive descriptors). Slots by
// role: dy and x are read elementwise (dy backward only; x is the unary
// kernels' source and the binary kernels' second), side_input per channel
// (bias, weight), mask read back (dropout backward); dst written
// elementwise (it may be an input exactly: in place), side_output beside it
// (noise, the dropout mask), reduction after the pass (db, dweight: checked
// here, computed by the op). The planned streams are the elementwise slots
// present.
struct OpDesc {
  using Kernel = std::variant<kernels::UnaryKernel, kernels::BinaryKernel, kernels::IndexedKernel>;
  OpDesc(const Call& c, Kernel k, const kernels::Params& p) : call(c), kernel(k), params(p) {}

  Call call;
  Kernel kernel;
  kernels::Params params;
  Slot<const void*> dy, x, side_input, mask;
  Slot<void*> dst, side_output, reduction;
};

// The slot of an elementwise array of the call's n elements.
template <class Pointer>
Slot<Pointer> Elementwise(const Call& call, const char* name, Pointer pointer,
                          bool optional = false) {
  return {name, pointer, call.n, call.element_bytes, optional};
}

// Every null, size and overlap rule of the described operands, once.
[[nodiscard]] leaky_status CheckOp(const OpDesc& op);
// The steps of running a checked op (n > 0) that can fail: its plan and its
// threads. An op that writes more than dst (a reduction) takes them before
// it writes anything, then runs the planned pass, which cannot fail.
[[nodiscard]] leaky_status PlanOp(const OpDesc& op, leaky_tiling* tiling);
void RunPlannedOp(const OpDesc& op, const leaky_tiling& tiling);
// PlanOp, then RunPlannedOp (nothing to do for n == 0).
[[nodiscard]] leaky_status RunOp(const OpDesc& op);
// CheckOp, then RunOp: what an entry point returns.
[[nodiscard]] leaky_status CheckAndRunOp(const OpDesc& op);

using UnaryKernels = kernels::UnaryKernel[kernels::kDtypeCount];
using BinaryKernels = kernels::BinaryKernel[kernels::kDtypeCount];

// y = op(x) for a described call, y may be x: the dispatched kernel `field`.
[[nodiscard]] leaky_status RunUnaryOp(const Call& call, const void* x, void* y,
                                      UnaryKernels kernels::KernelTable::*field,
                                      const kernels::Params& params);

// dx = op(dy, saved), dx may be dy or saved (named `saved_name` in errors).
[[nodiscard]] leaky_status RunBinaryOp(const Call& call, const void* dy, const void* saved,
                                       void* dx, BinaryKernels kernels::KernelTable::*field,
                                       const kernels::Params& params,
                                       const char* saved_name = "saved");

}  // namespace leaky::internal

#endif  // LEAKY_OPS_DRIVER_H_

// LeakyReLU's C entry points: the op's scalar and rule on the shared driver
// (ops/driver.h), which checks, plans and runs the kernel
// (kernels/leaky_relu-inl.h multiplies by the slope); then its 8-bit ones
// (leaky/eight_bit.h), through ops/eight_bit_run.h.
#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "ops/eight_bit_run.h"
#include "runtime/error.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::Call;
using leaky::internal::DescribeByteCall;
using leaky::internal::DescribeCall;
using leaky::internal::Fail;
using leaky::internal::RunByteBackward;
using leaky::internal::RunByteForward;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

namespace {
Params LeakyReluParams(double negative_slope) {
  Params params;
  params.op.leaky_relu = {negative_slope};
  return params;
}
}  // namespace

extern "C" leaky_status leaky_relu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                           double negative_slope, const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeCall("leaky_relu_forward", dtype, n, opts,
                                     {{"negative_slope", negative_slope}}, &call));
  return RunUnaryOp(call, x, y, &KernelTable::leaky_relu_forward, LeakyReluParams(negative_slope));
}

extern "C" leaky_status leaky_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                            const void* saved, int saved_is_result, void* dx,
                                            double negative_slope, const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeCall("leaky_relu_backward", dtype, n, opts,
                                     {{"negative_slope", negative_slope}}, &call));
  // A negative slope maps negative inputs to positive results, so the
  // result's sign no longer tells which branch the forward pass took.
  if (saved_is_result && negative_slope < 0) {
    return leaky::internal::Fail(
        LEAKY_ERROR_UNSUPPORTED,
        "%s: backward from the forward result needs negative_slope >= 0 (got %g): the input's "
        "sign cannot be recovered; save the input instead",
        call.function, negative_slope);
  }
  return RunBinaryOp(call, dy, saved, dx, &KernelTable::leaky_relu_backward,
                     LeakyReluParams(negative_slope));
}

// 8-bit data (leaky/eight_bit.h): the exact table of the real LeakyReLU.
extern "C" leaky_status leaky_q8_leaky_relu_forward(const leaky_q8_params* q, size_t n,
                                                    const void* x, void* y, double negative_slope,
                                                    const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_leaky_relu_forward", q, n, opts,
                                         {{"negative_slope", negative_slope}}, &call));
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  f.slope = negative_slope;
  return RunByteForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_leaky_relu_backward(const leaky_q8_params* q, size_t n,
                                                     const void* dy, const void* saved,
                                                     int saved_is_result, void* dx,
                                                     double negative_slope,
                                                     const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_leaky_relu_backward", q, n, opts,
                                         {{"negative_slope", negative_slope}}, &call));
  if (saved_is_result && negative_slope < 0) {
    return Fail(LEAKY_ERROR_UNSUPPORTED,
                "%s: backward from the forward result needs negative_slope >= 0 (got %g)",
                call.function, negative_slope);
  }
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  f.slope = negative_slope;
  return RunByteBackward(call, *q, f, dy, saved, dx);
}

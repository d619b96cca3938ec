// ReLU's C entry points (leaky_plain_relu_*: `leaky_relu` is LeakyReLU's
// name) on the shared driver; no scalars, no rules of its own.
#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/driver.h"

using leaky::internal::Call;
using leaky::internal::DescribeCall;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

extern "C" leaky_status leaky_plain_relu_forward(leaky_dtype dtype, size_t n, const void* x,
                                                 void* y, const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeCall("leaky_plain_relu_forward", dtype, n, opts, {}, &call));
  return RunUnaryOp(call, x, y, &KernelTable::plain_relu_forward, Params{});
}

extern "C" leaky_status leaky_plain_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                                  const void* saved, void* dx,
                                                  const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeCall("leaky_plain_relu_backward", dtype, n, opts, {}, &call));
  return RunBinaryOp(call, dy, saved, dx, &KernelTable::plain_relu_backward, Params{});
}

// ReLU's C entry points (leaky_plain_relu_*: `leaky_relu` is LeakyReLU's
// name) on the shared driver; no scalars, no rules of its own. Then its
// 8-bit ones (leaky/eight_bit.h), through ops/eight_bit_run.h.
#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "ops/eight_bit_run.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::Call;
using leaky::internal::DescribeByteCall;
using leaky::internal::DescribeCall;
using leaky::internal::Fail;
using leaky::internal::RunByteBackward;
using leaky::internal::RunByteForward;
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

// 8-bit data (leaky/eight_bit.h): the exact table of the real ReLU.
extern "C" leaky_status leaky_q8_plain_relu_forward(const leaky_q8_params* q, size_t n,
                                                    const void* x, void* y,
                                                    const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_plain_relu_forward", q, n, opts, {}, &call));
  RealFunction f;
  f.kind = RealFunction::kRelu;
  return RunByteForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_plain_relu_backward(const leaky_q8_params* q, size_t n,
                                                     const void* dy, const void* saved, void* dx,
                                                     const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_plain_relu_backward", q, n, opts, {}, &call));
  RealFunction f;
  f.kind = RealFunction::kRelu;
  return RunByteBackward(call, *q, f, dy, saved, dx);
}

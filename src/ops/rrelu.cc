// RReLU's C entry points. Training draws each negative element's slope from
// the (seed, offset) random stream in the indexed kernels; evaluation is
// LeakyReLU with the mean slope, run here on LeakyReLU's kernels (one check
// of the operands, errors under RReLU's name). Then the 8-bit ones
// (leaky/eight_bit.h, evaluation only), through ops/eight_bit_run.h.
#include <cstdint>

#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "ops/eight_bit_run.h"
#include "ops/op_params.h"
#include "runtime/error.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::Call;
using leaky::internal::DescribeByteCall;
using leaky::internal::Elementwise;
using leaky::internal::OpDesc;
using leaky::internal::RreluEvalFunction;
using leaky::internal::RunByteBackward;
using leaky::internal::RunByteForward;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

namespace {

// What both directions check, and their kernel parameters: RReLU's own in
// training, LeakyReLU's (the mean slope) in evaluation.
leaky_status DescribeRrelu(const char* function, leaky_dtype dtype, size_t n,
                           const leaky_rrelu_params* p, const leaky_options* opts, Call* call,
                           Params* params) {
  using leaky::internal::Fail;
  LEAKY_RETURN_IF_ERROR(leaky::internal::DescribeCall(function, dtype, n, opts, {}, call));
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckRreluParams(function, p, n));
  if (p->training) {
    params->op.rrelu = {p->lower, p->upper, p->seed, p->offset};
    leaky::internal::KeepStoresCached(&call->options);  // Philox: compute-bound
    return LEAKY_OK;
  }
  params->op.leaky_relu = {(p->lower + p->upper) / 2};
  return LEAKY_OK;
}

}  // namespace

extern "C" leaky_status leaky_rrelu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                            void* noise, const leaky_rrelu_params* params,
                                            const leaky_options* opts) {
  Call call;
  Params kernel_params;
  LEAKY_RETURN_IF_ERROR(
      DescribeRrelu("leaky_rrelu_forward", dtype, n, params, opts, &call, &kernel_params));
  if (!params->training) {
    return RunUnaryOp(call, x, y, &KernelTable::leaky_relu_forward, kernel_params);
  }
  OpDesc desc{call, leaky::kernels::Dispatched().rrelu_forward[dtype], kernel_params};
  desc.x = Elementwise(call, "x", x);
  desc.dst = Elementwise(call, "y", y);
  desc.side_output = Elementwise(call, "noise", noise, /*optional=*/true);
  return leaky::internal::CheckAndRunOp(desc);
}

extern "C" leaky_status leaky_rrelu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                             const void* x, void* dx,
                                             const leaky_rrelu_params* params,
                                             const leaky_options* opts) {
  Call call;
  Params kernel_params;
  LEAKY_RETURN_IF_ERROR(
      DescribeRrelu("leaky_rrelu_backward", dtype, n, params, opts, &call, &kernel_params));
  if (!params->training) {
    return RunBinaryOp(call, dy, x, dx, &KernelTable::leaky_relu_backward, kernel_params, "x");
  }
  OpDesc desc{call, leaky::kernels::Dispatched().rrelu_backward[dtype], kernel_params};
  desc.dy = Elementwise(call, "dy", dy);
  desc.x = Elementwise(call, "x", x);
  desc.dst = Elementwise(call, "dx", dx);
  return leaky::internal::CheckAndRunOp(desc);
}

// 8-bit data (leaky/eight_bit.h), in evaluation: LeakyReLU's table with
// the mean slope.
extern "C" leaky_status leaky_q8_rrelu_eval_forward(const leaky_q8_params* q, size_t n,
                                                    const void* x, void* y, double lower,
                                                    double upper, const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_rrelu_eval_forward", q, n, opts,
                                         {{"lower", lower}, {"upper", upper}}, &call));
  RealFunction f;
  LEAKY_RETURN_IF_ERROR(RreluEvalFunction(call, lower, upper, &f));
  return RunByteForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_rrelu_eval_backward(const leaky_q8_params* q, size_t n,
                                                     const void* dy, const void* x, void* dx,
                                                     double lower, double upper,
                                                     const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_rrelu_eval_backward", q, n, opts,
                                         {{"lower", lower}, {"upper", upper}}, &call));
  RealFunction f;
  LEAKY_RETURN_IF_ERROR(RreluEvalFunction(call, lower, upper, &f));
  return RunByteBackward(call, *q, f, dy, x, dx);
}

// ReLU's and ELU's C entry points on the shared driver (ops/driver.h).
#include <cstdio>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/driver.h"

using leaky::internal::RunBinaryOp;
using leaky::internal::RunUnaryOp;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

extern "C" leaky_status leaky_plain_relu_forward(leaky_dtype dtype, size_t n, const void* x,
                                                 void* y, const leaky_options* opts) {
  return RunUnaryOp("leaky_plain_relu_forward", dtype, n, x, y, opts, {},
                    &KernelTable::relu_forward, Params{});
}

extern "C" leaky_status leaky_plain_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                                  const void* saved, void* dx,
                                                  const leaky_options* opts) {
  return RunBinaryOp("leaky_plain_relu_backward", dtype, n, dy, saved, dx, opts, {}, nullptr,
                     &KernelTable::relu_backward, Params{});
}

namespace {
Params EluParams(double alpha, double scale, double input_scale) {
  Params params;
  params.alpha = alpha;
  params.scale = scale;
  params.input_scale = input_scale;
  return params;
}
}  // namespace

extern "C" leaky_status leaky_elu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                          double alpha, double scale, double input_scale,
                                          const leaky_options* opts) {
  return RunUnaryOp("leaky_elu_forward", dtype, n, x, y, opts,
                    {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}},
                    &KernelTable::elu_forward, EluParams(alpha, scale, input_scale));
}

extern "C" leaky_status leaky_elu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                           const void* saved, int saved_is_result, void* dx,
                                           double alpha, double scale, double input_scale,
                                           const leaky_options* opts) {
  // With alpha < 0 the negative side's results are positive: the result no
  // longer tells which side the input was on (PyTorch's rule too).
  char unsupported[160];
  const bool is_unsupported = saved_is_result && alpha < 0;
  if (is_unsupported) {
    std::snprintf(unsupported, sizeof(unsupported),
                  "backward from the forward result needs alpha >= 0 (got %g): the input's side "
                  "cannot be recovered; save the input instead",
                  alpha);
  }
  return RunBinaryOp("leaky_elu_backward", dtype, n, dy, saved, dx, opts,
                     {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}},
                     is_unsupported ? unsupported : nullptr,
                     saved_is_result ? &KernelTable::elu_backward_from_result
                                     : &KernelTable::elu_backward,
                     EluParams(alpha, scale, input_scale));
}

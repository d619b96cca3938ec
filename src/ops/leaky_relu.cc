// LeakyReLU's C entry points: the op's parameters and rules on top of the
// shared driver (ops/driver.h), which validates, plans and runs.
#include <cstdio>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/driver.h"

using leaky::internal::RunBinaryOp;
using leaky::internal::RunUnaryOp;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

extern "C" leaky_status leaky_relu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                           double negative_slope, const leaky_options* opts) {
  Params params;
  params.negative_slope = negative_slope;
  return RunUnaryOp("leaky_relu_forward", dtype, n, x, y, opts,
                    {{"negative_slope", negative_slope}}, &KernelTable::leaky_relu_forward, params);
}

extern "C" leaky_status leaky_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                            const void* saved, int saved_is_result, void* dx,
                                            double negative_slope, const leaky_options* opts) {
  // A negative slope maps negative inputs to positive results, so the
  // result's sign no longer tells which branch the forward pass took.
  char unsupported[160];
  const bool is_unsupported = saved_is_result && negative_slope < 0;
  if (is_unsupported) {
    std::snprintf(unsupported, sizeof(unsupported),
                  "backward from the forward result needs negative_slope >= 0 (got %g): the "
                  "input's sign cannot be recovered; save the input instead",
                  negative_slope);
  }
  Params params;
  params.negative_slope = negative_slope;
  return RunBinaryOp("leaky_relu_backward", dtype, n, dy, saved, dx, opts,
                     {{"negative_slope", negative_slope}}, is_unsupported ? unsupported : nullptr,
                     &KernelTable::leaky_relu_backward, params);
}

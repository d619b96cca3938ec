// ELU's C entry points on the shared driver.
#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "runtime/error.h"

using leaky::internal::Call;
using leaky::internal::DescribeCall;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

namespace {
Params EluParams(double alpha, double scale, double input_scale) {
  Params params;
  params.op.elu = {alpha, scale, input_scale};
  return params;
}

leaky_status DescribeElu(const char* function, leaky_dtype dtype, size_t n,
                         const leaky_options* opts, double alpha, double scale,
                         double input_scale, Call* call) {
  return DescribeCall(function, dtype, n, opts,
                      {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}}, call);
}
}  // namespace

extern "C" leaky_status leaky_elu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                          double alpha, double scale, double input_scale,
                                          const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(
      DescribeElu("leaky_elu_forward", dtype, n, opts, alpha, scale, input_scale, &call));
  leaky::internal::KeepStoresCached(&call.options);  // expm1: compute-bound
  return RunUnaryOp(call, x, y, &KernelTable::elu_forward, EluParams(alpha, scale, input_scale));
}

extern "C" leaky_status leaky_elu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                           const void* saved, int saved_is_result, void* dx,
                                           double alpha, double scale, double input_scale,
                                           const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(
      DescribeElu("leaky_elu_backward", dtype, n, opts, alpha, scale, input_scale, &call));
  // With alpha < 0 the negative side's results are positive: the result no
  // longer tells which side the input was on (PyTorch's rule too).
  if (saved_is_result && alpha < 0) {
    return leaky::internal::Fail(
        LEAKY_ERROR_UNSUPPORTED,
        "%s: backward from the forward result needs alpha >= 0 (got %g): the input's side "
        "cannot be recovered; save the input instead",
        call.function, alpha);
  }
  // From the input, an exponential again; from the result, a multiply-add.
  if (!saved_is_result) leaky::internal::KeepStoresCached(&call.options);
  return RunBinaryOp(call, dy, saved, dx,
                     saved_is_result ? &KernelTable::elu_backward_from_result
                                     : &KernelTable::elu_backward,
                     EluParams(alpha, scale, input_scale));
}

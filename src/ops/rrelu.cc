// RReLU's C entry points. Training draws each negative element's slope from
// the (seed, offset) random stream in the positional kernels; evaluation is
// LeakyReLU with the mean slope.
#include <cstdint>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "runtime/error.h"

using leaky::internal::CheckBuffer;
using leaky::internal::CheckDisjoint;
using leaky::internal::CheckFiniteParameter;
using leaky::internal::CheckNoPartialOverlap;
using leaky::internal::CheckStreamRange;
using leaky::internal::ElementBytes;
using leaky::internal::Fail;
using leaky::internal::InPlacePolicy;
using leaky::internal::PlanForCpu;
using leaky::internal::ResolveOptions;
using leaky::internal::RunTiles;

namespace {

// What both directions check and derive.
struct RreluCall {
  size_t element_bytes = 0;
  leaky_options options{0, -1};
  leaky::kernels::Params params;
};

leaky_status CheckRrelu(const char* function, leaky_dtype dtype, size_t n,
                        const leaky_rrelu_params* p, const leaky_options* opts, RreluCall* call) {
  leaky_status status = LEAKY_OK;
  call->element_bytes = ElementBytes(function, dtype, &status);
  if (call->element_bytes == 0) return status;
  LEAKY_RETURN_IF_ERROR(ResolveOptions(function, opts, &call->options));
  if (p == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: params is null", function);
  LEAKY_RETURN_IF_ERROR(CheckFiniteParameter(function, "lower", p->lower));
  LEAKY_RETURN_IF_ERROR(CheckFiniteParameter(function, "upper", p->upper));
  if (p->lower > p->upper) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: lower = %g is greater than upper = %g",
                function, p->lower, p->upper);
  }
  LEAKY_RETURN_IF_ERROR(CheckStreamRange(function, p->offset, n));
  call->params.lower = p->lower;
  call->params.upper = p->upper;
  call->params.seed = p->seed;
  call->params.offset = p->offset;
  return LEAKY_OK;
}

double MeanSlope(const leaky_rrelu_params* p) { return (p->lower + p->upper) / 2; }

}  // namespace

extern "C" leaky_status leaky_rrelu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                            void* noise, const leaky_rrelu_params* params,
                                            const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_rrelu_forward";
  RreluCall call;
  LEAKY_RETURN_IF_ERROR(CheckRrelu(kFunction, dtype, n, params, opts, &call));
  const size_t element_bytes = call.element_bytes;
  if (n == 0) return LEAKY_OK;
  const size_t bytes = n * element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "x", x, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "y", y, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "y", y, "x", x, bytes));
  // Checked here first, so a bad buffer is reported under this function's
  // name, not the LeakyReLU it delegates to.
  if (!params->training) return leaky_relu_forward(dtype, n, x, y, MeanSlope(params), opts);
  if (noise != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(kFunction, "noise", noise, bytes, "x", x, bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(kFunction, "noise", noise, bytes, "y", y, bytes));
  }
  // Three streams when the noise is written.
  const leaky_tiling tiling = PlanForCpu(n, element_bytes, noise != nullptr ? 3 : 2,
                                         InPlacePolicy(call.options, x == y), y, 0.0);
  RunTiles(tiling, leaky::kernels::Dispatched().rrelu_forward[dtype], call.params, nullptr, x,
           nullptr, y, noise);
  return LEAKY_OK;
}

extern "C" leaky_status leaky_rrelu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                             const void* x, void* dx,
                                             const leaky_rrelu_params* params,
                                             const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_rrelu_backward";
  RreluCall call;
  LEAKY_RETURN_IF_ERROR(CheckRrelu(kFunction, dtype, n, params, opts, &call));
  const size_t element_bytes = call.element_bytes;
  if (n == 0) return LEAKY_OK;
  const size_t bytes = n * element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dy", dy, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "x", x, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dx", dx, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "dx", dx, "dy", dy, bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "dx", dx, "x", x, bytes));
  if (!params->training) {
    return leaky_relu_backward(dtype, n, dy, x, 0, dx, MeanSlope(params), opts);
  }
  const leaky_tiling tiling =
      PlanForCpu(n, element_bytes, 3, InPlacePolicy(call.options, dx == dy || dx == x), dx, 0.0);
  RunTiles(tiling, leaky::kernels::Dispatched().rrelu_backward[dtype], call.params, dy, x, nullptr,
           dx);
  return LEAKY_OK;
}

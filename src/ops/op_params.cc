#include "ops/op_params.h"

#include <cmath>

#include "leaky/reference.hpp"
#include "runtime/error.h"
#include "runtime/operands.h"

namespace leaky::internal {

leaky_status CheckBiasActParams(const char* function, const leaky_bias_act_params* p,
                                kernels::BiasActParams* out) {
  if (p == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: params is null", function);
  // A C caller may store any int in the enum field (its underlying type is
  // int in C++: leaky.h).
  const int activation = p->activation;
  if (activation != LEAKY_ACT_LINEAR && activation != LEAKY_ACT_RELU &&
      activation != LEAKY_ACT_LRELU) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                "%s: activation %d is not LEAKY_ACT_LINEAR, LEAKY_ACT_RELU or LEAKY_ACT_LRELU",
                function, activation);
  }
  LEAKY_RETURN_IF_ERROR(CheckFinite(function, {{"alpha", p->alpha}, {"gain", p->gain}}));
  if (!std::isfinite(p->clamp)) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                "%s: clamp = %g must be finite (negative for no clamp)", function, p->clamp);
  }
  out->activation = activation;
  out->alpha = p->alpha;
  out->gain = p->gain;
  out->clamp = p->clamp < 0 ? -1.0 : p->clamp;
  return LEAKY_OK;
}

leaky_status CheckDropoutP(const char* function, double p, kernels::BiasActParams* out) {
  if (!(p >= 0.0 && p < 1.0)) {  // written so that NaN fails
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: dropout p = %g is not in [0, 1)", function, p);
  }
  out->dropout_p = p;
  out->dropout_threshold = reference::dropout_threshold(p);
  return LEAKY_OK;
}

leaky_status CheckRreluParams(const char* function, const leaky_rrelu_params* p, size_t n) {
  if (p == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: params is null", function);
  LEAKY_RETURN_IF_ERROR(CheckFinite(function, {{"lower", p->lower}, {"upper", p->upper}}));
  if (p->lower > p->upper) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: lower = %g is greater than upper = %g",
                function, p->lower, p->upper);
  }
  LEAKY_RETURN_IF_ERROR(CheckStreamRange(function, p->offset, n));
  if (!p->training) {
    LEAKY_RETURN_IF_ERROR(CheckFinite(function, {{"(lower + upper) / 2", (p->lower + p->upper) / 2}}));
  }
  return LEAKY_OK;
}

}  // namespace leaky::internal

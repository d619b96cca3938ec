// The conv epilogue's C entry points (leaky/eight_bit.h): int32 accumulators
// plus bias, times the sign's multiplier, exactly rounded to qu8/qs8, over
// the [outer, channels, inner] view (ops/channels.h), in one pass through
// the shared driver; and the helper that folds real scales into the
// multipliers. The exact rounding is the kernel's (q8_bias_act-inl.h).
#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "ops/channels.h"
#include "ops/driver.h"
#include "ops/eight_bit_checks.h"
#include "runtime/operands.h"
#include "runtime/error.h"

using leaky::internal::Fail;
using leaky::internal::OpDesc;

namespace {

leaky_status CheckParams(const char* function, const leaky_q8_bias_act_params* p) {
  if (p == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: params is null", function);
  const int type = leaky::internal::TypeOf(p->type);
  if (type != LEAKY_QU8 && type != LEAKY_QS8) {
    return Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: the output type %d is not LEAKY_QU8 or LEAKY_QS8",
                function, type);
  }
  const leaky::internal::QuantizedRange range = leaky::internal::RangeOf(type);
  const int32_t lo = range.lo, hi = range.hi;
  if (p->output_zero_point < lo || p->output_zero_point > hi) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: the output zero point %d is outside %d..%d",
                function, static_cast<int>(p->output_zero_point), static_cast<int>(lo),
                static_cast<int>(hi));
  }
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::CheckOutputClamp(function, p->output_min, p->output_max, range));
  if (p->per_channel != 0 && p->per_channel != 1) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: per_channel must be 0 or 1 (got %d)", function,
                p->per_channel);
  }
  return LEAKY_OK;
}

leaky_status CheckMultipliers(const char* function, const char* name, const double* m,
                              size_t count) {
  for (size_t c = 0; c < count; ++c) {
    if (!std::isfinite(m[c])) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: %s[%zu] = %g is not finite", function, name,
                  c, m[c]);
    }
  }
  return LEAKY_OK;
}

}  // namespace

extern "C" leaky_q8_bias_act_params leaky_q8_bias_act_params_init(leaky_type8 type) {
  leaky_q8_bias_act_params p{};
  p.type = type;
  p.output_zero_point = 0;
  p.output_min = type == LEAKY_QS8 ? -128 : 0;
  p.output_max = type == LEAKY_QS8 ? 127 : 255;
  p.per_channel = 1;
  return p;
}

extern "C" leaky_status leaky_q8_bias_act_forward(const leaky_q8_bias_act_params* params,
                                                  size_t outer, size_t channels, size_t inner,
                                                  const int32_t* acc, const int32_t* bias,
                                                  const double* positive_multiplier,
                                                  const double* negative_multiplier, void* y,
                                                  const leaky_options* opts) {
  const char* function = "leaky_q8_bias_act_forward";
  LEAKY_RETURN_IF_ERROR(CheckParams(function, params));
  leaky::internal::ChannelCall c;
  LEAKY_RETURN_IF_ERROR(leaky::internal::DescribeChannelCall(
      function, LEAKY_F32, outer, channels, inner, opts, &c, leaky::kernels::kQ8TableChannels));
  // The plan's element is the output byte (driver.cc counts the int32
  // input as four byte streams); the layout checks do not depend on it.
  c.call.element_bytes = 1;
  const size_t n = c.call.n;
  const size_t multipliers = params->per_channel ? channels : 1;
  using leaky::internal::Role;
  // Every pointer, size and overlap rule, before any output byte: acc and
  // y differ in element size, so even identical pointers overlap.
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOperands(
      function,
      {{"acc", acc, n, sizeof(int32_t), Role::kInput},
       {"bias", bias, n > 0 ? channels : 0, sizeof(int32_t), Role::kSideInput, /*optional=*/true},
       {"positive_multiplier", positive_multiplier, n > 0 ? multipliers : 0, sizeof(double),
        Role::kSideInput},
       {"negative_multiplier", negative_multiplier, n > 0 ? multipliers : 0, sizeof(double),
        Role::kSideInput},
       {"y", y, n, 1, Role::kOutput}}));
  if (n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(
      CheckMultipliers(function, "positive_multiplier", positive_multiplier, multipliers));
  LEAKY_RETURN_IF_ERROR(
      CheckMultipliers(function, "negative_multiplier", negative_multiplier, multipliers));
  // The multipliers travel in the op's parameters (the side input is the
  // bias): the kernel reads them per channel, the plan never streams them.
  c.params.op.q8_bias_act = {positive_multiplier, negative_multiplier, params->per_channel != 0,
                             params->output_zero_point, params->output_min, params->output_max};
  const auto& table = leaky::kernels::Dispatched();
  OpDesc op{c.call, params->type == LEAKY_QU8 ? table.q8_bias_act_qu8 : table.q8_bias_act_qs8,
            c.params};
  op.x = {"acc", acc, n, sizeof(int32_t)};
  op.side_input = {"bias", bias, channels, sizeof(int32_t), /*optional=*/true};
  op.dst = leaky::internal::Elementwise(c.call, "y", y);
  return leaky::internal::RunOp(op);
}

extern "C" leaky_status leaky_q8_bias_act_multipliers(size_t count, const double* input_scale,
                                                      double gain, leaky_activation activation,
                                                      double alpha, double output_scale,
                                                      double* positive_multiplier,
                                                      double* negative_multiplier) {
  const char* function = "leaky_q8_bias_act_multipliers";
  int act;
  static_assert(sizeof(act) == sizeof(activation));
  std::memcpy(&act, &activation, sizeof(act));
  if (act != LEAKY_ACT_LINEAR && act != LEAKY_ACT_RELU && act != LEAKY_ACT_LRELU) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                "%s: activation %d is not LEAKY_ACT_LINEAR, LEAKY_ACT_RELU or LEAKY_ACT_LRELU",
                function, act);
  }
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckFinite(function, {{"gain", gain}, {"alpha", alpha}}));
  if (!(std::isfinite(output_scale) && output_scale > 0)) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: output_scale must be finite and > 0 (got %g)",
                function, output_scale);
  }
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOperands(
      function,
      {{"input_scale", input_scale, count, sizeof(double), leaky::internal::Role::kInput},
       {"positive_multiplier", positive_multiplier, count, sizeof(double),
        leaky::internal::Role::kSideOutput},
       {"negative_multiplier", negative_multiplier, count, sizeof(double),
        leaky::internal::Role::kSideOutput}}));
  for (size_t c = 0; c < count; ++c) {
    if (!(std::isfinite(input_scale[c]) && input_scale[c] > 0)) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                  "%s: input_scale[%zu] must be finite and > 0 (got %g)", function, c,
                  input_scale[c]);
    }
  }
  const long double slope = act == LEAKY_ACT_LRELU ? alpha : (act == LEAKY_ACT_RELU ? 0.0 : 1.0);
  for (size_t c = 0; c < count; ++c) {
    const long double scaled = static_cast<long double>(input_scale[c]) * gain;
    const double positive = static_cast<double>(scaled / output_scale);
    const double negative = static_cast<double>(scaled * slope / output_scale);
    if (!std::isfinite(positive) || !std::isfinite(negative)) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: multiplier %zu overflows a double",
                  function, c);
    }
  }
  for (size_t c = 0; c < count; ++c) {
    const long double scaled = static_cast<long double>(input_scale[c]) * gain;
    positive_multiplier[c] = static_cast<double>(scaled / output_scale);
    negative_multiplier[c] = static_cast<double>(scaled * slope / output_scale);
  }
  return LEAKY_OK;
}

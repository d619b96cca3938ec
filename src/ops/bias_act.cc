// bias_act's C entry points (StyleGAN's fused op): y = clamp(act(x + b[c]) *
// gain, -clamp, clamp) over the [outer, channels, inner] view
// (ops/channels.h), optionally followed by dropout with a one-bit mask; and
// the gradients with the deterministic per-channel db.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "ops/channels.h"
#include "ops/op_params.h"
#include "runtime/error.h"

using leaky::internal::ChannelCall;
using leaky::internal::CheckBiasActParams;
using leaky::internal::CheckDropoutP;
using leaky::internal::CheckFinite;
using leaky::internal::CheckStreamRange;
using leaky::internal::DescribeChannelCall;
using leaky::internal::Elementwise;
using leaky::internal::Fail;
using leaky::internal::KeepStoresCached;
using leaky::internal::OpDesc;

namespace {

size_t MaskBytes(size_t n) { return (n + 7) / 8; }

leaky_status BiasActForward(const char* function, leaky_dtype dtype, size_t outer,
                            size_t channels, size_t inner, const void* x, const void* bias,
                            void* y, uint8_t* mask, const leaky_bias_act_params* params,
                            const leaky_dropout_params* dropout, const leaky_options* opts) {
  ChannelCall c;
  LEAKY_RETURN_IF_ERROR(DescribeChannelCall(function, dtype, outer, channels, inner, opts, &c));
  leaky::kernels::BiasActParams& op = c.params.op.bias_act;
  LEAKY_RETURN_IF_ERROR(CheckBiasActParams(function, params, &op));
  const size_t n = c.call.n, bytes = c.call.element_bytes;
  if (dropout != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckDropoutP(function, dropout->p, &op));
    LEAKY_RETURN_IF_ERROR(CheckStreamRange(function, dropout->offset, n));
    op.seed = dropout->seed;
    op.offset = dropout->offset;
    KeepStoresCached(&c.call.options);  // Philox: compute-bound
  }
  if (n == 0) return LEAKY_OK;
  const auto& table = leaky::kernels::Dispatched();
  OpDesc desc{c.call,
              (dropout != nullptr ? table.bias_act_dropout_forward : table.bias_act_forward)[dtype],
              c.params};
  desc.x = Elementwise(c.call, "x", x);
  desc.side_input = {"bias", bias, channels, bytes, /*optional=*/true};
  desc.dst = Elementwise(c.call, "y", y);
  if (dropout != nullptr) desc.side_output = {"mask", mask, MaskBytes(n), 1};
  return leaky::internal::CheckAndRunOp(desc);
}

leaky_status BiasActBackward(const char* function, leaky_dtype dtype, size_t outer,
                             size_t channels, size_t inner, const void* dy, const void* x,
                             const void* bias, const uint8_t* mask, void* dx, void* db,
                             const leaky_bias_act_params* params, const double* dropout_p,
                             const leaky_options* opts) {
  ChannelCall c;
  LEAKY_RETURN_IF_ERROR(DescribeChannelCall(function, dtype, outer, channels, inner, opts, &c));
  LEAKY_RETURN_IF_ERROR(CheckBiasActParams(function, params, &c.params.op.bias_act));
  if (dropout_p != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckDropoutP(function, *dropout_p, &c.params.op.bias_act));
  }
  const size_t n = c.call.n, bytes = c.call.element_bytes;
  const auto& table = leaky::kernels::Dispatched();
  OpDesc desc{c.call,
              (dropout_p != nullptr ? table.bias_act_dropout_backward : table.bias_act_backward)[dtype],
              c.params};
  desc.reduction = {"db", db, channels, bytes, /*optional=*/true};
  if (n > 0) {
    desc.dy = Elementwise(c.call, "dy", dy);
    desc.x = Elementwise(c.call, "x", x);
    desc.side_input = {"bias", bias, channels, bytes, /*optional=*/true};
    if (dropout_p != nullptr) desc.mask = {"mask", mask, MaskBytes(n), 1};
    desc.dst = Elementwise(c.call, "dx", dx);
  }
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(desc));
  if (n == 0) {
    if (db != nullptr && channels > 0) std::memset(db, 0, channels * bytes);
    return LEAKY_OK;
  }
  // RunOp readies the threads of db's reduction too (PlanOp), before dx.
  LEAKY_RETURN_IF_ERROR(leaky::internal::RunOp(desc));
  if (db != nullptr) {
    leaky::internal::WithType(dtype, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      const T* grad = static_cast<const T*>(dx);
      leaky::internal::ReducePerChannel(
          outer, channels, inner, [grad](size_t k) { return leaky::internal::ToDouble(grad[k]); },
          static_cast<T*>(db), c.call.options);
    });
  }
  return LEAKY_OK;
}

}  // namespace

extern "C" leaky_status leaky_bias_act_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                               size_t inner, const void* x, const void* bias,
                                               void* y, const leaky_bias_act_params* params,
                                               const leaky_options* opts) {
  return BiasActForward("leaky_bias_act_forward", dtype, outer, channels, inner, x, bias, y,
                        nullptr, params, nullptr, opts);
}

extern "C" leaky_status leaky_bias_act_dropout_forward(
    leaky_dtype dtype, size_t outer, size_t channels, size_t inner, const void* x,
    const void* bias, void* y, uint8_t* mask, const leaky_bias_act_params* params,
    const leaky_dropout_params* dropout, const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_bias_act_dropout_forward";
  if (dropout == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: dropout is null", kFunction);
  return BiasActForward(kFunction, dtype, outer, channels, inner, x, bias, y, mask, params,
                        dropout, opts);
}

extern "C" leaky_status leaky_bias_act_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                                size_t inner, const void* dy, const void* x,
                                                const void* bias, void* dx, void* db,
                                                const leaky_bias_act_params* params,
                                                const leaky_options* opts) {
  return BiasActBackward("leaky_bias_act_backward", dtype, outer, channels, inner, dy, x, bias,
                         nullptr, dx, db, params, nullptr, opts);
}

extern "C" leaky_status leaky_bias_act_dropout_backward(
    leaky_dtype dtype, size_t outer, size_t channels, size_t inner, const void* dy,
    const void* x, const void* bias, const uint8_t* mask, void* dx, void* db,
    const leaky_bias_act_params* params, double p, const leaky_options* opts) {
  return BiasActBackward("leaky_bias_act_dropout_backward", dtype, outer, channels, inner, dy, x,
                         bias, mask, dx, db, params, &p, opts);
}

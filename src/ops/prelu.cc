// PReLU's C entry points: y = x > 0 ? x : weight[c] * x over the
// [outer, channels, inner] view (ops/channels.h), and its gradients with the
// deterministic per-channel dweight; then its 8-bit ones (leaky/eight_bit.h),
// through ops/eight_bit_run.h.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "ops/channels.h"
#include "ops/driver.h"
#include "ops/eight_bit_run.h"
#include "runtime/error.h"
#include "runtime/parallel.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::ChannelCall;
using leaky::internal::CheckQ8Params;
using leaky::internal::DescribeByteCall;
using leaky::internal::DescribeChannelCall;
using leaky::internal::Elementwise;
using leaky::internal::Fail;
using leaky::internal::Fp8FormatOf;
using leaky::internal::OpDesc;
using leaky::internal::RequireFp8ForBackward;

extern "C" leaky_status leaky_prelu_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                            size_t inner, const void* x, const void* weight,
                                            void* y, const leaky_options* opts) {
  ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      DescribeChannelCall("leaky_prelu_forward", dtype, outer, channels, inner, opts, &c));
  if (c.call.n == 0) return LEAKY_OK;
  OpDesc desc{c.call, leaky::kernels::Dispatched().prelu_forward[dtype], c.params};
  desc.side_input = {"weight", weight, channels, c.call.element_bytes};
  desc.x = Elementwise(c.call, "x", x);
  desc.dst = Elementwise(c.call, "y", y);
  return leaky::internal::CheckAndRunOp(desc);
}

extern "C" leaky_status leaky_prelu_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                             size_t inner, const void* dy, const void* x,
                                             const void* weight, void* dx, void* dweight,
                                             const leaky_options* opts) {
  ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      DescribeChannelCall("leaky_prelu_backward", dtype, outer, channels, inner, opts, &c));
  const size_t n = c.call.n, bytes = c.call.element_bytes;
  OpDesc desc{c.call, leaky::kernels::Dispatched().prelu_backward[dtype], c.params};
  desc.reduction = {"dweight", dweight, channels, bytes, /*optional=*/true};
  if (n > 0) {
    desc.side_input = {"weight", weight, channels, bytes};
    desc.dy = Elementwise(c.call, "dy", dy);
    desc.x = Elementwise(c.call, "x", x);
    desc.dst = Elementwise(c.call, "dx", dx);
  }
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(desc));
  if (n == 0) {
    if (dweight != nullptr && channels > 0) std::memset(dweight, 0, channels * bytes);
    return LEAKY_OK;
  }
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(leaky::internal::PlanOp(desc, &tiling));
  // dweight reads dy and x, which dx may overwrite in place: reduce first.
  if (dweight != nullptr) {
    leaky::internal::WithType(dtype, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      const T* g = static_cast<const T*>(dy);
      const T* v = static_cast<const T*>(x);
      leaky::internal::ReducePerChannel(
          outer, channels, inner,
          [g, v](size_t k) {
            return static_cast<double>(leaky::reference::prelu_weight_term(g[k], v[k]));
          },
          static_cast<T*>(dweight), c.call.options);
    });
  }
  leaky::internal::RunPlannedOp(desc, tiling);
  return LEAKY_OK;
}

// 8-bit data (leaky/eight_bit.h): one exact table per channel, its weight
// as the slope; fp8 backward with the exact per-channel weight gradient.
extern "C" leaky_status leaky_q8_prelu_forward(const leaky_q8_params* q, size_t outer,
                                               size_t channels, size_t inner, const void* x,
                                               const float* weight, void* y,
                                               const leaky_options* opts) {
  const char* function = "leaky_q8_prelu_forward";
  LEAKY_RETURN_IF_ERROR(CheckQ8Params(function, q));
  leaky::internal::ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::DescribeChannelCall(function, LEAKY_F32, outer, channels, inner, opts, &c));
  c.call.element_bytes = 1;  // the layout checks above do not depend on it
  if (c.call.n == 0) return LEAKY_OK;
  if (channels > std::numeric_limits<size_t>::max() / 256) {
    return Fail(LEAKY_ERROR_SIZE, "%s: %zu channels of 256-byte tables overflow", function, channels);
  }
  OpDesc op{c.call, leaky::kernels::Dispatched().byte_lookup_channels, c.params};
  op.side_input = {"weight", weight, channels, sizeof(float)};
  op.x = Elementwise(c.call, "x", x);
  op.dst = Elementwise(c.call, "y", y);
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  for (size_t k = 0; k < channels; ++k) {
    if (!std::isfinite(weight[k])) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: weight[%zu] is not finite", function, k);
    }
  }
  std::vector<uint8_t> tables(channels * 256);
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  for (size_t k = 0; k < channels; ++k) {
    f.slope = weight[k];
    leaky::eight_bit::BuildForwardTable(*q, f, tables.data() + 256 * k);
  }
  op.side_input.pointer = tables.data();  // the kernel reads the tables, not the weights
  return leaky::internal::RunOp(op);
}

extern "C" leaky_status leaky_q8_prelu_backward(const leaky_q8_params* q, size_t outer,
                                                size_t channels, size_t inner, const void* dy,
                                                const void* x, const float* weight, void* dx,
                                                float* dweight, const leaky_options* opts) {
  const char* function = "leaky_q8_prelu_backward";
  LEAKY_RETURN_IF_ERROR(CheckQ8Params(function, q));
  leaky::internal::ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::DescribeChannelCall(function, LEAKY_F32, outer, channels, inner, opts, &c));
  c.call.element_bytes = 1;  // the layout checks above do not depend on it
  LEAKY_RETURN_IF_ERROR(RequireFp8ForBackward(function, q->type));
  if (channels > std::numeric_limits<size_t>::max() / 256) {
    return Fail(LEAKY_ERROR_SIZE, "%s: %zu channels of 256-byte tables overflow", function, channels);
  }
  const size_t n = c.call.n;
  OpDesc op{c.call, leaky::kernels::Dispatched().byte_select_channels, c.params};
  op.reduction = {"dweight", dweight, channels, sizeof(float), /*optional=*/true};
  if (n > 0) {
    op.side_input = {"weight", weight, channels, sizeof(float)};
    op.dy = Elementwise(c.call, "dy", dy);
    op.x = Elementwise(c.call, "x", x);
    op.dst = Elementwise(c.call, "dx", dx);
  }
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  if (n == 0) {
    if (dweight != nullptr && channels > 0) std::memset(dweight, 0, channels * sizeof(float));
    return LEAKY_OK;
  }
  for (size_t k = 0; k < channels; ++k) {
    if (!std::isfinite(weight[k])) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: weight[%zu] is not finite", function, k);
    }
  }
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(leaky::internal::PlanOp(op, &tiling));
  // dweight reads dy and x, which dx may overwrite in place: reduce first.
  // One task per channel; each sum is exact, so any split gives its bits.
  if (dweight != nullptr) {
    struct Job {
      leaky::eight_bit::Fp8 format;
      const uint8_t *dy, *x;
      float* dweight;
      size_t outer, channels, inner;
    } job{Fp8FormatOf(q->type), static_cast<const uint8_t*>(dy), static_cast<const uint8_t*>(x),
          dweight, outer, channels, inner};
    leaky::internal::ParallelFor(
        channels, c.call.options.num_threads,
        [](void* context, size_t channel) {
          const Job& j = *static_cast<const Job*>(context);
          j.dweight[channel] = leaky::eight_bit::PreluWeightGradientFp8(
              j.format, j.dy, j.x, j.outer, j.channels, j.inner, channel);
        },
        &job, c.call.options.executor);
  }
  // dx: LeakyReLU's backward tables with each channel's weight as the slope
  // (pass and keep do not depend on it).
  std::vector<uint8_t> tables(channels * 256);
  alignas(64) uint8_t pass[256], keep[256];
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  for (size_t k = 0; k < channels; ++k) {
    f.slope = weight[k];
    leaky::eight_bit::BuildBackwardTables(*q, f, tables.data() + 256 * k, pass, keep);
  }
  op.side_input.pointer = tables.data();  // the kernel reads the tables, not the weights
  op.params.op.byte_table = {nullptr, pass,
                             leaky::eight_bit::SaturatesPassedValues(*q) ? keep : nullptr};
  leaky::internal::RunPlannedOp(op, tiling);
  return LEAKY_OK;
}

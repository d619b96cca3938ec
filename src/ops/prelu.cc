// PReLU's C entry points: y = x > 0 ? x : weight[c] * x over the
// [outer, channels, inner] view (ops/channels.h), and its gradients with the
// deterministic per-channel dweight.
#include <cstring>
#include <type_traits>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "ops/channels.h"

using leaky::internal::ChannelCall;
using leaky::internal::DescribeChannelCall;
using leaky::internal::Elementwise;
using leaky::internal::OpDesc;

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

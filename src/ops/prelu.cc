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
using leaky::internal::CheckOperands;
using leaky::internal::DescribeChannelCall;
using leaky::internal::Role;
using leaky::internal::RunIndexedOp;

extern "C" leaky_status leaky_prelu_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                            size_t inner, const void* x, const void* weight,
                                            void* y, const leaky_options* opts) {
  ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      DescribeChannelCall("leaky_prelu_forward", dtype, outer, channels, inner, opts, &c));
  const size_t n = c.call.n, bytes = c.call.element_bytes;
  if (n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(CheckOperands(c.call.function,
                                      {{"weight", weight, channels, bytes, Role::kSideInput},
                                       {"x", x, n, bytes, Role::kInput},
                                       {"y", y, n, bytes, Role::kOutput}}));
  RunIndexedOp(c.call, 2, leaky::kernels::Dispatched().prelu_forward[dtype], c.params, nullptr, x,
               weight, y);
  return LEAKY_OK;
}

extern "C" leaky_status leaky_prelu_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                             size_t inner, const void* dy, const void* x,
                                             const void* weight, void* dx, void* dweight,
                                             const leaky_options* opts) {
  ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      DescribeChannelCall("leaky_prelu_backward", dtype, outer, channels, inner, opts, &c));
  const size_t n = c.call.n, bytes = c.call.element_bytes;
  const leaky::internal::Operand dweight_operand{"dweight", dweight, channels, bytes,
                                                 Role::kReduction, true};
  if (n == 0) {
    LEAKY_RETURN_IF_ERROR(CheckOperands(c.call.function, {dweight_operand}));
    if (dweight != nullptr && channels > 0) std::memset(dweight, 0, channels * bytes);
    return LEAKY_OK;
  }
  LEAKY_RETURN_IF_ERROR(CheckOperands(c.call.function,
                                      {{"weight", weight, channels, bytes, Role::kSideInput},
                                       {"dy", dy, n, bytes, Role::kInput},
                                       {"x", x, n, bytes, Role::kInput},
                                       {"dx", dx, n, bytes, Role::kOutput},
                                       dweight_operand}));
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
  RunIndexedOp(c.call, 3, leaky::kernels::Dispatched().prelu_backward[dtype], c.params, dy, x,
               weight, dx);
  return LEAKY_OK;
}

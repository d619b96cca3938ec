// LeakyReLU drivers: validate everything, plan, then run the dispatched
// kernel on the pool. Nothing is written until every check has passed.
#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "runtime/error.h"

using leaky::internal::CheckBuffer;
using leaky::internal::CheckCommon;
using leaky::internal::CheckNoPartialOverlap;
using leaky::internal::InPlacePolicy;
using leaky::internal::PlanForCpu;
using leaky::internal::RunTiles;

#define LEAKY_RETURN_IF_ERROR(expression)          \
  do {                                             \
    const leaky_status leaky_status_ = expression; \
    if (leaky_status_ != LEAKY_OK) return leaky_status_; \
  } while (0)

extern "C" leaky_status leaky_relu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                           double negative_slope, const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_relu_forward";
  size_t element_bytes;
  leaky_options options;
  LEAKY_RETURN_IF_ERROR(CheckCommon(kFunction, dtype, opts, "negative_slope", negative_slope,
                                    &element_bytes, &options));
  if (n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "x", x, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "y", y, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "y", y, "x", x, n * element_bytes));

  const leaky_tiling tiling =
      PlanForCpu(n, element_bytes, 2, InPlacePolicy(options, x == y), y, negative_slope);
  RunTiles(tiling, leaky::kernels::Dispatched().leaky_relu_forward[dtype], x, y);
  return LEAKY_OK;
}

extern "C" leaky_status leaky_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                            const void* saved, int saved_is_result, void* dx,
                                            double negative_slope, const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_relu_backward";
  size_t element_bytes;
  leaky_options options;
  LEAKY_RETURN_IF_ERROR(CheckCommon(kFunction, dtype, opts, "negative_slope", negative_slope,
                                    &element_bytes, &options));
  if (saved_is_result && negative_slope < 0) {
    // A negative slope maps negative inputs to positive results, so the
    // result's sign no longer tells which branch the forward pass took.
    return leaky::internal::Fail(
        LEAKY_ERROR_UNSUPPORTED,
        "%s: backward from the forward result needs negative_slope >= 0 (got %g): the input's "
        "sign cannot be recovered; save the input instead",
        kFunction, negative_slope);
  }
  if (n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dy", dy, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "saved", saved, n, element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dx", dx, n, element_bytes));
  const size_t bytes = n * element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "dx", dx, "dy", dy, bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "dx", dx, "saved", saved, bytes));

  const leaky_tiling tiling = PlanForCpu(
      n, element_bytes, 3, InPlacePolicy(options, dx == dy || dx == saved), dx, negative_slope);
  RunTiles(tiling, leaky::kernels::Dispatched().leaky_relu_backward[dtype], dy, saved, dx);
  return LEAKY_OK;
}

// bias_act's C entry points: y = clamp(act(x + b[c]) * gain, -clamp, clamp)
// over x viewed as [outer, channels, inner], and its gradients dx and db.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/leaky.hpp"
#include "leaky/reference.hpp"
#include "ops/driver.h"
#include "runtime/error.h"
#include "runtime/pool.h"

using leaky::internal::CheckBuffer;
using leaky::internal::CheckDisjoint;
using leaky::internal::CheckFiniteParameter;
using leaky::internal::CheckNoPartialOverlap;
using leaky::internal::ElementBytes;
using leaky::internal::Fail;
using leaky::internal::InPlacePolicy;
using leaky::internal::PlanForCpu;
using leaky::internal::ResolveOptions;
using leaky::internal::RunTiles;
using leaky::kernels::Params;

namespace {

// Non-temporal stores pay only for long contiguous segments; short
// per-channel rows would fence after every few vectors.
constexpr size_t kMinStreamSegment = 4096;

struct Shape {
  size_t n, element_bytes;
  leaky_options options;
  Params params;
};

leaky_status CheckCommon(const char* function, leaky_dtype dtype, size_t outer, size_t channels,
                         size_t inner, const leaky_bias_act_params* p, const leaky_options* opts,
                         Shape* shape) {
  leaky_status status = LEAKY_OK;
  shape->element_bytes = ElementBytes(function, dtype, &status);
  if (shape->element_bytes == 0) return status;
  LEAKY_RETURN_IF_ERROR(ResolveOptions(function, opts, &shape->options));
  if (p == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: params is null", function);
  // A C caller may store any int in the enum field: read it as an int (in
  // C++ loading an out-of-range enum value is undefined).
  int activation;
  static_assert(sizeof(activation) == sizeof(p->activation));
  std::memcpy(&activation, &p->activation, sizeof(activation));
  if (activation != LEAKY_ACT_LINEAR && activation != LEAKY_ACT_RELU &&
      activation != LEAKY_ACT_LRELU) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                "%s: activation %d is not LEAKY_ACT_LINEAR, LEAKY_ACT_RELU or LEAKY_ACT_LRELU",
                function, activation);
  }
  LEAKY_RETURN_IF_ERROR(CheckFiniteParameter(function, "alpha", p->alpha));
  LEAKY_RETURN_IF_ERROR(CheckFiniteParameter(function, "gain", p->gain));
  if (std::isnan(p->clamp) || std::isinf(p->clamp)) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                "%s: clamp = %g must be finite (negative for no clamp)", function, p->clamp);
  }
  if (channels == 0 && outer != 0 && inner != 0) {
    return Fail(LEAKY_ERROR_SIZE, "%s: channels is 0 but outer = %zu and inner = %zu", function,
                outer, inner);
  }
  size_t n = outer;
  for (size_t factor : {channels, inner}) {
    if (factor != 0 && n > SIZE_MAX / factor) {
      return Fail(LEAKY_ERROR_SIZE, "%s: outer * channels * inner overflows", function);
    }
    n *= factor;
  }
  shape->n = n;
  shape->params.activation = activation;
  shape->params.alpha = p->alpha;
  shape->params.gain = p->gain;
  shape->params.clamp = p->clamp < 0 ? -1.0 : p->clamp;
  shape->params.channels = channels == 0 ? 1 : channels;
  shape->params.inner = inner == 0 ? 1 : inner;
  const size_t segment = inner > 1 ? inner : channels;
  if (segment < kMinStreamSegment && shape->options.stream_stores == -1) {
    shape->options.stream_stores = 0;
  }
  return LEAKY_OK;
}

template <class T>
double ToDouble(T v) {
  if constexpr (sizeof(T) == 2) return static_cast<double>(static_cast<float>(v));
  else return static_cast<double>(v);
}

// db[c] = the sum of dx over every outer and inner position, in double, in
// the order (outer, inner): one task per channel, so the bits do not depend
// on the thread count.
template <class T>
void ReduceBias(const void* dx_bytes, size_t outer, size_t channels, size_t inner,
                void* db_bytes, int threads) {
  struct Job {
    const T* dx;
    T* db;
    size_t outer, channels, inner;
  } job{static_cast<const T*>(dx_bytes), static_cast<T*>(db_bytes), outer, channels, inner};
  auto task = [](void* context, size_t c) {
    const Job& j = *static_cast<const Job*>(context);
    double sum = 0.0;
    for (size_t o = 0; o < j.outer; ++o) {
      const T* row = j.dx + (o * j.channels + c) * j.inner;
      for (size_t i = 0; i < j.inner; ++i) sum += ToDouble(row[i]);
    }
    // Half types: rounded to float, then to the storage type (as PyTorch's
    // float-accumulated sum of a half tensor).
    j.db[c] = T(static_cast<leaky::reference::compute_t<T>>(sum));
  };
  pthreadpool_t pool = threads > 1 && channels > 1 ? leaky::internal::Pool() : nullptr;
  if (pool == nullptr) {
    for (size_t c = 0; c < channels; ++c) task(&job, c);
  } else {
    pthreadpool_parallelize_1d(pool, task, &job, channels, PTHREADPOOL_FLAG_YIELD_WORKERS);
  }
}

}  // namespace

extern "C" leaky_status leaky_bias_act_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                               size_t inner, const void* x, const void* bias,
                                               void* y, const leaky_bias_act_params* params,
                                               const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_bias_act_forward";
  Shape s;
  LEAKY_RETURN_IF_ERROR(CheckCommon(kFunction, dtype, outer, channels, inner, params, opts, &s));
  if (s.n == 0) return LEAKY_OK;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "x", x, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "y", y, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "y", y, "x", x, s.n * s.element_bytes));
  if (bias != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "bias", bias, channels, s.element_bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(kFunction, "y", y, s.n * s.element_bytes, "bias", bias,
                                        channels * s.element_bytes));
  }
  const leaky_tiling tiling = PlanForCpu(s.n, s.element_bytes, 2, InPlacePolicy(s.options, x == y),
                                         y, 0.0);
  RunTiles(tiling, leaky::kernels::Dispatched().bias_act_forward[dtype], s.params, nullptr, x,
           bias, y);
  return LEAKY_OK;
}

extern "C" leaky_status leaky_bias_act_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                                size_t inner, const void* dy, const void* x,
                                                const void* bias, void* dx, void* db,
                                                const leaky_bias_act_params* params,
                                                const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_bias_act_backward";
  Shape s;
  LEAKY_RETURN_IF_ERROR(CheckCommon(kFunction, dtype, outer, channels, inner, params, opts, &s));
  if (db != nullptr && channels > 0) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "db", db, channels, s.element_bytes));
  }
  if (s.n == 0) {
    if (db != nullptr && channels > 0) std::memset(db, 0, channels * s.element_bytes);
    return LEAKY_OK;
  }
  const size_t bytes = s.n * s.element_bytes;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dy", dy, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "x", x, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dx", dx, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "dx", dx, "dy", dy, bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(kFunction, "dx", dx, "x", x, bytes));
  if (bias != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "bias", bias, channels, s.element_bytes));
  }
  if (bias != nullptr) {
    LEAKY_RETURN_IF_ERROR(
        CheckDisjoint(kFunction, "dx", dx, bytes, "bias", bias, channels * s.element_bytes));
  }
  if (db != nullptr) {
    // db is written last, from dx: it must not overlap anything read or written.
    const size_t db_bytes = channels * s.element_bytes;
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(kFunction, "db", db, db_bytes, "dx", dx, bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(kFunction, "db", db, db_bytes, "dy", dy, bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(kFunction, "db", db, db_bytes, "x", x, bytes));
  }
  const leaky_tiling tiling = PlanForCpu(
      s.n, s.element_bytes, 3, InPlacePolicy(s.options, dx == dy || dx == x), dx, 0.0);
  RunTiles(tiling, leaky::kernels::Dispatched().bias_act_backward[dtype], s.params, dy, x, bias,
           dx);
  if (db != nullptr) {
    switch (dtype) {
      case LEAKY_F32: ReduceBias<float>(dx, outer, channels, inner, db, s.options.num_threads); break;
      case LEAKY_F64: ReduceBias<double>(dx, outer, channels, inner, db, s.options.num_threads); break;
      case LEAKY_F16: ReduceBias<leaky::float16>(dx, outer, channels, inner, db, s.options.num_threads); break;
      case LEAKY_BF16: ReduceBias<leaky::bfloat16>(dx, outer, channels, inner, db, s.options.num_threads); break;
    }
  }
  return LEAKY_OK;
}

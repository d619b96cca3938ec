// The C entry points of the ops over x viewed as [outer, channels, inner]:
// bias_act (y = clamp(act(x + b[c]) * gain, -clamp, clamp)), bias_act with
// dropout, and PReLU; with their gradients, including the deterministic
// per-channel reductions db and dweight.
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
using leaky::internal::CheckStreamRange;
using leaky::internal::ElementBytes;
using leaky::internal::Fail;
using leaky::internal::InPlacePolicy;
using leaky::internal::PlanForCpu;
using leaky::internal::ResolveOptions;
using leaky::internal::RunTiles;
using leaky::kernels::ChannelKernel;
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

// dtype, options, and the [outer, channels, inner] layout.
leaky_status CheckLayout(const char* function, leaky_dtype dtype, size_t outer, size_t channels,
                         size_t inner, const leaky_options* opts, Shape* shape) {
  leaky_status status = LEAKY_OK;
  shape->element_bytes = ElementBytes(function, dtype, &status);
  if (shape->element_bytes == 0) return status;
  LEAKY_RETURN_IF_ERROR(ResolveOptions(function, opts, &shape->options));
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
  shape->params.channels = channels == 0 ? 1 : channels;
  shape->params.inner = inner == 0 ? 1 : inner;
  const size_t segment = inner > 1 ? inner : channels;
  if (segment < kMinStreamSegment && shape->options.stream_stores == -1) {
    shape->options.stream_stores = 0;
  }
  return LEAKY_OK;
}

leaky_status CheckBiasActParams(const char* function, const leaky_bias_act_params* p,
                                Shape* shape) {
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
  shape->params.activation = activation;
  shape->params.alpha = p->alpha;
  shape->params.gain = p->gain;
  shape->params.clamp = p->clamp < 0 ? -1.0 : p->clamp;
  return LEAKY_OK;
}

leaky_status CheckDropoutP(const char* function, double p, Shape* shape) {
  if (!(p >= 0.0 && p < 1.0)) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: dropout p = %g is not in [0, 1)", function, p);
  }
  shape->params.dropout_p = p;
  shape->params.dropout_threshold = leaky::reference::dropout_threshold(p);
  return LEAKY_OK;
}

// The checks of a forward channel op y = op(x, values[c]) (+ an aux output
// of aux_bytes), then its run. `values` may be null only if allowed.
leaky_status RunChannelForward(const char* function, const Shape& s, leaky_dtype dtype,
                               const char* values_name, const void* x, const void* values,
                               void* y, const char* aux_name, void* aux, size_t aux_bytes,
                               ChannelKernel const (Dispatch)[leaky::kernels::kDtypeCount]) {
  const size_t bytes = s.n * s.element_bytes;
  const size_t channels = s.params.channels;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "x", x, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "y", y, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(function, "y", y, "x", x, bytes));
  if (values != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(function, values_name, values, channels, s.element_bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, "y", y, bytes, values_name, values,
                                        channels * s.element_bytes));
  }
  if (aux_name != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(function, aux_name, aux, aux_bytes, 1));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, aux_name, aux, aux_bytes, "y", y, bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, aux_name, aux, aux_bytes, "x", x, bytes));
    if (values != nullptr) {
      LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, aux_name, aux, aux_bytes, values_name, values,
                                          channels * s.element_bytes));
    }
  }
  const leaky_tiling tiling =
      PlanForCpu(s.n, s.element_bytes, 2, InPlacePolicy(s.options, x == y), y, 0.0);
  RunTiles(tiling, Dispatch[dtype], s.params, nullptr, x, values, y, aux);
  return LEAKY_OK;
}

template <class T>
double ToDouble(T v) {
  return static_cast<double>(static_cast<leaky::reference::compute_t<T>>(v));
}

// out[c] = the sum over every outer and inner position of term(k) (k the
// flat index), in double, in the order (outer, inner): one task per channel,
// so the bits do not depend on the thread count. Half types: rounded to
// float, then to the storage type (as PyTorch's float-accumulated sums).
template <class T, class Term>
void ReducePerChannel(size_t outer, size_t channels, size_t inner, const Term& term, T* out,
                      int threads) {
  struct Job {
    const Term* term;
    T* out;
    size_t outer, channels, inner;
  } job{&term, out, outer, channels, inner};
  auto task = [](void* context, size_t c) {
    const Job& j = *static_cast<const Job*>(context);
    const leaky::reference::ieee_environment ieee;  // as the kernels: no FTZ/DAZ
    double sum = 0.0;
    for (size_t o = 0; o < j.outer; ++o) {
      const size_t row = (o * j.channels + c) * j.inner;
      for (size_t i = 0; i < j.inner; ++i) sum += (*j.term)(row + i);
    }
    j.out[c] = T(static_cast<leaky::reference::compute_t<T>>(sum));
  };
  pthreadpool_t pool = threads > 1 && channels > 1 ? leaky::internal::Pool() : nullptr;
  if (pool == nullptr) {
    for (size_t c = 0; c < channels; ++c) task(&job, c);
  } else {
    pthreadpool_parallelize_1d(pool, task, &job, channels, PTHREADPOOL_FLAG_YIELD_WORKERS);
  }
}

// Calls f with a null pointer of the dtype's storage type.
template <class F>
void WithType(leaky_dtype dtype, F&& f) {
  switch (dtype) {
    case LEAKY_F32: f(static_cast<float*>(nullptr)); break;
    case LEAKY_F64: f(static_cast<double*>(nullptr)); break;
    case LEAKY_F16: f(static_cast<leaky::float16*>(nullptr)); break;
    case LEAKY_BF16: f(static_cast<leaky::bfloat16*>(nullptr)); break;
  }
}

// The checks of a backward channel op dx = op(dy, x, values[c]) with an
// optional per-channel reduction `reduced` and a read-only aux input.
leaky_status CheckChannelBackward(const char* function, const Shape& s, const char* values_name,
                                  const void* dy, const void* x, const void* values, void* dx,
                                  const char* reduced_name, void* reduced, const char* aux_name,
                                  const void* aux, size_t aux_bytes) {
  const size_t bytes = s.n * s.element_bytes;
  const size_t channels = s.params.channels;
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "dy", dy, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "x", x, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "dx", dx, s.n, s.element_bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(function, "dx", dx, "dy", dy, bytes));
  LEAKY_RETURN_IF_ERROR(CheckNoPartialOverlap(function, "dx", dx, "x", x, bytes));
  if (values != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(function, values_name, values, channels, s.element_bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, "dx", dx, bytes, values_name, values,
                                        channels * s.element_bytes));
  }
  if (aux_name != nullptr) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(function, aux_name, aux, aux_bytes, 1));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, "dx", dx, bytes, aux_name, aux, aux_bytes));
  }
  if (reduced != nullptr) {
    // Written last, from dx or the inputs: it must not overlap anything.
    const size_t reduced_bytes = channels * s.element_bytes;
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, reduced_name, reduced, reduced_bytes, "dx", dx, bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, reduced_name, reduced, reduced_bytes, "dy", dy, bytes));
    LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, reduced_name, reduced, reduced_bytes, "x", x, bytes));
    if (values != nullptr) {
      LEAKY_RETURN_IF_ERROR(CheckDisjoint(function, reduced_name, reduced, reduced_bytes,
                                          values_name, values, channels * s.element_bytes));
    }
    if (aux_name != nullptr) {
      LEAKY_RETURN_IF_ERROR(
          CheckDisjoint(function, reduced_name, reduced, reduced_bytes, aux_name, aux, aux_bytes));
    }
  }
  return LEAKY_OK;
}

leaky_status BiasActForward(const char* function, leaky_dtype dtype, size_t outer,
                            size_t channels, size_t inner, const void* x, const void* bias,
                            void* y, uint8_t* mask, const leaky_bias_act_params* params,
                            const leaky_dropout_params* dropout, const leaky_options* opts) {
  Shape s;
  LEAKY_RETURN_IF_ERROR(CheckLayout(function, dtype, outer, channels, inner, opts, &s));
  LEAKY_RETURN_IF_ERROR(CheckBiasActParams(function, params, &s));
  if (mask != nullptr || dropout != nullptr) {
    if (dropout == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: dropout is null", function);
    LEAKY_RETURN_IF_ERROR(CheckDropoutP(function, dropout->p, &s));
    LEAKY_RETURN_IF_ERROR(CheckStreamRange(function, dropout->offset, s.n));
    s.params.seed = dropout->seed;
    s.params.offset = dropout->offset;
  }
  if (s.n == 0) return LEAKY_OK;
  if (dropout == nullptr) {
    return RunChannelForward(function, s, dtype, "bias", x, bias, y, nullptr, nullptr, 0,
                             leaky::kernels::Dispatched().bias_act_forward);
  }
  return RunChannelForward(function, s, dtype, "bias", x, bias, y, "mask", mask, (s.n + 7) / 8,
                           leaky::kernels::Dispatched().bias_act_dropout_forward);
}

leaky_status BiasActBackward(const char* function, leaky_dtype dtype, size_t outer,
                             size_t channels, size_t inner, const void* dy, const void* x,
                             const void* bias, const uint8_t* mask, void* dx, void* db,
                             const leaky_bias_act_params* params, const double* dropout_p,
                             const leaky_options* opts) {
  Shape s;
  LEAKY_RETURN_IF_ERROR(CheckLayout(function, dtype, outer, channels, inner, opts, &s));
  LEAKY_RETURN_IF_ERROR(CheckBiasActParams(function, params, &s));
  if (dropout_p != nullptr) LEAKY_RETURN_IF_ERROR(CheckDropoutP(function, *dropout_p, &s));
  if (db != nullptr && channels > 0) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(function, "db", db, channels, s.element_bytes));
  }
  if (s.n == 0) {
    if (db != nullptr && channels > 0) std::memset(db, 0, channels * s.element_bytes);
    return LEAKY_OK;
  }
  const size_t mask_bytes = (s.n + 7) / 8;
  LEAKY_RETURN_IF_ERROR(CheckChannelBackward(function, s, "bias", dy, x, bias, dx, "db", db,
                                             dropout_p != nullptr ? "mask" : nullptr, mask,
                                             mask_bytes));
  const leaky_tiling tiling = PlanForCpu(
      s.n, s.element_bytes, 3, InPlacePolicy(s.options, dx == dy || dx == x), dx, 0.0);
  const auto& table = leaky::kernels::Dispatched();
  RunTiles(tiling, (dropout_p != nullptr ? table.bias_act_dropout_backward : table.bias_act_backward)[dtype],
           s.params, dy, x, bias, dx, const_cast<uint8_t*>(mask));
  if (db != nullptr) {
    WithType(dtype, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      const T* grad = static_cast<const T*>(dx);
      ReducePerChannel(outer, channels, inner, [grad](size_t k) { return ToDouble(grad[k]); },
                       static_cast<T*>(db), s.options.num_threads);
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

extern "C" leaky_status leaky_prelu_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                            size_t inner, const void* x, const void* weight,
                                            void* y, const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_prelu_forward";
  Shape s;
  LEAKY_RETURN_IF_ERROR(CheckLayout(kFunction, dtype, outer, channels, inner, opts, &s));
  if (s.n == 0) return LEAKY_OK;
  if (weight == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: weight is null", kFunction);
  return RunChannelForward(kFunction, s, dtype, "weight", x, weight, y, nullptr, nullptr, 0,
                           leaky::kernels::Dispatched().prelu_forward);
}

extern "C" leaky_status leaky_prelu_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                             size_t inner, const void* dy, const void* x,
                                             const void* weight, void* dx, void* dweight,
                                             const leaky_options* opts) {
  static constexpr char kFunction[] = "leaky_prelu_backward";
  Shape s;
  LEAKY_RETURN_IF_ERROR(CheckLayout(kFunction, dtype, outer, channels, inner, opts, &s));
  if (dweight != nullptr && channels > 0) {
    LEAKY_RETURN_IF_ERROR(CheckBuffer(kFunction, "dweight", dweight, channels, s.element_bytes));
  }
  if (s.n == 0) {
    if (dweight != nullptr && channels > 0) std::memset(dweight, 0, channels * s.element_bytes);
    return LEAKY_OK;
  }
  if (weight == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: weight is null", kFunction);
  LEAKY_RETURN_IF_ERROR(CheckChannelBackward(kFunction, s, "weight", dy, x, weight, dx, "dweight",
                                             dweight, nullptr, nullptr, 0));
  // dweight reads dy and x, which dx may overwrite in place: reduce first.
  if (dweight != nullptr) {
    WithType(dtype, [&](auto* type) {
      using T = std::remove_pointer_t<decltype(type)>;
      const T* g = static_cast<const T*>(dy);
      const T* v = static_cast<const T*>(x);
      ReducePerChannel(
          outer, channels, inner,
          [g, v](size_t k) {
            return static_cast<double>(leaky::reference::prelu_weight_term(g[k], v[k]));
          },
          static_cast<T*>(dweight), s.options.num_threads);
    });
  }
  const leaky_tiling tiling = PlanForCpu(
      s.n, s.element_bytes, 3, InPlacePolicy(s.options, dx == dy || dx == x), dx, 0.0);
  RunTiles(tiling, leaky::kernels::Dispatched().prelu_backward[dtype], s.params, dy, x, weight,
           dx);
  return LEAKY_OK;
}

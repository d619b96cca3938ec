// The [outer, channels, inner] view of the per-channel ops (bias_act, PReLU):
// describing such a call, and the deterministic per-channel reductions of
// their gradients (db, dweight).
#ifndef LEAKY_OPS_CHANNELS_H_
#define LEAKY_OPS_CHANNELS_H_

#include <cstddef>

#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/leaky.hpp"
#include "leaky/reference.hpp"
#include "ops/driver.h"
#include "runtime/parallel.h"

namespace leaky::internal {

// A described call plus its layout (in kernel parameters: channels, inner).
struct ChannelCall {
  Call call;
  kernels::Params params;
};

// dtype, options, and the layout: n = outer * channels * inner must not
// overflow; channels == 0 only for an empty tensor. Short contiguous rows
// turn automatic streaming stores off, unless the op's kernel runs
// channels-last rows of up to `joined_channels` channels as one stream.
[[nodiscard]] leaky_status DescribeChannelCall(const char* function, leaky_dtype dtype,
                                               size_t outer, size_t channels, size_t inner,
                                               const leaky_options* options, ChannelCall* call,
                                               size_t joined_channels = 0);

// out[c] = the sum over every outer and inner position of term(k) (k the
// flat index), in double, in the order (outer, inner): one task per channel,
// so the bits do not depend on the thread count. Half types: rounded to
// float, then to the storage type (as PyTorch's float-accumulated sums).
template <class T, class Term>
void ReducePerChannel(size_t outer, size_t channels, size_t inner, const Term& term, T* out,
                      const leaky_options& options) {
  struct Job {
    const Term* term;
    T* out;
    size_t outer, channels, inner;
  } job{&term, out, outer, channels, inner};
  auto task = [](void* context, size_t c) {
    const Job& j = *static_cast<const Job*>(context);
    double sum = 0.0;
    for (size_t o = 0; o < j.outer; ++o) {
      const size_t row = (o * j.channels + c) * j.inner;
      for (size_t i = 0; i < j.inner; ++i) sum += (*j.term)(row + i);
    }
    j.out[c] = T(static_cast<reference::compute_t<T>>(sum));
  };
  ParallelFor(channels, options.num_threads, task, &job, options.executor);
}

template <class T>
double ToDouble(T v) {
  return static_cast<double>(static_cast<reference::compute_t<T>>(v));
}

// Calls f with a null pointer of the dtype's storage type.
template <class F>
void WithType(leaky_dtype dtype, F&& f) {
  switch (dtype) {
    case LEAKY_F32: f(static_cast<float*>(nullptr)); break;
    case LEAKY_F64: f(static_cast<double*>(nullptr)); break;
    case LEAKY_F16: f(static_cast<float16*>(nullptr)); break;
    case LEAKY_BF16: f(static_cast<bfloat16*>(nullptr)); break;
  }
}

}  // namespace leaky::internal

#endif  // LEAKY_OPS_CHANNELS_H_

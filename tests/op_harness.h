// Binds each op of kernel_list.inc to its public C entry point and its scalar
// reference, so generic tests can sweep every (op, dtype) in the list.
#ifndef LEAKY_TESTS_OP_HARNESS_H_
#define LEAKY_TESTS_OP_HARNESS_H_

#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"

namespace leaky::test {

// Sources for one call; unary ops ignore src1.
template <class T>
struct OpCall {
  const T* src0;
  const T* src1;
  T* dst;
  size_t n;
  double param;
  leaky_options options;
};

template <class T>
struct leaky_relu_forward_harness {
  static constexpr int kSources = 1;
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_relu_forward(dtype_of<T>(), c.n, c.src0, c.dst, c.param, &c.options);
  }
  static T Reference(T x, T /*unused*/, double slope) {
    return reference::leaky_relu_forward(x, slope);
  }
};

template <class T>
struct leaky_relu_backward_harness {
  static constexpr int kSources = 2;
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_relu_backward(dtype_of<T>(), c.n, c.src0, c.src1, 0, c.dst, c.param, &c.options);
  }
  static T Reference(T dy, T saved, double slope) {
    return reference::leaky_relu_backward(dy, saved, slope);
  }
};

}  // namespace leaky::test

#endif  // LEAKY_TESTS_OP_HARNESS_H_

// Binds each op of kernel_list.inc to its public C entry point and its scalar
// reference, so generic tests can sweep every (op, dtype) in the list.
// kExact: the kernel equals the reference bit for bit. Otherwise (exp/expm1)
// tiling tests compare against the kernel's own whole-array result on the
// same target, and tests/elu_accuracy_test.cc bounds the error.
#ifndef LEAKY_TESTS_OP_HARNESS_H_
#define LEAKY_TESTS_OP_HARNESS_H_

#include <cmath>
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
  static constexpr bool kExact = true;
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
  static constexpr bool kExact = true;
  static constexpr int kSources = 2;
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_relu_backward(dtype_of<T>(), c.n, c.src0, c.src1, 0, c.dst, c.param, &c.options);
  }
  static T Reference(T dy, T saved, double slope) {
    return reference::leaky_relu_backward(dy, saved, slope);
  }
};

template <class T>
struct plain_relu_forward_harness {
  static constexpr bool kExact = true;
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_plain_relu_forward(dtype_of<T>(), c.n, c.src0, c.dst, &c.options);
  }
  static T Reference(T x, T, double) { return reference::plain_relu_forward(x); }
};

template <class T>
struct plain_relu_backward_harness {
  static constexpr bool kExact = true;
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_plain_relu_backward(dtype_of<T>(), c.n, c.src0, c.src1, c.dst, &c.options);
  }
  static T Reference(T dy, T saved, double) { return reference::plain_relu_backward(dy, saved); }
};

// ELU harnesses take `param` as alpha, with SELU's scale and an input scale
// that is not 1, so every coefficient is exercised.
inline constexpr double kEluScale = 1.0507009873554805;
inline constexpr double kEluInputScale = 0.75;

template <class T>
struct elu_forward_harness {
  static constexpr bool kExact = false;  // expm1: see reference.hpp's bounds
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_elu_forward(dtype_of<T>(), c.n, c.src0, c.dst, c.param, kEluScale,
                             kEluInputScale, &c.options);
  }
  static T Reference(T x, T, double alpha) {
    return reference::elu_forward(x, alpha, kEluScale, kEluInputScale);
  }
};

template <class T>
struct elu_backward_harness {
  static constexpr bool kExact = false;  // exp
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_elu_backward(dtype_of<T>(), c.n, c.src0, c.src1, 0, c.dst, c.param, kEluScale,
                              kEluInputScale, &c.options);
  }
  static T Reference(T dy, T x, double alpha) {
    return reference::elu_backward(dy, x, alpha, kEluScale, kEluInputScale);
  }
};

template <class T>
struct elu_backward_from_result_harness {
  static constexpr bool kExact = true;
  // The result-based formula needs alpha >= 0: the harness uses |param|.
  static leaky_status Call(const OpCall<T>& c) {
    return leaky_elu_backward(dtype_of<T>(), c.n, c.src0, c.src1, 1, c.dst, std::fabs(c.param),
                              kEluScale, kEluInputScale, &c.options);
  }
  static T Reference(T dy, T y, double alpha) {
    return reference::elu_backward_from_result(dy, y, std::fabs(alpha), kEluScale, kEluInputScale);
  }
};

}  // namespace leaky::test

#endif  // LEAKY_TESTS_OP_HARNESS_H_

// leaky reference: the scalar definition of every op, one element at a time.
// Every SIMD kernel is tested bit-for-bit against these, and `leaky golden`
// writes them. They are plain C++ and assume the IEEE default floating-point
// environment (round to nearest, no FTZ/DAZ); wrap calls in
// leaky::reference::ieee_environment when the caller may have changed it.
#ifndef LEAKY_REFERENCE_HPP_
#define LEAKY_REFERENCE_HPP_

#include <cstddef>

#include "leaky/leaky.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace leaky::reference {

// Sets round-to-nearest and clears FTZ/DAZ for its lifetime, then restores
// the caller's state.
class ieee_environment {
 public:
#if defined(__SSE__) || defined(__x86_64__)
  // ldmxcsr is not free: touch the register only when the caller changed it.
  ieee_environment() : saved_(_mm_getcsr()) {
    if (saved_ & kNonIeeeBits) _mm_setcsr(saved_ & ~kNonIeeeBits);
  }
  ~ieee_environment() {
    if (saved_ & kNonIeeeBits) _mm_setcsr(saved_);
  }

 private:
  // FTZ (bit 15), DAZ (bit 6) and the rounding-control field (bits 13-14).
  static constexpr unsigned kNonIeeeBits = 0x8000u | 0x0040u | 0x6000u;
  unsigned saved_;
#else
  ieee_environment() = default;
#endif
  ieee_environment(const ieee_environment&) = delete;
  ieee_environment& operator=(const ieee_environment&) = delete;
};

// The compute type of each storage type: half types compute in float.
template <class T> struct compute { using type = T; };
template <> struct compute<float16> { using type = float; };
template <> struct compute<bfloat16> { using type = float; };
template <class T> using compute_t = typename compute<T>::type;

template <class T> compute_t<T> widen(T v) { return static_cast<compute_t<T>>(v); }
template <class T> T narrow(compute_t<T> v) { return T(v); }

template <class T> compute_t<T> slope_of(double negative_slope) {
  return static_cast<compute_t<T>>(negative_slope);  // rounded once, to nearest
}

template <class T>
T leaky_relu_forward(T x, double negative_slope) {
  const compute_t<T> v = widen(x);
  return narrow<T>(v > 0 ? v : v * slope_of<T>(negative_slope));
}

template <class T>
T leaky_relu_backward(T dy, T saved, double negative_slope) {
  const compute_t<T> g = widen(dy);
  return narrow<T>(widen(saved) > 0 ? g : g * slope_of<T>(negative_slope));
}

}  // namespace leaky::reference

#endif  // LEAKY_REFERENCE_HPP_

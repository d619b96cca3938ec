// leaky reference: the scalar definition of every op, one element at a time.
// Every SIMD kernel is tested bit-for-bit against these, and `leaky golden`
// writes them. They are plain C++ and assume the IEEE default floating-point
// environment (round to nearest, no FTZ/DAZ); wrap calls in
// leaky::reference::ieee_environment when the caller may have changed it.
#ifndef LEAKY_REFERENCE_HPP_
#define LEAKY_REFERENCE_HPP_

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "leaky/leaky.hpp"

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace leaky::reference {

// Sets round-to-nearest and clears flush-to-zero (x86 MXCSR FTZ/DAZ, ARM
// FPCR FZ/FZ16 and default-NaN) for its lifetime, then restores the
// caller's state exactly. Elsewhere it does nothing.
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
#elif defined(__aarch64__)
  ieee_environment() : saved_(read_fpcr()) {
    if (saved_ & kNonIeeeBits) write_fpcr(saved_ & ~kNonIeeeBits);
  }
  ~ieee_environment() {
    if (saved_ & kNonIeeeBits) write_fpcr(saved_);
  }

 private:
  static unsigned long read_fpcr() {
    unsigned long value;
    __asm__ volatile("mrs %0, fpcr" : "=r"(value));
    return value;
  }
  static void write_fpcr(unsigned long value) { __asm__ volatile("msr fpcr, %0" : : "r"(value) : "memory"); }
  // FZ (bit 24) and FZ16 (bit 19): flush to zero; DN (bit 25): default NaN
  // instead of the input's payload; RMode (bits 22-23); FEAT_AFP's FIZ and
  // AH (bits 0-1), which flush inputs and change NaN and subnormal handling.
  static constexpr unsigned long kNonIeeeBits =
      (1ul << 25) | (1ul << 24) | (3ul << 22) | (1ul << 19) | 0x3ul;
  unsigned long saved_;
#else
  ieee_environment() = default;
#endif

 public:
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

// ReLU, as torch.relu: y = x < 0 ? 0 : x; dx = saved <= 0 ? 0 : dy.
template <class T>
T plain_relu_forward(T x) {
  const compute_t<T> v = widen(x);
  return narrow<T>(v < 0 ? compute_t<T>(0) : v);
}

template <class T>
T plain_relu_backward(T dy, T saved) {
  return narrow<T>(widen(saved) <= 0 ? compute_t<T>(0) : widen(dy));
}

// ELU. expm1 and exp here are correctly rounded or within 1 ulp (f32: the
// double-precision function rounded once to float; f64: glibc's). The SIMD
// kernels use, for f32 compute (f32, f16, bf16) forward, the library's own
// expm1 (Expm1F32 in src/kernels/elu-inl.h), and Highway's expm1/exp
// otherwise. Their error against these references was measured by
// tests/elu_accuracy_test.cc (which asserts these bounds) on the AVX2, SSE4,
// SSSE3 and scalar targets, over every f16 and bf16 input, every 61st f32
// from -0 to -128 plus a sweep of the positive side (18.9 M inputs), and
// 10^6 random f64, with (alpha, scale, input_scale) = (1, 1, 1),
// (1.673, 1.051, 0.75) and (1, 1, -0.5):
//   f32 forward (expm1 alone, coefficients 1 or input_scale -0.5): max 1 ulp;
//   f32 forward with coefficients: max 2 ulp; f32 backward: max 4 ulp
//   (exp times three rounded products);
//   f64 forward: max 2 ulp with input_scale >= 0, 4 with a negative one
//   (Highway's expm1 of a positive argument rounds twice); f64 backward:
//   max 3 ulp;
//   f16 and bf16 (computed in f32, rounded once): 0 ulp on every target
//   measured; the bound allows 1 for a near-tie on a target not measured here
//   (AVX3).
inline constexpr int kEluForwardMaxUlpF32 = 2;
inline constexpr int kEluForwardMaxUlpF64 = 2;
inline constexpr int kEluForwardMaxUlpF64NegativeInputScale = 4;
inline constexpr int kEluForwardMaxUlpHalf = 1;
inline constexpr int kEluBackwardMaxUlpF32 = 4;
inline constexpr int kEluBackwardMaxUlpF64 = 3;
inline constexpr int kEluBackwardMaxUlpHalf = 1;
// ELU's backward from the result uses no transcendental: bit-exact.

template <class C> C expm1_of(C t) {
  if constexpr (sizeof(C) == 4) return static_cast<C>(std::expm1(static_cast<double>(t)));
  else return std::expm1(t);
}
template <class C> C exp_of(C t) {
  if constexpr (sizeof(C) == 4) return static_cast<C>(std::exp(static_cast<double>(t)));
  else return std::exp(t);
}

template <class T>
compute_t<T> elu_negative_coef(double alpha, double scale) {
  return static_cast<compute_t<T>>(alpha) * static_cast<compute_t<T>>(scale);
}

template <class T>
T elu_forward(T x, double alpha, double scale, double input_scale) {
  using C = compute_t<T>;
  const C v = widen(x);
  if (v <= 0) return narrow<T>(expm1_of(v * static_cast<C>(input_scale)) *
                               elu_negative_coef<T>(alpha, scale));
  return narrow<T>(v * static_cast<C>(scale));
}

template <class T>
T elu_backward(T dy, T x, double alpha, double scale, double input_scale) {
  using C = compute_t<T>;
  const C g = widen(dy), v = widen(x), is = static_cast<C>(input_scale);
  if (v <= 0) return narrow<T>(g * is * elu_negative_coef<T>(alpha, scale) * exp_of(v * is));
  return narrow<T>(g * static_cast<C>(scale));
}

template <class T>
T elu_backward_from_result(T dy, T y, double alpha, double scale, double input_scale) {
  using C = compute_t<T>;
  const C g = widen(dy), r = widen(y);
  if (r <= 0) return narrow<T>(g * static_cast<C>(input_scale) * (r + elu_negative_coef<T>(alpha, scale)));
  return narrow<T>(g * static_cast<C>(scale));
}

// bias_act: PyTorch's unfused sequence, one element (no bias: pass -0,
// which leaves every x, -0 included, unchanged).
template <class T>
compute_t<T> bias_act_activate(compute_t<T> z, const leaky_bias_act_params& p) {
  using C = compute_t<T>;
  if (p.activation == LEAKY_ACT_LRELU) return z > 0 ? z : z * static_cast<C>(p.alpha);
  if (p.activation == LEAKY_ACT_RELU) return z < 0 ? C(0) : z;
  return z;
}

// The forward value in the compute type, before the one rounding.
template <class T>
compute_t<T> bias_act_value(T x, T bias, const leaky_bias_act_params& p) {
  using C = compute_t<T>;
  C u = bias_act_activate<T>(widen(x) + widen(bias), p) * static_cast<C>(p.gain);
  if (p.clamp >= 0) {
    const C high = static_cast<C>(p.clamp), low = static_cast<C>(-p.clamp);
    u = u > high ? high : u < low ? low : u;
  }
  return u;
}

template <class T>
T bias_act_forward(T x, T bias, const leaky_bias_act_params& p) {
  return narrow<T>(bias_act_value(x, bias, p));
}

// bias_act's backward from a gradient already in the compute type.
template <class T>
T bias_act_backward_compute(compute_t<T> g, T x, T bias, const leaky_bias_act_params& p) {
  using C = compute_t<T>;
  const C z = widen(x) + widen(bias);
  if (p.clamp >= 0) {
    const C u = bias_act_activate<T>(z, p) * static_cast<C>(p.gain);
    if (!(u >= static_cast<C>(-p.clamp) && u <= static_cast<C>(p.clamp))) g = C(0);
  }
  g = g * static_cast<C>(p.gain);
  if (p.activation == LEAKY_ACT_LRELU) return narrow<T>(z > 0 ? g : g * static_cast<C>(p.alpha));
  if (p.activation == LEAKY_ACT_RELU) return narrow<T>(bias_act_activate<T>(z, p) <= 0 ? C(0) : g);
  return narrow<T>(g);
}

template <class T>
T bias_act_backward(T dy, T x, T bias, const leaky_bias_act_params& p) {
  return bias_act_backward_compute<T>(widen(dy), x, bias, p);
}

// PReLU: LeakyReLU with the channel's weight as the slope (weight * x, the
// order PyTorch multiplies in; the product commutes bit for bit anyway).
template <class T>
T prelu_forward(T x, T weight) {
  const compute_t<T> v = widen(x);
  return narrow<T>(v > 0 ? v : widen(weight) * v);
}

template <class T>
T prelu_backward(T dy, T x, T weight) {
  const compute_t<T> g = widen(dy);
  return narrow<T>(widen(x) > 0 ? g : widen(weight) * g);
}

// One element's term of dweight, in the compute type (summed in double).
template <class T>
compute_t<T> prelu_weight_term(T dy, T x) {
  const compute_t<T> v = widen(x);
  return v > 0 ? compute_t<T>(0) : v * widen(dy);
}

// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as
// easy as 1, 2, 3", SC'11), checked against Random123's known answers.
inline std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> counter,
                                             std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * counter[0], p1 = uint64_t{kM1} * counter[2];
    counter = {static_cast<uint32_t>(p1 >> 32) ^ counter[1] ^ key[0], static_cast<uint32_t>(p1),
               static_cast<uint32_t>(p0 >> 32) ^ counter[3] ^ key[1], static_cast<uint32_t>(p0)};
    key = {key[0] + kW0, key[1] + kW1};
  }
  return counter;
}

// Word number `s` of the stream of `seed` (the layout is in leaky.h: 64
// consecutive words come from 16 consecutive counters, so a vector of up to
// 16 lanes draws one word of each of its lanes' counters).
inline uint32_t stream_word(uint64_t seed, uint64_t s) {
  const uint64_t counter = (s / 64) * 16 + s % 16;
  const auto words = philox4x32_10(
      {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0},
      {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
  return words[(s % 64) / 16];
}

// Dropout's 16 random bits of stream position `s`: 128 positions share the
// 64 words of one group, the first 64 the low halves, the next the high.
inline uint32_t stream_half_word(uint64_t seed, uint64_t s) {
  const uint32_t word = stream_word(seed, (s / 128) * 64 + s % 64);
  return s % 128 < 64 ? word & 0xFFFFu : word >> 16;
}

// RReLU's training slope from one stream word.
template <class T>
compute_t<T> rrelu_slope(uint32_t word, double lower, double upper) {
  using C = compute_t<T>;
  const C low = static_cast<C>(lower), range = static_cast<C>(upper) - low;
  C u;
  if constexpr (sizeof(C) == 4) u = static_cast<C>(word >> 8) * C(0x1p-24);
  else u = static_cast<C>(word) * C(0x1p-32);
  return low + u * range;
}

template <class T>
T rrelu_forward(T x, uint32_t word, double lower, double upper, T* noise) {
  const compute_t<T> v = widen(x), r = rrelu_slope<T>(word, lower, upper);
  if (noise != nullptr) *noise = narrow<T>(v <= 0 ? r : compute_t<T>(1));
  return narrow<T>(v <= 0 ? v * r : v);
}

template <class T>
T rrelu_backward(T dy, T x, uint32_t word, double lower, double upper) {
  const compute_t<T> g = widen(dy);
  return narrow<T>(widen(x) <= 0 ? g * rrelu_slope<T>(word, lower, upper) : g);
}

// Dropout: kept when the element's 16 random bits are >= ceil(p * 2^16),
// so the keep-probability is 1 - p rounded up to a multiple of 2^-16; the
// kept scale is 1 / (1 - p) in the compute type.
inline uint32_t dropout_threshold(double p) {
  return static_cast<uint32_t>(std::ceil(p * 65536.0));
}
template <class T>
compute_t<T> dropout_scale(double p) {
  using C = compute_t<T>;
  return C(1) / static_cast<C>(1.0 - p);
}

template <class T>
T bias_act_dropout_forward(T x, T bias, const leaky_bias_act_params& params, bool kept,
                           double p) {
  using C = compute_t<T>;
  return narrow<T>(bias_act_value(x, bias, params) * (kept ? dropout_scale<T>(p) : C(0)));
}

// dy * (kept ? 1 / (1 - p) : 0), kept in the compute type, then bias_act's
// backward.
template <class T>
T bias_act_dropout_backward(T dy, T x, T bias, const leaky_bias_act_params& params, bool kept,
                            double p) {
  using C = compute_t<T>;
  return bias_act_backward_compute<T>(widen(dy) * (kept ? dropout_scale<T>(p) : C(0)), x, bias,
                                      params);
}

}  // namespace leaky::reference

#endif  // LEAKY_REFERENCE_HPP_

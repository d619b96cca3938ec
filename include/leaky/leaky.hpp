// leaky: the C++20 API. Typed views over the same kernels as the C ABI in
// leaky.h; errors become leaky::error exceptions carrying the same message.
#ifndef LEAKY_LEAKY_HPP_
#define LEAKY_LEAKY_HPP_

#include <bit>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>

#include "leaky/leaky.h"

namespace leaky {

// IEEE binary16. Conversions are exact: from float they round to nearest-even
// (overflow to inf, NaN stays NaN with its upper payload bits and the quiet
// bit set); to float is exact for every pattern (NaN quieted). Both match
// x86's F16C instructions bit for bit. Integer
// arithmetic only, so FTZ/DAZ cannot flush subnormals.
struct float16 {
  uint16_t bits = 0;

  constexpr float16() = default;
  explicit float16(float value) : bits(from_float_bits(value)) {}
  static constexpr float16 from_bits(uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return std::bit_cast<float>(to_float_bits(bits)); }

  static constexpr uint32_t to_float_bits(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t magnitude = h & 0x7fffu;
    if (magnitude == 0x7c00u) return sign | 0x7f800000u;
    // NaN: payload kept, quiet bit set, as F16C's vcvtph2ps does.
    if (magnitude > 0x7c00u) return sign | 0x7fc00000u | ((magnitude & 0x3ffu) << 13);
    if (magnitude >= 0x0400u) return sign | ((magnitude << 13) + 0x38000000u);
    if (magnitude == 0) return sign;
    // Subnormal: normalise the mantissa into an f32 exponent.
    uint32_t mantissa = magnitude;
    int exponent = 113;  // f32 biased exponent of 2^-14
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    return sign | (static_cast<uint32_t>(exponent) << 23) | ((mantissa & 0x3ffu) << 13);
  }

  static constexpr uint16_t from_float_bits_u32(uint32_t f) {
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t magnitude = f & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (magnitude >= 0x38800000u) {  // normal f16
      const uint32_t odd = (magnitude >> 13) & 1u;
      return static_cast<uint16_t>(sign | ((magnitude - 0x38000000u + 0xfffu + odd) >> 13));
    }
    if (magnitude < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the tiniest
    // Subnormal f16: shift the full mantissa (with its implicit bit) right and
    // round to nearest-even on the dropped bits.
    const uint32_t exponent = magnitude >> 23;
    const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exponent;  // 14..24 for exponents 102..112
    const uint32_t kept = mantissa >> shift;
    const uint32_t dropped = mantissa & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    const uint32_t round_up = dropped > half || (dropped == half && (kept & 1u)) ? 1u : 0u;
    return static_cast<uint16_t>(sign | (kept + round_up));
  }
  static uint16_t from_float_bits(float value) {
    return from_float_bits_u32(std::bit_cast<uint32_t>(value));
  }
};

// bfloat16: the upper half of an f32. From float rounds to nearest-even; NaN
// stays NaN (quiet bit set, so a payload in the dropped half cannot turn it
// into inf).
struct bfloat16 {
  uint16_t bits = 0;

  constexpr bfloat16() = default;
  explicit bfloat16(float value) : bits(from_float_bits(value)) {}
  static constexpr bfloat16 from_bits(uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  explicit operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

  static constexpr uint16_t from_float_bits_u32(uint32_t f) {
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f | 0x00400000u) >> 16);
    return static_cast<uint16_t>((f + 0x7fffu + ((f >> 16) & 1u)) >> 16);
  }
  static uint16_t from_float_bits(float value) {
    return from_float_bits_u32(std::bit_cast<uint32_t>(value));
  }
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);

// Thrown for every failure; what() is leaky_last_error()'s detail.
class error : public std::runtime_error {
 public:
  error(leaky_status status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  leaky_status status() const noexcept { return status_; }

 private:
  leaky_status status_;
};

struct options {
  int num_threads = 0;     // 0 = all cores (or the executor's max_threads), 1 = calling thread only
  int stream_stores = -1;  // -1 automatic, 0 never, 1 always
  const leaky_executor* executor = nullptr;  // the caller's threads (leaky.h); null = the library's
  leaky_options c() const { return leaky_options{num_threads, stream_stores, executor}; }
};

template <class T>
constexpr leaky_dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return LEAKY_F32;
  else if constexpr (std::is_same_v<T, double>) return LEAKY_F64;
  else if constexpr (std::is_same_v<T, float16>) return LEAKY_F16;
  else {
    static_assert(std::is_same_v<T, bfloat16>, "leaky supports float, double, float16, bfloat16");
    return LEAKY_BF16;
  }
}

inline void check(leaky_status status) {
  if (status != LEAKY_OK) throw error(status, leaky_last_error());
}

inline void check_same_size(size_t a, size_t b, const char* what) {
  if (a != b) {
    throw error(LEAKY_ERROR_SIZE, std::string(what) + ": spans differ in size (" +
                                      std::to_string(a) + " vs " + std::to_string(b) + ")");
  }
}

// y = x > 0 ? x : x * negative_slope. `y` may be the same span as `x`.
template <class T>
void leaky_relu_forward(std::span<const T> x, std::span<T> y, double negative_slope,
                        const options& opts = {}) {
  check_same_size(x.size(), y.size(), "leaky_relu_forward");
  const leaky_options c = opts.c();
  check(::leaky_relu_forward(dtype_of<T>(), x.size(), x.data(), y.data(), negative_slope, &c));
}

// dx = saved > 0 ? dy : dy * negative_slope.
template <class T>
void leaky_relu_backward(std::span<const T> dy, std::span<const T> saved, bool saved_is_result,
                         std::span<T> dx, double negative_slope, const options& opts = {}) {
  check_same_size(dy.size(), saved.size(), "leaky_relu_backward");
  check_same_size(dy.size(), dx.size(), "leaky_relu_backward");
  const leaky_options c = opts.c();
  check(::leaky_relu_backward(dtype_of<T>(), dy.size(), dy.data(), saved.data(),
                              saved_is_result ? 1 : 0, dx.data(), negative_slope, &c));
}

// ReLU as torch.relu: y = x < 0 ? 0 : x.
template <class T>
void plain_relu_forward(std::span<const T> x, std::span<T> y, const options& opts = {}) {
  check_same_size(x.size(), y.size(), "plain_relu_forward");
  const leaky_options c = opts.c();
  check(::leaky_plain_relu_forward(dtype_of<T>(), x.size(), x.data(), y.data(), &c));
}

// dx = saved <= 0 ? 0 : dy (saved: the input or the result).
template <class T>
void plain_relu_backward(std::span<const T> dy, std::span<const T> saved, std::span<T> dx,
                         const options& opts = {}) {
  check_same_size(dy.size(), saved.size(), "plain_relu_backward");
  check_same_size(dy.size(), dx.size(), "plain_relu_backward");
  const leaky_options c = opts.c();
  check(::leaky_plain_relu_backward(dtype_of<T>(), dy.size(), dy.data(), saved.data(), dx.data(),
                                    &c));
}

// ELU's coefficients, PyTorch's defaults.
struct elu_coefficients {
  double alpha = 1.0;
  double scale = 1.0;
  double input_scale = 1.0;
};

// y = x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale.
template <class T>
void elu_forward(std::span<const T> x, std::span<T> y, const elu_coefficients& k = {},
                 const options& opts = {}) {
  check_same_size(x.size(), y.size(), "elu_forward");
  const leaky_options c = opts.c();
  check(::leaky_elu_forward(dtype_of<T>(), x.size(), x.data(), y.data(), k.alpha, k.scale,
                            k.input_scale, &c));
}

// See leaky_elu_backward in leaky.h.
template <class T>
void elu_backward(std::span<const T> dy, std::span<const T> saved, bool saved_is_result,
                  std::span<T> dx, const elu_coefficients& k = {}, const options& opts = {}) {
  check_same_size(dy.size(), saved.size(), "elu_backward");
  check_same_size(dy.size(), dx.size(), "elu_backward");
  const leaky_options c = opts.c();
  check(::leaky_elu_backward(dtype_of<T>(), dy.size(), dy.data(), saved.data(),
                             saved_is_result ? 1 : 0, dx.data(), k.alpha, k.scale, k.input_scale,
                             &c));
}

// bias_act over x viewed as [outer, channels, inner]; `bias` empty = none.
template <class T>
void bias_act_forward(std::span<const T> x, std::span<const T> bias, std::span<T> y,
                      size_t outer, size_t channels, size_t inner,
                      const leaky_bias_act_params& params, const options& opts = {}) {
  check_same_size(x.size(), y.size(), "bias_act_forward");
  check_same_size(x.size(), outer * channels * inner, "bias_act_forward (shape)");
  if (!bias.empty()) check_same_size(bias.size(), channels, "bias_act_forward (bias)");
  const leaky_options c = opts.c();
  check(::leaky_bias_act_forward(dtype_of<T>(), outer, channels, inner, x.data(),
                                 bias.empty() ? nullptr : bias.data(), y.data(), &params, &c));
}

// dx and (unless `db` is empty) the bias gradient; see leaky.h.
template <class T>
void bias_act_backward(std::span<const T> dy, std::span<const T> x, std::span<const T> bias,
                       std::span<T> dx, std::span<T> db, size_t outer, size_t channels,
                       size_t inner, const leaky_bias_act_params& params,
                       const options& opts = {}) {
  check_same_size(dy.size(), x.size(), "bias_act_backward");
  check_same_size(dy.size(), dx.size(), "bias_act_backward");
  check_same_size(x.size(), outer * channels * inner, "bias_act_backward (shape)");
  if (!bias.empty()) check_same_size(bias.size(), channels, "bias_act_backward (bias)");
  if (!db.empty()) check_same_size(db.size(), channels, "bias_act_backward (db)");
  const leaky_options c = opts.c();
  check(::leaky_bias_act_backward(dtype_of<T>(), outer, channels, inner, dy.data(), x.data(),
                                  bias.empty() ? nullptr : bias.data(), dx.data(),
                                  db.empty() ? nullptr : db.data(), &params, &c));
}

// bias_act then dropout; `mask` gets (n + 7) / 8 bytes, one bit per element.
inline size_t dropout_mask_bytes(size_t n) { return n / 8 + (n % 8 != 0 ? 1 : 0); }

template <class T>
void bias_act_dropout_forward(std::span<const T> x, std::span<const T> bias, std::span<T> y,
                              std::span<uint8_t> mask, size_t outer, size_t channels,
                              size_t inner, const leaky_bias_act_params& params,
                              const leaky_dropout_params& dropout, const options& opts = {}) {
  check_same_size(x.size(), y.size(), "bias_act_dropout_forward");
  check_same_size(x.size(), outer * channels * inner, "bias_act_dropout_forward (shape)");
  check_same_size(mask.size(), dropout_mask_bytes(x.size()), "bias_act_dropout_forward (mask)");
  if (!bias.empty()) check_same_size(bias.size(), channels, "bias_act_dropout_forward (bias)");
  const leaky_options c = opts.c();
  check(::leaky_bias_act_dropout_forward(dtype_of<T>(), outer, channels, inner, x.data(),
                                         bias.empty() ? nullptr : bias.data(), y.data(),
                                         mask.data(), &params, &dropout, &c));
}

template <class T>
void bias_act_dropout_backward(std::span<const T> dy, std::span<const T> x,
                               std::span<const T> bias, std::span<const uint8_t> mask,
                               std::span<T> dx, std::span<T> db, size_t outer, size_t channels,
                               size_t inner, const leaky_bias_act_params& params, double p,
                               const options& opts = {}) {
  check_same_size(dy.size(), x.size(), "bias_act_dropout_backward");
  check_same_size(dy.size(), dx.size(), "bias_act_dropout_backward");
  check_same_size(x.size(), outer * channels * inner, "bias_act_dropout_backward (shape)");
  check_same_size(mask.size(), dropout_mask_bytes(x.size()), "bias_act_dropout_backward (mask)");
  if (!bias.empty()) check_same_size(bias.size(), channels, "bias_act_dropout_backward (bias)");
  if (!db.empty()) check_same_size(db.size(), channels, "bias_act_dropout_backward (db)");
  const leaky_options c = opts.c();
  check(::leaky_bias_act_dropout_backward(
      dtype_of<T>(), outer, channels, inner, dy.data(), x.data(),
      bias.empty() ? nullptr : bias.data(), mask.data(), dx.data(),
      db.empty() ? nullptr : db.data(), &params, p, &c));
}

// PReLU over x viewed as [outer, channels, inner]; weight has `channels`
// elements (1: one shared slope).
template <class T>
void prelu_forward(std::span<const T> x, std::span<const T> weight, std::span<T> y, size_t outer,
                   size_t channels, size_t inner, const options& opts = {}) {
  check_same_size(x.size(), y.size(), "prelu_forward");
  check_same_size(x.size(), outer * channels * inner, "prelu_forward (shape)");
  check_same_size(weight.size(), channels, "prelu_forward (weight)");
  const leaky_options c = opts.c();
  check(::leaky_prelu_forward(dtype_of<T>(), outer, channels, inner, x.data(), weight.data(),
                              y.data(), &c));
}

// dx and (unless `dweight` is empty) the weight gradient; see leaky.h.
template <class T>
void prelu_backward(std::span<const T> dy, std::span<const T> x, std::span<const T> weight,
                    std::span<T> dx, std::span<T> dweight, size_t outer, size_t channels,
                    size_t inner, const options& opts = {}) {
  check_same_size(dy.size(), x.size(), "prelu_backward");
  check_same_size(dy.size(), dx.size(), "prelu_backward");
  check_same_size(x.size(), outer * channels * inner, "prelu_backward (shape)");
  check_same_size(weight.size(), channels, "prelu_backward (weight)");
  if (!dweight.empty()) check_same_size(dweight.size(), channels, "prelu_backward (dweight)");
  const leaky_options c = opts.c();
  check(::leaky_prelu_backward(dtype_of<T>(), outer, channels, inner, dy.data(), x.data(),
                               weight.data(), dx.data(),
                               dweight.empty() ? nullptr : dweight.data(), &c));
}

// RReLU; `noise` empty = not wanted (see leaky.h).
template <class T>
void rrelu_forward(std::span<const T> x, std::span<T> y, std::span<T> noise,
                   const leaky_rrelu_params& params, const options& opts = {}) {
  check_same_size(x.size(), y.size(), "rrelu_forward");
  if (!noise.empty()) check_same_size(x.size(), noise.size(), "rrelu_forward (noise)");
  const leaky_options c = opts.c();
  check(::leaky_rrelu_forward(dtype_of<T>(), x.size(), x.data(), y.data(),
                              noise.empty() ? nullptr : noise.data(), &params, &c));
}

template <class T>
void rrelu_backward(std::span<const T> dy, std::span<const T> x, std::span<T> dx,
                    const leaky_rrelu_params& params, const options& opts = {}) {
  check_same_size(dy.size(), x.size(), "rrelu_backward");
  check_same_size(dy.size(), dx.size(), "rrelu_backward");
  const leaky_options c = opts.c();
  check(::leaky_rrelu_backward(dtype_of<T>(), dy.size(), dy.data(), x.data(), dx.data(), &params,
                               &c));
}

inline std::string simd_target() { return ::leaky_simd_target(); }

}  // namespace leaky

#endif  // LEAKY_LEAKY_HPP_

#include "eight_bit/tables.h"

#include <cmath>

#include "eight_bit/exact.h"
#include "eight_bit/fp8.h"

namespace leaky::eight_bit {
namespace {

Fp8 FormatOf(leaky_type8 type) { return type == LEAKY_FP8_E4M3 ? Fp8::kE4M3 : Fp8::kE5M2; }

int32_t QuantizedValue(leaky_type8 type, uint8_t code) {
  return type == LEAKY_QS8 ? static_cast<int32_t>(static_cast<int8_t>(code)) : code;
}

// Quantized: zp_out + round(f(s_in * k) / s_out), clamped, k = x - zp_in.
uint8_t QuantizedEntry(const leaky_q8_params& q, const RealFunction& f, uint8_t code) {
  const int32_t k = QuantizedValue(q.type, code) - q.input.zero_point;
  const int32_t lo = q.output_min - q.output.zero_point, hi = q.output_max - q.output.zero_point;
  const double s_in = q.input.scale, s_out = q.output.scale;
  int32_t t = 0;
  switch (f.kind) {
    case RealFunction::kLeakyRelu:
      t = RoundProduct(k, s_in, k > 0 ? 1.0 : f.slope, s_out, lo, hi);
      break;
    case RealFunction::kRelu:
      t = RoundProduct(k > 0 ? k : 0, s_in, 1.0, s_out, lo, hi);
      break;
    case RealFunction::kElu:
      if (k > 0) {
        t = RoundProduct(k, s_in, f.scale, s_out, lo, hi);
      } else {
        // s_in * k is exact in long double (53 + 9 bits of 64).
        const long double v = static_cast<long double>(s_in) * k;
        const long double y = std::expm1(v * f.input_scale) * f.alpha * f.scale / s_out;
        t = RoundValue(y, lo, hi);
      }
      break;
  }
  return static_cast<uint8_t>(q.output.zero_point + t);
}

// fp8: round(f(x)) from the exact value, scalars rounded to f32 first. A
// NaN input gives its own code back.
uint8_t Fp8Entry(const leaky_q8_params& q, const RealFunction& f, uint8_t code) {
  const Fp8 format = FormatOf(q.type);
  if (IsNanFp8(format, code)) return code;
  const long double x = DecodeFp8(format, code);
  const bool saturate = q.saturate != 0;
  switch (f.kind) {
    case RealFunction::kLeakyRelu: {
      // The product of a 4-bit and a 24-bit significand is exact.
      const long double slope = static_cast<float>(f.slope);
      return x > 0 ? code : EncodeFp8(format, x * slope, saturate);
    }
    case RealFunction::kRelu:
      return x < 0 ? 0x00 : code;
    case RealFunction::kElu: {
      const long double alpha = static_cast<float>(f.alpha), scale = static_cast<float>(f.scale),
                        input_scale = static_cast<float>(f.input_scale);
      const long double y = x <= 0 ? std::expm1(x * input_scale) * alpha * scale : x * scale;
      return EncodeFp8(format, y, saturate);
    }
  }
  return code;
}

// Saturation holds for every result, also one the op passes through: an
// E5M2 infinity becomes the largest finite value of its sign.
uint8_t Saturated(const leaky_q8_params& q, uint8_t code) {
  if (SaturatesPassedValues(q) && (code & 0x7F) == 0x7C) {
    return static_cast<uint8_t>((code & 0x80) | 0x7B);
  }
  return code;
}

}  // namespace

bool SaturatesPassedValues(const leaky_q8_params& q) {
  return q.type == LEAKY_FP8_E5M2 && q.saturate != 0;
}

void BuildForwardTable(const leaky_q8_params& q, const RealFunction& f, uint8_t table[256]) {
  const bool quantized = q.type == LEAKY_QU8 || q.type == LEAKY_QS8;
  for (int code = 0; code < 256; ++code) {
    const auto c = static_cast<uint8_t>(code);
    table[code] = quantized ? QuantizedEntry(q, f, c) : Saturated(q, Fp8Entry(q, f, c));
  }
}

void BuildBackwardTables(const leaky_q8_params& q, const RealFunction& f, uint8_t table[256],
                         uint8_t pass[256], uint8_t keep[256]) {
  for (int code = 0; code < 256; ++code) keep[code] = Saturated(q, static_cast<uint8_t>(code));
  const Fp8 format = FormatOf(q.type);
  for (int code = 0; code < 256; ++code) {
    const auto c = static_cast<uint8_t>(code);
    const long double saved = DecodeFp8(format, c);  // NaN compares false
    if (f.kind == RealFunction::kRelu) {
      table[code] = 0x00;
      pass[code] = !(saved <= 0) ? 0xFF : 0x00;
    } else {
      // dy * slope for every dy (a NaN dy stays itself).
      const long double slope = static_cast<float>(f.slope);
      table[code] = IsNanFp8(format, c) ? c : EncodeFp8(format, saved * slope, q.saturate != 0);
      pass[code] = saved > 0 ? 0xFF : 0x00;
    }
  }
}

void BuildEluBackwardTable(const leaky_q8_params& q, const RealFunction& f, bool saved_is_result,
                           uint8_t table[kPairTableSize]) {
  const Fp8 format = FormatOf(q.type);
  const bool saturate = q.saturate != 0;
  // The scalars rounded once to f32, as the forward; alpha * scale is the
  // exact product of the two (48 bits: exact in long double).
  const long double alpha = static_cast<float>(f.alpha), scale = static_cast<float>(f.scale),
                    input_scale = static_cast<float>(f.input_scale);
  const long double alpha_scale = alpha * scale;
  long double dy[256];
  for (int g = 0; g < 256; ++g) dy[g] = DecodeFp8(format, static_cast<uint8_t>(g));
  // The positive side (and a NaN saved: comparisons are false) is one row:
  // dy * scale, exact in long double (4 + 24 bits).
  uint8_t positive_row[256];
  for (int g = 0; g < 256; ++g) positive_row[g] = EncodeFp8(format, dy[g] * scale, saturate);
  for (int s = 0; s < 256; ++s) {
    uint8_t* row = table + 256 * s;
    const long double saved = DecodeFp8(format, static_cast<uint8_t>(s));
    if (!(saved <= 0)) {
      for (int g = 0; g < 256; ++g) row[g] = positive_row[g];
    } else if (saved_is_result) {
      for (int g = 0; g < 256; ++g) {
        row[g] = EncodeFp8ProductSum(format, dy[g], input_scale, saved, alpha_scale, saturate);
      }
    } else {
      const long double argument = saved * input_scale;  // exact; NaN for -inf * 0
      // Rounded three times (exp, two products) in long double: within
      // about 2^-62 of the value, as the forward's expm1. Past long
      // double's range the value is far outside fp8's (0 or overflow), and
      // the long double result is too.
      const long double m = input_scale * alpha_scale * std::exp(argument);
      for (int g = 0; g < 256; ++g) {
        if (argument == 0) {  // exp(0) = 1: a rational value, rounded exactly
          row[g] = EncodeFp8ProductSum(format, dy[g], input_scale, 0.0L, alpha_scale, saturate);
        } else if (!std::isfinite(argument) || dy[g] == 0 || std::isinf(dy[g]) ||
                   alpha_scale == 0) {
          // Only the class matters (a zero, infinite or NaN factor): exp's
          // value at +-inf (0, inf) or any positive stand-in for a finite
          // argument gives IEEE's class and sign (exp itself could
          // overflow, and 0 * inf would be a NaN the exact value is not).
          const long double e = std::isfinite(argument) ? 1.0L : std::exp(argument);
          row[g] = EncodeFp8(format, dy[g] * input_scale * alpha_scale * e, saturate);
        } else {
          row[g] = EncodeFp8(format, dy[g] * m, saturate);
        }
      }
    }
    for (int g = 0; g < 256; ++g) {  // a NaN dy gives its own byte
      if (IsNanFp8(format, static_cast<uint8_t>(g))) row[g] = static_cast<uint8_t>(g);
    }
  }
}

}  // namespace leaky::eight_bit

// An exact reference for leaky/eight_bit.h, written from the header's
// formulas and the OCP 8-bit float bit layouts, sharing nothing with the
// library: every real value is a boost::multiprecision rational (the doubles
// and floats given are converted exactly), rounding to nearest-even is done
// on the rational, and expm1 is evaluated with 400-bit binary floats, so the
// only case it leaves open is the one the header leaves open: ELU's value
// within kEluBand (about 2^-60, relative) of a rounding tie, which it
// reports instead of guessing.
#ifndef LEAKY_TESTS_EIGHT_BIT_REFERENCE_H_
#define LEAKY_TESTS_EIGHT_BIT_REFERENCE_H_

#include <algorithm>
#include <array>
#include <bit>
#include <boost/math/special_functions/expm1.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace leaky::test::eight_bit {

// Without expression templates: plain values, so `?:` and auto behave.
using Integer = boost::multiprecision::number<boost::multiprecision::cpp_int_backend<>,
                                              boost::multiprecision::et_off>;
using Rational = boost::multiprecision::number<
    boost::multiprecision::rational_adaptor<boost::multiprecision::cpp_int_backend<>>,
    boost::multiprecision::et_off>;
// 400 bits: expm1's relative error is far below the kEluBand in which a
// rounding is left undecided.
using High = boost::multiprecision::number<
    boost::multiprecision::cpp_bin_float<400, boost::multiprecision::digit_base_2>,
    boost::multiprecision::et_off>;

// ---------------------------------------------------------------- rationals

// The exact value of a finite double (every double is m * 2^e).
inline Rational Exact(double d) {
  if (!std::isfinite(d)) throw std::invalid_argument("Exact: not finite");
  int exponent = 0;
  const double mantissa = std::frexp(d, &exponent);  // d = mantissa * 2^exponent
  // mantissa * 2^53 is an integer of at most 53 bits.
  const auto scaled = static_cast<int64_t>(std::ldexp(mantissa, 53));
  Rational r(scaled);
  exponent -= 53;
  const Integer power = Integer(1) << std::abs(exponent);
  return exponent >= 0 ? r * power : r / power;
}

inline Rational Pow2(int e) {
  const Integer power = Integer(1) << std::abs(e);
  return e >= 0 ? Rational(power) : Rational(Integer(1), power);
}

// floor(t) for any rational (cpp_int division truncates toward zero).
inline Integer Floor(const Rational& t) {
  const Integer num = boost::multiprecision::numerator(t);
  const Integer den = boost::multiprecision::denominator(t);  // > 0
  Integer q = num / den;
  if (num < 0 && q * den != num) q -= 1;
  return q;
}

// Round to nearest, ties to even, of the exact value.
inline Integer RoundHalfEven(const Rational& t) {
  const Integer low = Floor(t);
  const Rational fraction = t - Rational(low);  // in [0, 1)
  const Rational half(1, 2);
  if (fraction < half) return low;
  if (fraction > half) return low + 1;
  return (low & 1) == 0 ? low : low + 1;
}

// The conv epilogue's output (eight_bit.h, leaky_q8_bias_act_forward):
// clamp(zero_point + round_half_even(k * multiplier), low, high) of the
// exact product, as the byte of qu8 or qs8.
inline uint8_t EpilogueByte(int64_t k, const Rational& multiplier, int zero_point, int low,
                            int high) {
  Integer q = RoundHalfEven(Rational(k) * multiplier) + zero_point;
  if (q < low) q = low;
  if (q > high) q = high;
  return static_cast<uint8_t>(static_cast<int>(q));
}

// floor(log2(m)) for m > 0.
inline int FloorLog2(const Rational& m) {
  const Integer num = boost::multiprecision::numerator(m);
  const Integer den = boost::multiprecision::denominator(m);
  int e = static_cast<int>(boost::multiprecision::msb(num)) -
          static_cast<int>(boost::multiprecision::msb(den));
  // 2^(e-1) < m < 2^(e+1): one comparison settles it.
  if (m < Pow2(e)) --e;
  return e;
}

// The exact value of a finite High (a binary float of 400 bits).
inline Rational ExactHigh(const High& h) {
  if (h == 0) return Rational(0);
  int exponent = 0;
  const High mantissa = boost::multiprecision::frexp(h, &exponent);  // [0.5, 1)
  const High scaled = boost::multiprecision::ldexp(mantissa, 400);   // an integer
  const Integer integer = scaled.convert_to<Integer>();
  return Rational(integer) * Pow2(exponent - 400);
}

inline High ToHigh(const Rational& r) {
  return High(boost::multiprecision::numerator(r)) / High(boost::multiprecision::denominator(r));
}

inline std::string Show(double d) {
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", d);
  return buffer;
}

// ---------------------------------------------------------------- quantized

// One tensor's quantization and the output clamp, as the test describes a
// case (kept apart from leaky_q8_params, so the reference needs no library
// header).
struct Quantized {
  bool is_signed;  // qs8: the byte is an int8_t
  double input_scale;
  int input_zero_point;
  double output_scale;
  int output_zero_point;
  int output_min, output_max;

  int Code(uint8_t byte) const {
    return is_signed ? static_cast<int>(static_cast<int8_t>(byte)) : static_cast<int>(byte);
  }
  static uint8_t Byte(int value) { return static_cast<uint8_t>(value & 0xff); }
  std::string Describe() const {
    return std::string(is_signed ? "qs8" : "qu8") + " input(scale " + Show(input_scale) + ", zp " +
           std::to_string(input_zero_point) + ") output(scale " + Show(output_scale) + ", zp " +
           std::to_string(output_zero_point) + ") clamp [" + std::to_string(output_min) + ", " +
           std::to_string(output_max) + "]";
  }
};

// The exact scales of a Quantized, converted once.
struct ExactQuantized {
  explicit ExactQuantized(const Quantized& q)
      : q(q), input_scale(Exact(q.input_scale)), output_scale(Exact(q.output_scale)) {}
  // The real value of a byte: input_scale * (q - input_zero_point).
  Rational Real(uint8_t byte) const {
    return input_scale * Rational(q.Code(byte) - q.input_zero_point);
  }
  // The output byte of an exact real result f:
  // clamp(zp_out + round_half_even(f / output_scale), output_min, output_max).
  uint8_t Quantize(const Rational& f) const {
    const Rational t = f / output_scale;
    // Beyond +-1024 steps every zero point and clamp saturates: keep the
    // integers small without changing the result.
    Integer rounded;
    if (t > 1024)
      rounded = 1024;
    else if (t < -1024)
      rounded = -1024;
    else
      rounded = RoundHalfEven(t);
    return Quantized::Byte(
        std::clamp(q.output_zero_point + rounded.convert_to<int>(), q.output_min, q.output_max));
  }
  Quantized q;
  Rational input_scale, output_scale;
};

// The expected output of each of the 256 input bytes; `undecided` marks a
// byte whose exact result lies within kEluBand (relative) of a rounding tie,
// where the header allows either neighbour.
struct Table {
  std::array<uint8_t, 256> expected{};
  std::array<bool, 256> undecided{};
  std::array<bool, 256> any_nan{};  // fp8: a NaN of either sign is right
};

// y for a rational-valued f (LeakyReLU, ReLU, RReLU eval, PReLU).
inline Table QuantizedTable(const Quantized& quantized,
                            const std::function<Rational(const Rational&)>& f) {
  const ExactQuantized q(quantized);
  Table table;
  for (int b = 0; b < 256; ++b) {
    table.expected[b] = q.Quantize(f(q.Real(static_cast<uint8_t>(b))));
  }
  return table;
}

inline Rational LeakyReluReal(const Rational& v, const Rational& slope) {
  return v > 0 ? v : v * slope;
}
inline Rational PlainReluReal(const Rational& v) { return v < 0 ? Rational(0) : v; }

// The header lets ELU's rounding go either way within about 2^-60
// (relative) of a tie (the long-double expm1 of the library); the reference
// leaves open exactly that band.
constexpr int kEluBandLog2 = -60;

// ELU: v <= 0 ? expm1(v * input_scale) * alpha * scale : v * scale, the
// parameters exact (no intermediate rounding).
struct EluParameters {
  double alpha, scale, input_scale;
};

inline Table QuantizedEluTable(const Quantized& quantized, const EluParameters& p) {
  const ExactQuantized q(quantized);
  Table table;
  const Rational alpha = Exact(p.alpha), scale = Exact(p.scale), input_scale = Exact(p.input_scale);
  for (int b = 0; b < 256; ++b) {
    const Rational v = q.Real(static_cast<uint8_t>(b));
    const Rational argument = v * input_scale;
    if (v > 0 || argument == 0) {
      // v * scale, or expm1(0) * alpha * scale = 0: rational, exact.
      table.expected[b] = q.Quantize(v > 0 ? v * scale : Rational(0));
      continue;
    }
    // expm1 of a nonzero rational is transcendental: never a tie, and the
    // 400-bit value is within 2^-390 of it. Either side of the band
    // must round alike for the result to be decided.
    const High e = boost::math::expm1(ToHigh(argument)) * ToHigh(alpha) * ToHigh(scale);
    const Rational f = ExactHigh(e);
    const Rational band = Rational(1) + Pow2(kEluBandLog2);
    const uint8_t y = q.Quantize(f);
    table.expected[b] = y;
    table.undecided[b] = q.Quantize(f * band) != y || q.Quantize(f / band) != y;
  }
  return table;
}

// ---------------------------------------------------------------- fp8

enum class Fp8 { kE4M3, kE5M2 };

struct Fp8Layout {
  int exponent_bits, mantissa_bits, bias;
  const char* name;
};
inline Fp8Layout LayoutOf(Fp8 format) {
  return format == Fp8::kE4M3 ? Fp8Layout{4, 3, 7, "E4M3"} : Fp8Layout{5, 2, 15, "E5M2"};
}

// A value on the extended real line of IEEE arithmetic.
struct Value {
  enum Kind { kFinite, kInfinite, kNan } kind = kFinite;
  bool negative = false;
  Rational magnitude;         // finite only, >= 0
  bool nan_from_nan = false;  // a NaN propagated from a NaN operand (its sign is kept)
};

inline Value Finite(bool negative, Rational magnitude) {
  Value v;
  v.negative = negative;
  v.magnitude = std::move(magnitude);
  return v;
}
inline Value FromDouble(double d) {
  Value v;
  v.negative = std::signbit(d);
  if (std::isnan(d)) {
    v.kind = Value::kNan;
    v.nan_from_nan = true;
  } else if (std::isinf(d)) {
    v.kind = Value::kInfinite;
  } else {
    v.magnitude = Exact(std::fabs(d));
  }
  return v;
}

// Decodes a byte from the bit layout: sign | exponent | mantissa, bias
// 2^(e-1) - 1, exponent field 0 = subnormal (no implicit one, exponent
// 1 - bias); E4M3: S.1111.111 is NaN and there is no infinity; E5M2:
// exponent field all ones is infinity (mantissa 0) or NaN.
inline Value Decode(Fp8 format, uint8_t code) {
  const Fp8Layout l = LayoutOf(format);
  const bool negative = (code & 0x80) != 0;
  const int field = (code >> l.mantissa_bits) & ((1 << l.exponent_bits) - 1);
  const int mantissa = code & ((1 << l.mantissa_bits) - 1);
  const int all_ones = (1 << l.exponent_bits) - 1;
  Value v;
  v.negative = negative;
  if (format == Fp8::kE4M3 && field == all_ones && mantissa == (1 << l.mantissa_bits) - 1) {
    v.kind = Value::kNan;
    v.nan_from_nan = true;
    return v;
  }
  if (format == Fp8::kE5M2 && field == all_ones) {
    v.kind = mantissa == 0 ? Value::kInfinite : Value::kNan;
    v.nan_from_nan = v.kind == Value::kNan;
    return v;
  }
  if (field == 0) {
    v.magnitude = Rational(mantissa) * Pow2(1 - l.bias - l.mantissa_bits);
  } else {
    v.magnitude =
        Rational((1 << l.mantissa_bits) + mantissa) * Pow2(field - l.bias - l.mantissa_bits);
  }
  return v;
}

inline Rational MaxFinite(Fp8 format) {
  return format == Fp8::kE4M3 ? Rational(448) : Rational(57344);
}
inline uint8_t MaxFiniteCode(Fp8 format) { return format == Fp8::kE4M3 ? 0x7e : 0x7b; }
inline uint8_t NanCode(Fp8 format) { return format == Fp8::kE4M3 ? 0x7f : 0x7e; }
inline bool IsNanCode(Fp8 format, uint8_t code) { return Decode(format, code).kind == Value::kNan; }

// What a result too large for the type becomes (OCP's two modes).
inline uint8_t Overflow(Fp8 format, bool negative, int saturate) {
  const uint8_t sign = negative ? 0x80 : 0;
  if (saturate) return sign | MaxFiniteCode(format);
  return sign | (format == Fp8::kE4M3 ? NanCode(format) : uint8_t{0x7c});
}

// Rounds a value to the format, to nearest with ties to even, from its exact
// magnitude: the quantum is 2^(max(floor(log2 m), 1 - bias) - mantissa_bits)
// (subnormals share the smallest normal binade's quantum), rounding the
// magnitude to a multiple of it; a result above the largest finite value
// overflows (so E4M3 overflows above 464, where 480 = S.1111.111 would be
// the next value, and E5M2 from 61440, whose tie goes to the even 65536).
inline uint8_t Encode(Fp8 format, const Value& v, int saturate) {
  const Fp8Layout l = LayoutOf(format);
  const uint8_t sign = v.negative ? 0x80 : 0;
  if (v.kind == Value::kNan) return sign | NanCode(format);
  if (v.kind == Value::kInfinite) return Overflow(format, v.negative, saturate);
  if (v.magnitude == 0) return sign;
  const int minimum_exponent = 1 - l.bias;
  int quantum_exponent = std::max(FloorLog2(v.magnitude), minimum_exponent) - l.mantissa_bits;
  Integer steps = RoundHalfEven(v.magnitude * Pow2(-quantum_exponent));
  if (steps == 0) return sign;                           // underflow keeps the sign
  if (steps == (Integer(1) << (l.mantissa_bits + 1))) {  // rounded up into the next binade
    steps >>= 1;
    ++quantum_exponent;
  }
  if (Rational(steps) * Pow2(quantum_exponent) > MaxFinite(format)) {
    return Overflow(format, v.negative, saturate);
  }
  const int k = steps.convert_to<int>();
  if (k < (1 << l.mantissa_bits)) return static_cast<uint8_t>(sign | k);  // subnormal
  const int field = quantum_exponent + l.mantissa_bits + l.bias;
  return static_cast<uint8_t>(sign | (field << l.mantissa_bits) | (k - (1 << l.mantissa_bits)));
}

// IEEE multiplication on Values (the sign of a zero or an infinity is the
// XOR of the signs; inf * 0 is a NaN whose sign the header does not fix).
inline Value Multiply(const Value& a, const Value& b) {
  Value r;
  if (a.kind == Value::kNan || b.kind == Value::kNan) {
    r = a.kind == Value::kNan ? a : b;
    return r;
  }
  r.negative = a.negative != b.negative;
  const bool a_zero = a.kind == Value::kFinite && a.magnitude == 0;
  const bool b_zero = b.kind == Value::kFinite && b.magnitude == 0;
  if ((a.kind == Value::kInfinite && b_zero) || (b.kind == Value::kInfinite && a_zero)) {
    r.kind = Value::kNan;
    r.nan_from_nan = false;
    return r;
  }
  if (a.kind == Value::kInfinite || b.kind == Value::kInfinite) {
    r.kind = Value::kInfinite;
    return r;
  }
  r.magnitude = a.magnitude * b.magnitude;
  return r;
}

inline bool Positive(const Value& v) {  // v > 0
  if (v.kind == Value::kNan) return false;
  if (v.negative) return false;
  return v.kind == Value::kInfinite || v.magnitude > 0;
}
inline bool NegativeOrZero(const Value& v) {  // v <= 0
  if (v.kind == Value::kNan) return false;
  return v.negative || (v.kind == Value::kFinite && v.magnitude == 0);
}
inline bool Negative(const Value& v) {  // v < 0
  if (v.kind == Value::kNan) return false;
  return v.negative && (v.kind == Value::kInfinite || v.magnitude > 0);
}

// The slope of the fp8 ops: the double rounded once to f32.
inline Value SlopeF32(double slope) {
  return FromDouble(static_cast<double>(static_cast<float>(slope)));
}

// One table entry from a Value.
inline void Set(Table& table, int index, Fp8 format, const Value& v, int saturate) {
  table.expected[index] = Encode(format, v, saturate);
  table.any_nan[index] = v.kind == Value::kNan && !v.nan_from_nan;
}

// eight_bit.h: "A NaN input gives its own byte back (sign and payload
// kept)": a NaN propagated from the input b is b itself.
inline Table Fp8Table(Fp8 format, int saturate, const std::function<Value(const Value&)>& f) {
  Table table;
  for (int b = 0; b < 256; ++b) {
    const Value v = f(Decode(format, static_cast<uint8_t>(b)));
    Set(table, b, format, v, saturate);
    if (v.kind == Value::kNan && v.nan_from_nan) table.expected[b] = static_cast<uint8_t>(b);
  }
  return table;
}

inline Value LeakyReluFp8(const Value& x, const Value& slope) {
  if (Positive(x)) return x;
  return Multiply(x, slope);
}
inline Value PlainReluFp8(const Value& x) { return Negative(x) ? Finite(false, 0) : x; }

// ELU on fp8: x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale.
// Only called with parameters for which every reading of the header agrees
// (f32-exact, alpha * scale exact in f32); undecided marks near-ties.
inline Table Fp8EluTable(Fp8 format, int saturate, const EluParameters& p) {
  Table table;
  const Value alpha = FromDouble(p.alpha), scale = FromDouble(p.scale),
              input_scale = FromDouble(p.input_scale);
  for (int b = 0; b < 256; ++b) {
    const Value x = Decode(format, static_cast<uint8_t>(b));
    if (x.kind == Value::kNan) {  // a NaN input gives its own byte back (eight_bit.h)
      table.expected[b] = static_cast<uint8_t>(b);
      continue;
    }
    if (!NegativeOrZero(x)) {
      Set(table, b, format, Multiply(x, scale), saturate);
      continue;
    }
    const Value argument = Multiply(x, input_scale);  // <= 0 or -inf
    Value e;                                          // expm1(argument)
    if (argument.kind == Value::kInfinite) {
      e = Finite(true, 1);
    } else if (argument.magnitude == 0) {
      e = argument;  // expm1(+-0) = +-0
    } else {
      const High h = boost::math::expm1(-ToHigh(argument.magnitude));
      e = Finite(true, ExactHigh(-h));
    }
    const Value y = Multiply(Multiply(e, alpha), scale);
    Set(table, b, format, y, saturate);
    if (y.kind == Value::kFinite && y.magnitude != 0 && argument.kind == Value::kFinite &&
        argument.magnitude != 0) {
      const Rational band = Rational(1) + Pow2(kEluBandLog2);
      Value up = y, down = y;
      up.magnitude *= band;
      down.magnitude /= band;
      table.undecided[b] = Encode(format, up, saturate) != table.expected[b] ||
                           Encode(format, down, saturate) != table.expected[b];
    }
  }
  return table;
}

// ---------------------------------------------------------------- fp8 backward

// IEEE addition on Values, exact: a NaN operand's NaN, inf + -inf a new
// NaN, an exact zero sum +0 unless both addends are -0.
inline Value Add(const Value& a, const Value& b) {
  if (a.kind == Value::kNan) return a;
  if (b.kind == Value::kNan) return b;
  if (a.kind == Value::kInfinite && b.kind == Value::kInfinite) {
    if (a.negative == b.negative) return a;
    Value nan;
    nan.kind = Value::kNan;
    return nan;
  }
  if (a.kind == Value::kInfinite) return a;
  if (b.kind == Value::kInfinite) return b;
  const Rational sum = (a.negative ? -a.magnitude : a.magnitude) +
                       (b.negative ? -b.magnitude : b.magnitude);
  if (sum == 0) return Finite(a.negative && b.negative, Rational(0));
  return sum < 0 ? Finite(true, -sum) : Finite(false, sum);
}

// ELU's backward on fp8 (eight_bit.h), every (saved, dy) pair: rows[saved]
// is the table over dy. From the input: saved <= 0 ? dy * input_scale *
// alpha * scale * exp(saved * input_scale) : dy * scale; from the result:
// saved <= 0 ? dy * input_scale * (saved + alpha * scale) : dy * scale. exp
// is exact where it is rational (its argument 0, +-inf) and 400-bit
// otherwise (then `undecided` marks the kEluBand around a tie). Parameters
// as Fp8EluTable's (floats).
inline std::vector<Table> Fp8EluBackwardRows(Fp8 format, int saturate, const EluParameters& p,
                                             bool from_result) {
  const Value alpha = FromDouble(p.alpha), scale = FromDouble(p.scale),
              input_scale = FromDouble(p.input_scale);
  const Value alpha_scale = Multiply(alpha, scale);
  std::vector<Table> rows(256);
  for (int s = 0; s < 256; ++s) {
    const Value saved = Decode(format, static_cast<uint8_t>(s));
    Table& row = rows[s];
    // The factor dy is multiplied by, and whether it is irrational.
    Value factor;
    bool irrational = false;
    if (!NegativeOrZero(saved)) {  // saved > 0 or NaN: comparisons are false
      factor = scale;
    } else if (from_result) {
      factor = Multiply(input_scale, Add(saved, alpha_scale));
    } else {
      const Value argument = Multiply(saved, input_scale);
      Value e;  // exp(argument)
      if (argument.kind == Value::kNan) {
        e = argument;
      } else if (argument.kind == Value::kInfinite) {
        e = argument.negative ? Finite(false, 0) : argument;
      } else if (argument.magnitude == 0) {
        e = Finite(false, 1);
      } else {
        const High h = boost::multiprecision::exp(argument.negative ? -ToHigh(argument.magnitude)
                                                                    : ToHigh(argument.magnitude));
        // Below 2^-600 every |dx| of the test's grid (|dy * input_scale *
        // alpha * scale| < 2^40) is below 2^-560 and rounds to a zero, as
        // the stand-in's does; the exact value would be a rational of up
        // to 10^9 bits (exp(-57344 * 1e4)).
        const High floor = boost::multiprecision::ldexp(High(1), -600);
        e = Finite(false, h < floor ? Pow2(-600) : ExactHigh(h));
        irrational = true;
      }
      factor = Multiply(Multiply(input_scale, alpha_scale), e);
    }
    for (int g = 0; g < 256; ++g) {
      const Value dy = Decode(format, static_cast<uint8_t>(g));
      if (dy.kind == Value::kNan) {  // a NaN dy gives its own byte
        row.expected[g] = static_cast<uint8_t>(g);
        continue;
      }
      const Value dx = Multiply(dy, factor);
      Set(row, g, format, dx, saturate);
      if (irrational && dx.kind == Value::kFinite && dx.magnitude != 0) {
        const Rational band = Rational(1) + Pow2(kEluBandLog2);
        Value up = dx, down = dx;
        up.magnitude *= band;
        down.magnitude /= band;
        row.undecided[g] = Encode(format, up, saturate) != row.expected[g] ||
                           Encode(format, down, saturate) != row.expected[g];
      }
    }
  }
  return rows;
}

// The f32 nearest to a rational, ties to even (from its exact value: the
// quantum 2^(max(floor(log2 |r|), -126) - 23); beyond the largest finite
// float's rounding range, infinity).
inline float RoundToFloat(const Rational& r) {
  if (r == 0) return 0.0f;
  const bool negative = r < 0;
  const Rational m = negative ? -r : r;
  const int quantum = std::max(FloorLog2(m), -126) - 23;
  const Integer steps = RoundHalfEven(m * Pow2(-quantum));
  const Rational rounded = Rational(steps) * Pow2(quantum);
  float f;
  if (rounded > Exact(static_cast<double>(std::numeric_limits<float>::max()))) {
    f = std::numeric_limits<float>::infinity();
  } else {
    f = std::ldexp(steps.convert_to<float>(), quantum);  // steps <= 2^24: exact
  }
  return negative ? -f : f;
}

// PReLU's dweight term: x > 0 ? 0 : x * dy.
inline Value PreluWeightTerm(const Value& x, const Value& dy) {
  return Positive(x) ? Finite(false, 0) : Multiply(x, dy);
}

// A float's exact Value (for leaky_fp8_from_f32).
inline Value FromFloat(float f) { return FromDouble(static_cast<double>(f)); }

// The f32 that leaky_fp8_to_f32 must give (exact: every fp8 value is a float).
inline float ToFloat(const Value& v) {
  if (v.kind == Value::kNan) return std::numeric_limits<float>::quiet_NaN();
  if (v.kind == Value::kInfinite) {
    return v.negative ? -std::numeric_limits<float>::infinity()
                      : std::numeric_limits<float>::infinity();
  }
  const float magnitude = v.magnitude.convert_to<float>();
  return v.negative ? -magnitude : magnitude;
}

// The f32 of a Value sum (NaN of any sign and payload compare equal).
inline float ToFloatOfSum(const Value& v) {
  if (v.kind != Value::kFinite) return ToFloat(v);
  return RoundToFloat(v.negative ? -v.magnitude : v.magnitude);
}

}  // namespace leaky::test::eight_bit

#endif  // LEAKY_TESTS_EIGHT_BIT_REFERENCE_H_

#include "eight_bit/fp8.h"

#include <array>
#include <bit>
#include <utility>
#include <cmath>
#include <limits>

namespace leaky::eight_bit {
namespace {

struct Layout {
  int exponent_bits, mantissa_bits, bias;
  uint8_t largest_finite;  // positive code
  uint8_t overflow;        // positive code of a non-saturated overflow
  uint8_t nan;             // positive code of the NaN we produce
};

constexpr Layout kE4M3{4, 3, 7, 0x7E, 0x7F, 0x7F};
constexpr Layout kE5M2{5, 2, 15, 0x7B, 0x7C, 0x7E};

const Layout& Of(Fp8 format) { return format == Fp8::kE4M3 ? kE4M3 : kE5M2; }

long double Magnitude(const Layout& f, uint8_t code) {
  const int exponent = (code >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mantissa = code & ((1 << f.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(static_cast<long double>(mantissa), 1 - f.bias - f.mantissa_bits);
  return std::ldexp(static_cast<long double>((1 << f.mantissa_bits) | mantissa),
                    exponent - f.bias - f.mantissa_bits);
}

// Every positive code's value, and the overflow limit (the largest
// finite value plus half its ulp), once per format: a 64 KiB table of ELU's
// backward rounds 32768 values, and ldexp per probe of the search cost
// most of it.
struct Values {
  long double magnitude[128];
  long double largest, limit;
};

Values MakeValues(const Layout& f) {
  Values v{};
  for (int code = 0; code < 128; ++code) v.magnitude[code] = Magnitude(f, static_cast<uint8_t>(code));
  v.largest = v.magnitude[f.largest_finite];
  // Half an ulp above the largest finite value: the largest code's
  // neighbour (one mantissa step up) would be the next value.
  v.limit = v.largest + std::ldexp(1.0L, static_cast<int>(std::ilogb(v.largest)) - f.mantissa_bits - 1);
  return v;
}

const Values& ValuesOf(Fp8 format) {
  static const Values e4m3 = MakeValues(kE4M3), e5m2 = MakeValues(kE5M2);
  return format == Fp8::kE4M3 ? e4m3 : e5m2;
}

}  // namespace

long double DecodeFp8(Fp8 format, uint8_t code) {
  const Layout& f = Of(format);
  const uint8_t magnitude = code & 0x7F;
  long double value;
  if (IsNanFp8(format, code)) {
    value = std::nanl("");
  } else if (format == Fp8::kE5M2 && magnitude == 0x7C) {
    value = HUGE_VALL;
  } else {
    value = Magnitude(f, magnitude);
  }
  return (code & 0x80) != 0 ? -value : value;
}

uint8_t EncodeFp8(Fp8 format, long double v, bool saturate) {
  const Layout& f = Of(format);
  const Values& values = ValuesOf(format);
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  if (std::isnan(v)) return sign | f.nan;
  const long double a = std::fabs(v);
  const long double largest = values.largest, limit = values.limit;
  // At the limit itself, ties go to the even neighbour: E4M3's largest code
  // (0x7E) is even, E5M2's (0x7B) is odd, so its tie overflows.
  const bool overflows = a > limit || (a == limit && (f.largest_finite & 1) != 0);
  if (overflows) return sign | (saturate ? f.largest_finite : f.overflow);
  if (a >= largest) return sign | f.largest_finite;
  // Binary search for the largest code whose value is <= a (codes of one
  // sign are ordered by value), then round between it and the next.
  uint8_t lo = 0, hi = f.largest_finite;  // Magnitude(lo) <= a < Magnitude(hi)
  while (hi - lo > 1) {
    const uint8_t mid = static_cast<uint8_t>((lo + hi) / 2);
    if (values.magnitude[mid] <= a) lo = mid; else hi = mid;
  }
  const long double below = values.magnitude[lo], above = values.magnitude[hi];
  // Both differences are exact: a and the neighbours lie within a factor of
  // two of each other or a is a small multiple of the subnormal step, and
  // long double has 64 bits for values of at most 28.
  const long double to_below = a - below, to_above = above - a;
  uint8_t code;
  if (to_below < to_above) code = lo;
  else if (to_above < to_below) code = hi;
  else code = (lo & 1) == 0 ? lo : hi;
  return sign | code;
}

}  // namespace leaky::eight_bit

namespace leaky::eight_bit {
namespace {

using u128 = unsigned __int128;

// |v| = mantissa * 2^exponent with mantissa < 2^64, for a finite nonzero
// long double (64-bit significand).
struct Term {
  bool negative;
  uint64_t mantissa;
  int exponent;
};

Term Decompose(long double v) {
  int exponent = 0;
  const long double fraction = std::frexp(std::fabs(v), &exponent);  // [0.5, 1)
  return {std::signbit(v), static_cast<uint64_t>(std::ldexp(fraction, 64)), exponent - 64};
}

// A nonnegative integer of 320 bits: (2^64 mantissa << 140 gap) times a
// 64-bit mantissa fits (269 bits).
struct Wide {
  static constexpr int kLimbs = 5;
  uint64_t limb[kLimbs] = {};

  void AddShifted(uint64_t m, int shift) {  // += m << shift
    int index = shift / 64;
    const int bits = shift % 64;
    u128 carry = static_cast<u128>(m) << bits;
    for (; carry != 0 && index < kLimbs; ++index) {
      const u128 t = static_cast<u128>(limb[index]) + static_cast<uint64_t>(carry);
      limb[index] = static_cast<uint64_t>(t);
      carry = (carry >> 64) + (t >> 64);
    }
  }
  bool Less(const Wide& o) const {
    for (int i = kLimbs - 1; i >= 0; --i) {
      if (limb[i] != o.limb[i]) return limb[i] < o.limb[i];
    }
    return false;
  }
  void Subtract(const Wide& o) {  // *this >= o
    uint64_t borrow = 0;
    for (int i = 0; i < kLimbs; ++i) {
      const u128 t = static_cast<u128>(limb[i]) - o.limb[i] - borrow;
      limb[i] = static_cast<uint64_t>(t);
      borrow = static_cast<uint64_t>(t >> 64) != 0 ? 1 : 0;
    }
  }
  void Multiply(uint64_t m) {  // the product stays below 2^320 (above)
    u128 carry = 0;
    for (uint64_t& l : limb) {
      const u128 t = static_cast<u128>(l) * m + carry;
      l = static_cast<uint64_t>(t);
      carry = t >> 64;
    }
  }
  int BitLength() const {
    for (int i = kLimbs - 1; i >= 0; --i) {
      if (limb[i] != 0) return 64 * i + 64 - std::countl_zero(limb[i]);
    }
    return 0;
  }
  // Bits [from, from + 64) (from >= 0), and whether any bit below `from` is set.
  uint64_t Bits(int from, bool* sticky) const {
    const int index = from / 64, shift = from % 64;
    uint64_t out = limb[index] >> shift;
    if (shift != 0 && index + 1 < kLimbs) out |= limb[index + 1] << (64 - shift);
    *sticky = shift != 0 && (limb[index] & ((uint64_t{1} << shift) - 1)) != 0;
    for (int i = 0; i < index && !*sticky; ++i) *sticky = limb[i] != 0;
    return out;
  }
};

// Past this exponent gap the smaller addend of c + d lies below 2^-76 of
// the larger (2^64 mantissas): a product with a 64-bit a * b then stays
// below 2^-12 of the larger term's lowest bit, so only its sign can decide
// a rounding (when the rest is exactly a tie); it is replaced by the
// smallest nonzero value of its sign at this gap, which decides alike.
constexpr int kGapLimit = 140;

}  // namespace

uint8_t EncodeFp8ProductSum(Fp8 format, long double a, long double b, long double c,
                            long double d, bool saturate) {
  // The class (NaN, infinite, zero) and its sign as IEEE arithmetic gives
  // them: the long double operations are exact in class (no finite product
  // or sum of these operands overflows or underflows long double's range).
  const long double product = a * b, sum = c + d, approximate = product * sum;
  if (!std::isfinite(approximate) || approximate == 0) {
    return EncodeFp8(format, approximate, saturate);
  }
  // Finite and nonzero: N * 2^E exactly, N an integer of at most 269 bits.
  const Term p = Decompose(product);
  Term hi = Decompose(c), lo = Decompose(d);
  const bool c_zero = c == 0, d_zero = d == 0;
  if (c_zero) hi = lo;
  if (d_zero) lo = hi;
  if (!c_zero && !d_zero && lo.exponent > hi.exponent) std::swap(hi, lo);
  Wide sum_magnitude;
  bool sum_negative = hi.negative;
  int exponent = hi.exponent;
  if (c_zero || d_zero) {
    sum_magnitude.AddShifted(hi.mantissa, 0);
  } else {
    int gap = hi.exponent - lo.exponent;
    if (gap > kGapLimit) {
      lo.mantissa = 1;
      gap = kGapLimit;
    }
    exponent = hi.exponent - gap;
    Wide high, low;
    high.AddShifted(hi.mantissa, gap);
    low.AddShifted(lo.mantissa, 0);
    if (hi.negative == lo.negative) {
      sum_magnitude = high;
      sum_magnitude.AddShifted(lo.mantissa, 0);
    } else if (low.Less(high)) {
      sum_magnitude = high;
      sum_magnitude.Subtract(low);
    } else {
      sum_magnitude = low;
      sum_magnitude.Subtract(high);
      sum_negative = lo.negative;
    }
  }
  sum_magnitude.Multiply(p.mantissa);
  exponent += p.exponent;
  // Rounded to odd at 64 bits, then to the format: the odd last bit keeps
  // an inexact value off every tie and boundary of a format with at most 62
  // bits (Boldo and Melquiond's round-to-odd), so the second rounding is the
  // exact value's.
  const int length = sum_magnitude.BitLength();
  bool sticky = false;
  const int from = length > 64 ? length - 64 : 0;
  uint64_t top = sum_magnitude.Bits(from, &sticky);
  if (sticky) top |= 1;
  const long double magnitude = std::ldexp(static_cast<long double>(top), exponent + from);
  const bool negative = p.negative != sum_negative;
  return EncodeFp8(format, negative ? -magnitude : magnitude, saturate);
}

}  // namespace leaky::eight_bit

namespace leaky::eight_bit {

float PreluWeightGradientFp8(Fp8 format, const uint8_t* dy, const uint8_t* x, size_t outer,
                             size_t channels, size_t inner, size_t c) {
  // Every finite code as an integer multiple of the smallest subnormal
  // (2^-9, 2^-16): at most 448 * 2^9 or 57344 * 2^16 < 2^32, so a product
  // has at most 64 bits and 2^63 of them fit in 128.
  const int shift = format == Fp8::kE4M3 ? 9 : 16;
  enum Kind : uint8_t { kFinite, kPositiveInfinity, kNegativeInfinity, kNan };
  int64_t value[256];
  Kind kind[256];
  for (int code = 0; code < 256; ++code) {
    const long double v = DecodeFp8(format, static_cast<uint8_t>(code));
    kind[code] = std::isnan(v) ? kNan : std::isinf(v) ? (v > 0 ? kPositiveInfinity : kNegativeInfinity) : kFinite;
    value[code] = kind[code] == kFinite ? static_cast<int64_t>(std::ldexp(v, shift)) : 0;
  }
  __int128 sum = 0;
  bool nan = false, positive_infinity = false, negative_infinity = false;
  for (size_t o = 0; o < outer; ++o) {
    const size_t row = (o * channels + c) * inner;
    for (size_t i = 0; i < inner; ++i) {
      const uint8_t xc = x[row + i], gc = dy[row + i];
      const Kind xk = kind[xc], gk = kind[gc];
      if (xk == kFinite && value[xc] > 0) continue;       // x > 0: the term is 0
      if (xk == kPositiveInfinity) continue;
      if (xk == kFinite && gk == kFinite) {
        sum += static_cast<__int128>(value[xc]) * value[gc];
        continue;
      }
      // A NaN, or an infinity times something: IEEE's product.
      if (xk == kNan || gk == kNan) {
        nan = true;
      } else if ((xk == kFinite && value[xc] == 0) || (gk == kFinite && value[gc] == 0)) {
        nan = true;  // 0 * inf
      } else {
        const bool x_negative = xk == kNegativeInfinity || (xk == kFinite && value[xc] < 0);
        const bool g_negative = gk == kNegativeInfinity || (gk == kFinite && value[gc] < 0);
        (x_negative != g_negative ? negative_infinity : positive_infinity) = true;
      }
    }
  }
  if (nan || (positive_infinity && negative_infinity)) return std::numeric_limits<float>::quiet_NaN();
  if (positive_infinity) return std::numeric_limits<float>::infinity();
  if (negative_infinity) return -std::numeric_limits<float>::infinity();
  if (sum == 0) return 0.0f;
  // Rounded to odd at 64 bits, exactly scaled, then once to f32 (24 bits
  // of 64: the second rounding is the exact value's; no f32 subnormal is
  // reached, every nonzero sum is at least 2^-32).
  const bool negative = sum < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(sum) : sum;
  int exponent = -2 * shift;
  while (magnitude >> 64 != 0) {
    const bool odd = (magnitude & 1) != 0;
    magnitude >>= 1;
    magnitude |= odd ? 1 : 0;  // sticky: round to odd keeps every lost bit
    ++exponent;
  }
  const long double scaled =
      std::ldexp(static_cast<long double>(static_cast<uint64_t>(magnitude)), exponent);
  return static_cast<float>(negative ? -scaled : scaled);
}

}  // namespace leaky::eight_bit

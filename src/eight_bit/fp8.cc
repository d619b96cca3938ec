#include "eight_bit/fp8.h"

#include <array>
#include <cmath>

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
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  if (std::isnan(v)) return sign | f.nan;
  const long double a = std::fabs(v);
  const long double largest = Magnitude(f, f.largest_finite);
  // Half an ulp above the largest finite value: the largest code's
  // neighbour (one mantissa step up) would be the next value.
  const long double half_ulp = std::ldexp(1.0L, static_cast<int>(std::ilogb(largest)) - f.mantissa_bits - 1);
  const long double limit = largest + half_ulp;
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
    if (Magnitude(f, mid) <= a) lo = mid; else hi = mid;
  }
  const long double below = Magnitude(f, lo), above = Magnitude(f, hi);
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

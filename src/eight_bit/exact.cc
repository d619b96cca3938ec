#include "eight_bit/exact.h"

#include <bit>
#include <cmath>
#include <cstdlib>

namespace leaky::eight_bit {
namespace {

using u128 = unsigned __int128;

// |v| = mantissa * 2^exponent, mantissa < 2^53 (subnormals included).
struct Dyadic {
  uint64_t mantissa;
  int exponent;
};

Dyadic Decompose(double v) {
  int exponent = 0;
  const double fraction = std::frexp(std::fabs(v), &exponent);  // in [0.5, 1)
  return {static_cast<uint64_t>(std::ldexp(fraction, 53)), exponent - 53};
}

int BitLength(u128 v) {
  const uint64_t high = static_cast<uint64_t>(v >> 64);
  return high != 0 ? 128 - std::countl_zero(high) : 64 - std::countl_zero(static_cast<uint64_t>(v));
}

int32_t Clamp(int64_t v, int32_t lo, int32_t hi) {
  return static_cast<int32_t>(v < lo ? lo : (v > hi ? hi : v));
}

}  // namespace

int32_t RoundProduct(int32_t k, double a, double b, double c, int32_t lo, int32_t hi) {
  if (k == 0 || a == 0 || b == 0) return Clamp(0, lo, hi);
  // Fast path: the value in long double (64-bit significand, an exponent
  // range no product of doubles leaves) is within 3 roundings, a relative
  // 2^-62, of the exact one; when it is farther than 2^-56 of itself from
  // the nearest half-integer, its rounding is the exact value's.
  const long double estimate = static_cast<long double>(k) * a * b / c;
  const long double magnitude_estimate = std::fabs(estimate);
  if (magnitude_estimate >= 4096.0L) return estimate > 0 ? hi : lo;
  {
    const long double below = std::floor(estimate);
    const long double from_half = std::fabs(estimate - below - 0.5L);
    if (from_half > magnitude_estimate * 0x1p-56L) {
      const int64_t rounded = static_cast<int64_t>(below) + (estimate - below > 0.5L ? 1 : 0);
      return Clamp(rounded, lo, hi);
    }
  }
  const bool negative = ((k < 0) != (a < 0)) != (b < 0);
  const Dyadic da = Decompose(a), db = Decompose(b), dc = Decompose(c);
  u128 numerator = static_cast<u128>(da.mantissa) * db.mantissa * static_cast<uint64_t>(std::abs(k));
  u128 denominator = dc.mantissa;
  int shift = da.exponent + db.exponent - dc.exponent;  // value = numerator * 2^shift / denominator
  // value lies in (2^(bits_n - bits_d + shift - 1), 2^(bits_n - bits_d + shift + 1)).
  const int magnitude = BitLength(numerator) - BitLength(denominator) + shift;
  // Beyond 2^11 every result clamps (|lo|, |hi| < 2^10); below 1/2 it is 0.
  const int64_t saturated = negative ? -(int64_t{1} << 11) : (int64_t{1} << 11);
  if (magnitude - 1 >= 11) return Clamp(saturated, lo, hi);
  if (magnitude + 1 <= -1) return Clamp(0, lo, hi);
  // Here shift is within [bits_d - bits_n - 1, bits_d - bits_n + 12]: the
  // shifted operand keeps at most 117 bits.
  if (shift >= 0) {
    numerator <<= shift;
  } else {
    denominator <<= -shift;
  }
  u128 quotient = numerator / denominator;
  const u128 remainder = numerator % denominator;
  const u128 twice = remainder << 1;
  if (twice > denominator || (twice == denominator && (quotient & 1) != 0)) ++quotient;
  const int64_t rounded = static_cast<int64_t>(quotient);
  return Clamp(negative ? -rounded : rounded, lo, hi);
}

int32_t RoundValue(long double v, int32_t lo, int32_t hi) {
  if (std::isnan(v)) return Clamp(0, lo, hi);
  if (v >= 4096.0L) return hi;
  if (v <= -4096.0L) return lo;
  // Ties to even by hand, whatever rounding mode the caller has set:
  // v - floor(v) is exact for |v| < 4096 (no bits below v's last one).
  const long double below = std::floor(v), fraction = v - below;
  int64_t rounded = static_cast<int64_t>(below);
  if (fraction > 0.5L || (fraction == 0.5L && (rounded & 1) != 0)) ++rounded;
  return Clamp(rounded, lo, hi);
}

}  // namespace leaky::eight_bit

// Exact rounding of a product of doubles for the quantized tables: the
// quantized result of a real value k * a * b / c (k a small integer, a, b, c
// doubles: the input scale, the slope or gain, the output scale) rounded to
// nearest with ties to even, without any intermediate rounding. Every
// double is m * 2^e with m < 2^53 an integer, so the value is
// (|k| m_a m_b / m_c) * 2^(e_a + e_b - e_c): a 115-bit numerator over a
// 53-bit denominator, decided with 128-bit integers.
#ifndef LEAKY_EIGHT_BIT_EXACT_H_
#define LEAKY_EIGHT_BIT_EXACT_H_

#include <cstdint>

namespace leaky::eight_bit {

// round_half_even(k * a * b / c) clamped to [lo, hi]. |k| < 2^10; a, b
// finite; c finite and > 0; lo <= hi with |lo|, |hi| < 2^10.
int32_t RoundProduct(int32_t k, double a, double b, double c, int32_t lo, int32_t hi);

// round_half_even(v) clamped to [lo, hi], for a long double value (ELU's
// tables: expm1 has no exact rational form).
int32_t RoundValue(long double v, int32_t lo, int32_t hi);

}  // namespace leaky::eight_bit

#endif  // LEAKY_EIGHT_BIT_EXACT_H_

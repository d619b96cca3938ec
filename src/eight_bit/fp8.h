// The two OCP 8-bit float formats (E4M3, E5M2): exact decoding and correctly
// rounded encoding (to nearest, ties to even) from long double, which holds
// every value the table builders produce exactly (a decoded code times an
// f32 slope has at most 28 significant bits; a double converts exactly).
#ifndef LEAKY_EIGHT_BIT_FP8_H_
#define LEAKY_EIGHT_BIT_FP8_H_

#include <cstddef>
#include <cstdint>

namespace leaky::eight_bit {

enum class Fp8 { kE4M3, kE5M2 };

// The real value of a code (NaN for NaN codes, +-inf for E5M2's).
long double DecodeFp8(Fp8 format, uint8_t code);

// The code nearest to v, ties to the even code. Beyond the largest finite
// value (rounding away from it): saturate ? +-largest finite : E5M2 +-inf,
// E4M3 NaN; +-inf likewise. NaN gives the format's NaN with v's sign
// (E4M3 S.1111.111, E5M2 S.11111.10).
uint8_t EncodeFp8(Fp8 format, long double v, bool saturate);

// The code of the exact real value a * b * (c + d), rounded once as
// EncodeFp8 rounds (ELU's backward from its result and at exp's zero
// argument: dy * input_scale * (y + alpha * scale)). Zeros, infinities and
// NaN follow IEEE arithmetic on the operands (c + d's zero sign as IEEE's
// sum). a * b must be exact in long double (an fp8 value times an f32 is);
// c and d are any long doubles: the sum and the product are taken exactly
// (fp8.cc), so a tie is a tie.
uint8_t EncodeFp8ProductSum(Fp8 format, long double a, long double b, long double c,
                            long double d, bool saturate);

// PReLU's weight gradient of channel c over [outer, channels, inner]: the
// sum of (x > 0 ? 0 : x * dy) over every outer and inner position, taken
// exactly (every fp8 product is an integer multiple of 2^-18 (E4M3) or
// 2^-32 (E5M2) below 2^64 of them: a 128-bit sum) and rounded once to f32,
// to nearest with ties to even; so the bits depend on nothing but the
// data (not the order, not the thread count). NaN when a term is (x NaN,
// 0 * inf) or infinities of both signs meet; +-inf when only one sign of
// infinity occurs; an exact zero is +0.
float PreluWeightGradientFp8(Fp8 format, const uint8_t* dy, const uint8_t* x, size_t outer,
                             size_t channels, size_t inner, size_t c);

inline bool IsNanFp8(Fp8 format, uint8_t code) {
  return format == Fp8::kE4M3 ? (code & 0x7F) == 0x7F : (code & 0x7F) > 0x7C;
}

}  // namespace leaky::eight_bit

#endif  // LEAKY_EIGHT_BIT_FP8_H_

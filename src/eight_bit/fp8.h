// The two OCP 8-bit float formats (E4M3, E5M2): exact decoding and correctly
// rounded encoding (to nearest, ties to even) from long double, which holds
// every value the table builders produce exactly (a decoded code times an
// f32 slope has at most 28 significant bits; a double converts exactly).
#ifndef LEAKY_EIGHT_BIT_FP8_H_
#define LEAKY_EIGHT_BIT_FP8_H_

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

inline bool IsNanFp8(Fp8 format, uint8_t code) {
  return format == Fp8::kE4M3 ? (code & 0x7F) == 0x7F : (code & 0x7F) > 0x7C;
}

}  // namespace leaky::eight_bit

#endif  // LEAKY_EIGHT_BIT_FP8_H_

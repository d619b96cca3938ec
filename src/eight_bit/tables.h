// The 8-bit ops as tables: every op of eight_bit.h maps each of the 256
// input codes to its exact output code (fp8.h's and exact.h's rounding),
// built once per call (per channel for PReLU) before the kernels look them
// up (kernels/byte_lookup-inl.h).
#ifndef LEAKY_EIGHT_BIT_TABLES_H_
#define LEAKY_EIGHT_BIT_TABLES_H_

#include <cstddef>
#include <cstdint>

#include "leaky/eight_bit.h"

namespace leaky::eight_bit {

// A forward op's function on reals, with its scalars as the caller gave
// them (fp8 tables round them to f32 first).
struct RealFunction {
  enum Kind { kLeakyRelu, kRelu, kElu } kind = kLeakyRelu;
  double slope = 0;                            // LeakyReLU
  double alpha = 1, scale = 1, input_scale = 1;  // ELU
};

// y = table[x] for the call's type and parameters (already validated).
void BuildForwardTable(const leaky_q8_params& q, const RealFunction& f, uint8_t table[256]);

// fp8 backward: dx = pass[saved] != 0 ? keep[dy] : table[dy]; pass holds
// 0x00 or 0xFF. LeakyReLU: table = round(dy * slope), pass = saved > 0 (with
// a non-negative slope the result's sign answers the same). ReLU (kRelu):
// table = +0, pass = !(saved <= 0). keep is dy itself, or with saturation
// (SaturatesPassedValues) dy with E5M2's infinities made finite.
void BuildBackwardTables(const leaky_q8_params& q, const RealFunction& f, uint8_t table[256],
                         uint8_t pass[256], uint8_t keep[256]);
bool SaturatesPassedValues(const leaky_q8_params& q);

// fp8 ELU backward: dx = table[256 * saved + dy] (65536 entries). ELU's
// derivative makes dx depend on both bytes in a way no per-byte table pair
// expresses (round(dy * m(x)) is not a function of round(m(x)) and dy), so
// every pair is rounded once here. From the input (saved_is_result 0),
// saved <= 0: round(dy * input_scale * alpha * scale * exp(saved *
// input_scale)) in long double (the forward's bound), or exactly where the
// argument is 0; from the result, saved <= 0: round(dy * input_scale *
// (saved + alpha * scale)), exact (EncodeFp8ProductSum); otherwise
// round(dy * scale). A NaN dy gives its own byte.
inline constexpr size_t kPairTableSize = 256 * 256;
void BuildEluBackwardTable(const leaky_q8_params& q, const RealFunction& f, bool saved_is_result,
                           uint8_t table[kPairTableSize]);

}  // namespace leaky::eight_bit

#endif  // LEAKY_EIGHT_BIT_TABLES_H_

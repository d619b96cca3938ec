// Golden data on one-byte elements (leaky/eight_bit.h): the inputs (every
// byte value, shuffled), the golden, which the library's own 8-bit path
// computes, as the float golden comes from its scalar reference, and the
// bytes' real values.
#ifndef LEAKY_TOOLKIT_EIGHT_BIT_DATA_H_
#define LEAKY_TOOLKIT_EIGHT_BIT_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "eight_bit_format.h"
#include "golden_io.h"
#include "leaky/eight_bit.h"

namespace leaky::toolkit {

// The default parameters of `leaky golden --dtype TYPE` (docs/toolkit.md
// says why: exact ties on the positive side, and input and output zero
// points that differ, so the common requantization mistakes show).
leaky_q8_params DefaultQ8Params(leaky_type8 type);

// The real value a byte stands for: scale * (q - zero_point) of the input's
// or the output's quantization, or the decoded fp8 value (NaN, +-inf).
double Q8Real(const leaky_q8_params& q, bool output, uint8_t byte);
// `elements` bytes as an Array: bits the bytes, values the real values of
// the input's or the output's encoding (Q8Real). A size mismatch throws.
Array DecodeBytes(const std::string& what, const std::vector<uint8_t>& bytes,
                  const leaky_q8_params& q, bool output, uint64_t elements);

// n inputs: each run of 256 holds every byte value once, in an order drawn
// from `seed`, so one file covers every input (n >= 256).
std::vector<uint8_t> AllBytesShuffled(uint64_t n, uint64_t seed);

// The library's result: y = LeakyReLU(x) forward, dx from (dy, saved x)
// backward (fp8 only). Throws GoldenError if the library refuses.
std::vector<uint8_t> Q8Reference(const leaky_q8_params& q, bool backward,
                                 const std::vector<uint8_t>& x, const std::vector<uint8_t>& dy,
                                 double slope);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_EIGHT_BIT_DATA_H_

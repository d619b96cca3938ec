// Golden data on one-byte elements (leaky/eight_bit.h's qu8, qs8 and the two
// fp8 formats): the types' names, the checks of their parameters (the
// CLI, golden.json and the Python harness all refuse through these), the
// inputs (every byte value, shuffled) and the golden, which the library's
// own 8-bit path computes, as the float golden comes from its scalar
// reference.
#ifndef LEAKY_TOOLS_EIGHT_BIT_DATA_H_
#define LEAKY_TOOLS_EIGHT_BIT_DATA_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "golden_io.h"
#include "leaky/eight_bit.h"

namespace leaky::tools {

// "qu8", "qs8", "fp8_e4m3", "fp8_e5m2".
const char* Type8Name(leaky_type8 type);
std::optional<leaky_type8> ParseType8(const std::string& name);
bool IsQuantized(leaky_type8 type);
int32_t Type8Min(leaky_type8 type);  // qu8: 0, qs8: -128
int32_t Type8Max(leaky_type8 type);  // qu8: 255, qs8: 127

// The default parameters of `leaky golden --dtype TYPE` (docs/toolkit.md
// says why: exact ties on the positive side, and input and output zero
// points that differ, so the common requantization mistakes show).
leaky_q8_params DefaultQ8Params(leaky_type8 type);

// Throws GoldenError, one line naming the option as `spelling` spells it,
// unless `q` is a call the library accepts: scales finite and > 0, zero
// points and the clamp inside the type's range, output_min <= output_max.
enum class Q8Spelling {
  kWords,     // "input scale" (golden.json)
  kFlags,     // "--input-scale" (the CLI)
  kKeywords,  // "input_scale" (leaky.testing)
};
void CheckQ8Params(const leaky_q8_params& q, Q8Spelling spelling = Q8Spelling::kWords);

// golden.json's "quantization" object (qu8/qs8) or "saturate" (fp8), and
// back; the reader checks what it reads (CheckQ8Params).
void Q8ToJson(const leaky_q8_params& q, nlohmann::json* j);
leaky_q8_params Q8FromJson(leaky_type8 type, const nlohmann::json& j);  // throws GoldenError

// The real value a byte stands for: scale * (q - zero_point) of the input's
// or the output's quantization, or the decoded fp8 value (NaN, +-inf).
double Q8Real(const leaky_q8_params& q, bool output, uint8_t byte);
// The byte as the type's integer: qs8 -128..127, else 0..255.
int32_t Q8Integer(leaky_type8 type, uint8_t byte);

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

}  // namespace leaky::tools

#endif  // LEAKY_TOOLS_EIGHT_BIT_DATA_H_

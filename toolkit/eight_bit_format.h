// The 8-bit types as the toolkit spells and stores them (leaky/eight_bit.h's
// qu8, qs8 and the two fp8 formats): their names and ranges, the checks of
// their parameters (the CLI, golden.json and the Python harness all refuse
// through these) and golden.json's 8-bit fields. No library call: the
// golden.json fuzz target builds it alone.
#ifndef LEAKY_TOOLKIT_EIGHT_BIT_FORMAT_H_
#define LEAKY_TOOLKIT_EIGHT_BIT_FORMAT_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "leaky/eight_bit.h"

namespace leaky::toolkit {

// "qu8", "qs8", "fp8_e4m3", "fp8_e5m2".
const char* Type8Name(leaky_type8 type);
std::optional<leaky_type8> ParseType8(const std::string& name);
bool IsQuantized(leaky_type8 type);
int32_t Type8Min(leaky_type8 type);  // qu8: 0, qs8: -128
int32_t Type8Max(leaky_type8 type);  // qu8: 255, qs8: 127

// The byte as the type's integer: qs8 -128..127, else 0..255.
int32_t Q8Integer(leaky_type8 type, uint8_t byte);

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

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_EIGHT_BIT_FORMAT_H_

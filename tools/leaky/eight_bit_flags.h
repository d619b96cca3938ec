// `leaky golden`'s flags for 8-bit data (leaky/eight_bit.h): the
// quantization of qu8/qs8 and fp8's saturation, each refused in one line
// where it does not apply to the --dtype given.
#ifndef LEAKY_CLI_EIGHT_BIT_FLAGS_H_
#define LEAKY_CLI_EIGHT_BIT_FLAGS_H_

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "leaky/eight_bit.h"

namespace leaky::cli {

struct EightBitFlags {
  double input_scale = 0, output_scale = 0;
  int64_t input_zero_point = 0, output_zero_point = 0, output_min = 0, output_max = 0;
  int saturate = 1;
  CLI::App* command = nullptr;
};

// Adds --input-scale --input-zero-point --output-scale --output-zero-point
// --output-min --output-max --saturate.
void AddEightBitOptions(CLI::App* command, EightBitFlags& flags);

// The first 8-bit flag given on the command line, or nullptr: an op that
// takes no 8-bit data refuses it by name.
const char* GivenEightBitFlag(const EightBitFlags& flags);

// The parameters for `dtype` (nullopt for a float dtype), the defaults
// (DefaultQ8Params) overridden by the flags given. Throws UsageError or
// GoldenError in one line: a flag of another type's, a bad value, or
// --op backward / --dist on data that has none.
std::optional<leaky_q8_params> EightBitParams(const std::string& dtype, const EightBitFlags& flags,
                                              const std::string& op, bool dist_given);

}  // namespace leaky::cli

#endif  // LEAKY_CLI_EIGHT_BIT_FLAGS_H_

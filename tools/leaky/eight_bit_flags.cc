#include "eight_bit_flags.h"

#include "cli_checks.h"
#include "eight_bit_data.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of

namespace {

constexpr const char* kQuantizedFlags[] = {"--input-scale",  "--input-zero-point",
                                           "--output-scale", "--output-zero-point",
                                           "--output-min",   "--output-max"};

bool Given(const EightBitFlags& f, const char* flag) { return f.command->count(flag) > 0; }

}  // namespace

void AddEightBitOptions(CLI::App* command, EightBitFlags& f) {
  f.command = command;
  constexpr int64_t kLow = INT32_MIN, kHigh = INT32_MAX;  // the range is the dtype's: checked later
  FiniteNumber(command->add_option("--input-scale", f.input_scale,
                                   "qu8/qs8: real = scale * (q - zero point) of the input "
                                   "(default 0.09375)"));
  WholeNumber(command->add_option("--input-zero-point", f.input_zero_point,
                                  "qu8/qs8: the input's zero point (default 128 qu8, 0 qs8)"),
              kLow, kHigh);
  FiniteNumber(command->add_option("--output-scale", f.output_scale,
                                   "qu8/qs8: the output's scale (default 0.0625: positives "
                                   "requantize to 1.5 (q - zero point), a tie for every odd one)"));
  WholeNumber(command->add_option("--output-zero-point", f.output_zero_point,
                                  "qu8/qs8: the output's zero point (default 40 qu8, -88 qs8)"),
              kLow, kHigh);
  WholeNumber(command->add_option("--output-min", f.output_min,
                                  "qu8/qs8: clamp the output from below (default: the type's "
                                  "minimum, no clamp)"),
              kLow, kHigh);
  WholeNumber(command->add_option("--output-max", f.output_max,
                                  "qu8/qs8: clamp the output from above (default: the type's "
                                  "maximum)"),
              kLow, kHigh);
  WholeNumber(command->add_option("--saturate", f.saturate,
                                  "fp8: 1 (default) overflow gives the largest finite value, 0 "
                                  "OCP's infinity (E5M2) or NaN (E4M3)"),
              0, 1);
}

const char* GivenEightBitFlag(const EightBitFlags& f) {
  for (const char* flag : kQuantizedFlags) {
    if (Given(f, flag)) return flag;
  }
  return Given(f, "--saturate") ? "--saturate" : nullptr;
}

std::optional<leaky_q8_params> EightBitParams(const std::string& dtype, const EightBitFlags& f,
                                              const std::string& op, bool dist_given) {
  const std::optional<leaky_type8> type = ParseType8(dtype);
  if (!type) {
    for (const char* flag : kQuantizedFlags) {
      if (Given(f, flag))
        throw UsageError(std::string(flag) + " applies to qu8/qs8 data, not " + dtype);
    }
    if (Given(f, "--saturate")) throw UsageError("--saturate applies to fp8 data, not " + dtype);
    return std::nullopt;
  }
  if (dist_given) {
    throw UsageError("--dist does not apply to " + dtype +
                     " data: its input is every byte value, shuffled by --seed");
  }
  leaky_q8_params q = DefaultQ8Params(*type);
  if (!IsQuantized(*type)) {
    for (const char* flag : kQuantizedFlags) {
      if (Given(f, flag))
        throw UsageError(std::string(flag) + " applies to qu8/qs8 data, not " + dtype);
    }
    q.saturate = f.saturate;
    return q;
  }
  if (Given(f, "--saturate")) throw UsageError("--saturate applies to fp8 data, not " + dtype);
  if (op == "backward") {
    throw UsageError(dtype +
                     " data has no backward (leaky/eight_bit.h: quantized data is "
                     "inference only); use --op forward");
  }
  auto narrow = [](int64_t v) {  // outside int32 was refused when parsed
    return static_cast<int32_t>(v);
  };
  if (Given(f, "--input-scale")) q.input.scale = f.input_scale;
  if (Given(f, "--input-zero-point")) q.input.zero_point = narrow(f.input_zero_point);
  if (Given(f, "--output-scale")) q.output.scale = f.output_scale;
  if (Given(f, "--output-zero-point")) q.output.zero_point = narrow(f.output_zero_point);
  if (Given(f, "--output-min")) q.output_min = narrow(f.output_min);
  if (Given(f, "--output-max")) q.output_max = narrow(f.output_max);
  try {
    CheckQ8Params(q, Q8Spelling::kFlags);
  } catch (const GoldenError& e) {
    throw UsageError(e.what());
  }
  return q;
}

}  // namespace leaky::cli

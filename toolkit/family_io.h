// A family op's golden on disk (`leaky golden --op prelu ...`): golden.json
// ("format": "leaky-family-golden-1": the op, direction, dtype, the
// [outer, channels, inner] view, the scalars, distribution, seed and the
// recorded plan), each input as <name>.bin and each golden output as
// golden_<name>.bin (raw little-endian; the mask one bit per element).
// Readers validate every field and size and throw GoldenError in one line.
#ifndef LEAKY_TOOLKIT_FAMILY_IO_H_
#define LEAKY_TOOLKIT_FAMILY_IO_H_

#include <nlohmann/json.hpp>
#include <string>

#include "family_golden.h"

namespace leaky::toolkit {

inline constexpr char kFamilyGoldenFormat[] = "leaky-family-golden-1";

// Whether golden.json's text names the family's format (else LeakyReLU's).
bool IsFamilyGolden(const std::string& json_text);
void WriteFamilyGolden(const std::string& dir, const FamilyProblem& p, const FamilyDescription& d,
                       const nlohmann::ordered_json& scalars, const nlohmann::json& plan);
// The problem golden.json describes, its operands read from dir; `plan`
// receives the recorded plan options (null when none).
FamilyProblem ReadFamilyGolden(const std::string& dir, const std::string& json_text,
                               nlohmann::json* plan);
// golden.json's text alone: the problem without its operands (the part of
// ReadFamilyGolden the fuzzer feeds).
FamilyProblem FamilyFromJson(const std::string& json_text, nlohmann::json* plan);
// A kernel's output file as an operand like `like` (its dtype, or the
// mask's bytes); any whole number of elements up to `max_elements`.
Operand ReadFamilyOutput(const std::string& path, const Operand& like, uint64_t max_elements);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FAMILY_IO_H_

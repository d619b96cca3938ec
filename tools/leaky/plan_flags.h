// The CLI's flags for a plan (PlanOptions, toolkit/plan_options.h), shared
// by `leaky plan`, `leaky golden`, `leaky check` and `leaky device`.
#ifndef LEAKY_CLI_PLAN_FLAGS_H_
#define LEAKY_CLI_PLAN_FLAGS_H_

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan_options.h"

namespace leaky::cli {

// Adds --preset --cores --buffer-bytes --align --buffers --split
// --tile-elems --address-offset (and --op, where the command has none of its
// own) to `command`.
void AddPlanOptions(CLI::App* command, toolkit::PlanOptions& options, bool with_op = true);
// Whether any of those was given on the command line, and which.
bool PlanOptionsGiven(CLI::App* command);
std::vector<std::string> GivenPlanOptions(CLI::App* command);
// The plan golden.json recorded (`leaky golden --plan`), none when null;
// a malformed one is a GoldenError naming golden.json.
std::optional<toolkit::PlanOptions> RecordedPlan(const nlohmann::json& recorded);

}  // namespace leaky::cli

#endif  // LEAKY_CLI_PLAN_FLAGS_H_

// The target description shared by `leaky plan` and `leaky check --plan`:
// a preset (this CPU, or an accelerator-style example) plus overrides.
#ifndef LEAKY_TOOLS_PLAN_OPTIONS_H_
#define LEAKY_TOOLS_PLAN_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "leaky/tiling.h"

namespace leaky::tools {

struct PlanOptions {
  std::string preset = "cpu";  // cpu | npu
  uint32_t cores = 0;          // 0 = the preset's
  uint64_t buffer_bytes = 0;
  uint32_t align_bytes = 0;
  uint32_t buffers = 0;
  std::string op = "forward";  // forward (2 streams) | backward (3 streams)
  std::string split = "granule";  // granule | even | balanced (layout.h)
  uint64_t tile_elems = 0;     // fixed tile (BLOCK_ELEMS); 0 = sized from the buffer
  uint32_t address_offset = 0; // output address modulo --align, bytes

  nlohmann::json ToJson() const;
  static PlanOptions FromJson(const nlohmann::json& j);  // throws std::invalid_argument
};

// Adds --preset --cores --buffer-bytes --align --buffers --split
// --tile-elems --address-offset (and --op, where the command has none of its
// own) to `command`.
void AddPlanOptions(CLI::App* command, PlanOptions& options, bool with_op = true);
// Whether any of those was given on the command line, and which.
bool PlanOptionsGiven(CLI::App* command);
std::vector<std::string> GivenPlanOptions(CLI::App* command);
// The value of plan option `flag` (e.g. "--cores") as the command line spells it.
std::string PlanOptionValue(const PlanOptions& options, const std::string& flag);

// The planner request for n elements of `dtype` on the chosen target.
// Throws std::invalid_argument on a bad preset.
leaky_plan_request MakePlanRequest(const PlanOptions& options, leaky_dtype dtype, uint64_t n);

}  // namespace leaky::tools

#endif  // LEAKY_TOOLS_PLAN_OPTIONS_H_

// The target description shared by `leaky plan` and `leaky check --plan`:
// a preset (this CPU, or an accelerator-style example) plus overrides.
#ifndef LEAKY_TOOLS_PLAN_OPTIONS_H_
#define LEAKY_TOOLS_PLAN_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "leaky/tiling.h"

namespace leaky::tools {

struct PlanOptions {
  std::string preset = "cpu";  // cpu | npu
  uint32_t cores = 0;          // 0 = the preset's
  uint64_t buffer_bytes = 0;
  uint32_t align_bytes = 0;
  uint32_t buffers = 0;
  std::string op = "forward";  // forward (2 streams) | backward (3 streams)
};

// Adds --preset --cores --buffer-bytes --align --buffers --op to `command`.
void AddPlanOptions(CLI::App* command, PlanOptions& options);

// The planner request for n elements of `dtype` on the chosen target.
// Throws std::invalid_argument on a bad preset.
leaky_plan_request MakePlanRequest(const PlanOptions& options, leaky_dtype dtype, uint64_t n);

// Where element `index` falls: core, tile within the core, and whether that
// tile is the core's tail tile / the core is the last one.
struct PlanLocation {
  uint32_t core = 0;
  uint64_t tile = 0;
  uint64_t tiles_in_core = 0;
  uint64_t core_start = 0;
  uint64_t tile_start = 0;
};
PlanLocation Locate(const leaky_tiling& tiling, uint64_t index);

}  // namespace leaky::tools

#endif  // LEAKY_TOOLS_PLAN_OPTIONS_H_

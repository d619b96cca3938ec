// The target description shared by `leaky plan`, `leaky check --plan`,
// `leaky device` and leaky.testing: a preset (this CPU, or an
// accelerator-style example) plus overrides. The CLI's flags for it are in
// tools/leaky/plan_flags.h.
#ifndef LEAKY_TOOLKIT_PLAN_OPTIONS_H_
#define LEAKY_TOOLKIT_PLAN_OPTIONS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "leaky/tiling.h"

namespace leaky::toolkit {

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

// The value of plan option `flag` (e.g. "--cores") as the command line spells it.
std::string PlanOptionValue(const PlanOptions& options, const std::string& flag);

// The planner request for n elements of `dtype` on the chosen target.
// Throws std::invalid_argument on a bad preset or split.
leaky_plan_request MakePlanRequest(const PlanOptions& options, leaky_dtype dtype, uint64_t n);
// The same for n one-byte elements (leaky/eight_bit.h's types): the
// request the library's 8-bit ops plan with.
leaky_plan_request MakeBytePlanRequest(const PlanOptions& options, uint64_t n);
// The options' overrides (cores, buffer bytes, alignment, buffers, split,
// tile, address offset; 0 keeps the request's) applied to another target's
// request, e.g. an OpenCL device's (leaky_cl_plan_request).
void ApplyPlanOverrides(const PlanOptions& options, leaky_plan_request* request);

// A split's LEAKY_SPLIT_* code from its name (granule, even, balanced;
// throws std::invalid_argument for another), and back.
uint32_t SplitCode(const std::string& name);
const char* SplitName(uint32_t split);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_PLAN_OPTIONS_H_

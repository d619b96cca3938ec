#include "plan_options.h"

#include <stdexcept>

#include "golden_io.h"

namespace leaky::tools {

void AddPlanOptions(CLI::App* command, PlanOptions& options) {
  command->add_option("--preset", options.preset,
                      "cpu: this machine as the library plans it; npu: an accelerator-style "
                      "example (48 vector cores, 192 KiB buffer each, 32-byte alignment, "
                      "double buffering - example values, not a product's)")
      ->check(CLI::IsMember({"cpu", "npu"}))
      ->capture_default_str();
  command->add_option("--cores", options.cores, "Cores (threads) available")
      ->check(CLI::Range(1u, 65536u));
  command->add_option("--buffer-bytes", options.buffer_bytes, "On-chip buffer per core (bytes)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  command->add_option("--align", options.align_bytes, "Alignment granule (bytes, power of two)")
      ->check(CLI::Range(1u, 65536u));
  command->add_option("--buffers", options.buffers, "1 = single, 2 = double buffering")
      ->check(CLI::Range(1u, 8u));
  command->add_option("--op", options.op, "forward (2 streams) or backward (3 streams)")
      ->check(CLI::IsMember({"forward", "backward"}))
      ->capture_default_str();
}

leaky_plan_request MakePlanRequest(const PlanOptions& options, leaky_dtype dtype, uint64_t n) {
  const uint32_t streams = options.op == "backward" ? 3 : 2;
  leaky_plan_request request{};
  if (options.preset == "cpu") {
    if (leaky_cpu_plan_request(dtype, n, streams, nullptr, &request) != LEAKY_OK) {
      throw std::invalid_argument(leaky_last_error());
    }
  } else if (options.preset == "npu") {
    request.total_length = n;
    request.element_bytes = static_cast<uint32_t>(DtypeBytes(dtype));
    request.streams = streams;
    request.max_cores = 48;
    request.align_bytes = 32;
    request.buffer_bytes = 192 << 10;
    request.buffer_count = 2;
    request.min_bytes_per_core = 0;  // a kernel launch wakes every core anyway
    request.stream_threshold_bytes = UINT64_MAX;
    request.stream_stores = 0;
  } else {
    throw std::invalid_argument("unknown preset '" + options.preset + "'");
  }
  if (options.cores != 0) request.max_cores = options.cores;
  if (options.buffer_bytes != 0) request.buffer_bytes = options.buffer_bytes;
  if (options.align_bytes != 0) request.align_bytes = options.align_bytes;
  if (options.buffers != 0) request.buffer_count = options.buffers;
  return request;
}

PlanLocation Locate(const leaky_tiling& tiling, uint64_t index) {
  PlanLocation location;
  for (uint32_t core = 0; core < tiling.cores_used; ++core) {
    uint64_t start, length;
    leaky_tiling_core_range(&tiling, core, &start, &length);
    if (index >= start && index < start + length) {
      location.core = core;
      location.core_start = start;
      location.tiles_in_core = leaky_tiling_tile_count(&tiling, core);
      uint64_t first, count, tile_length;
      leaky_tiling_core_granules(&tiling, core, &first, &count);
      const uint64_t granule = (index + tiling.lead_length) / tiling.granule_length;
      location.tile = (granule - first) / leaky_tiling_tile_granules(&tiling);
      leaky_tiling_tile_range(&tiling, core, location.tile, &location.tile_start, &tile_length);
      return location;
    }
  }
  location.core = tiling.cores_used;  // past the end
  return location;
}

}  // namespace leaky::tools

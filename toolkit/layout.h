// How a device kernel splits n elements over cores and tiles, as the
// operator developer's own kernel does it: the library's granule split
// (leaky_plan_tiling), the article's even split (step = n / cores, the last
// core also takes n % cores), or a balanced one (the remainder one element
// each to the first cores); tiles of a fixed length (BLOCK_ELEMS) or sized
// from the per-core buffer. Pure geometry, shared by `leaky plan`,
// `leaky check --plan` and the diagnosis.
#ifndef LEAKY_TOOLS_LAYOUT_H_
#define LEAKY_TOOLS_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "leaky/tiling.h"
#include "plan_options.h"

namespace leaky::tools {

struct Layout {
  std::string split = "granule";  // granule | even | balanced
  uint64_t total = 0;
  uint32_t element_bytes = 0, streams = 0, buffers = 0;
  uint32_t align_bytes = 0, address_offset = 0;
  uint32_t cores_available = 0;
  uint64_t buffer_bytes = 0;
  uint64_t tile_length = 0;  // elements per full tile
  std::vector<uint64_t> core_start, core_length;
  // The planner's own tiles (granule split without --tile-elems): tiles
  // follow its alignment grid, so core 0's first tile may be short.
  std::optional<leaky_tiling> planner;

  uint32_t cores() const { return static_cast<uint32_t>(core_start.size()); }
  uint64_t TileCount(uint32_t core) const;
  void TileRange(uint32_t core, uint64_t tile, uint64_t* start, uint64_t* length) const;

  struct Location {
    bool inside = false;
    uint32_t core = 0;
    uint64_t tile = 0, tiles_in_core = 0;
    uint64_t core_start = 0, core_length = 0, tile_start = 0, tile_length = 0;
  };
  Location Locate(uint64_t index) const;
};

// The layout for n elements of `dtype` under the plan options. Throws
// std::invalid_argument with a one-line message for an impossible request
// (no elements' worth of buffer, sizes that overflow).
Layout MakeLayout(const PlanOptions& options, leaky_dtype dtype, uint64_t n);

// The plan checks every split gets.
struct LayoutChecks {
  bool covered_exactly_once = false;
  uint64_t copies = 0, unaligned_copies = 0;  // tile copies, and those off the --align grid
  std::vector<std::pair<uint32_t, uint64_t>> first_unaligned;  // (core, tile), a few
  double load_ratio = 0;                       // largest / smallest non-empty core
  uint64_t buffer_bytes_needed = 0;
  bool fits_buffer = false;
  uint32_t idle_cores = 0;                     // cores with nothing to do
  uint32_t cores_with_fewer_tiles_than_buffers = 0;
};
LayoutChecks CheckLayout(const Layout& layout);

}  // namespace leaky::tools

#endif  // LEAKY_TOOLS_LAYOUT_H_

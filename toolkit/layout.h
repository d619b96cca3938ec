// A view of the planner's tiling (leaky_plan_tiling, include/leaky/tiling.h)
// for the tools: per-core ranges, tiles and the lookup from an element to
// its core and tile, for whichever split the kernel uses (the library's
// granule split, the article's even split, balanced) and a fixed tile
// (BLOCK_ELEMS) or one sized from the per-core buffer. Nothing here splits
// on its own: every range is the planner's. Shared by `leaky plan`,
// `leaky check --plan`, `leaky device` and the diagnosis.
#ifndef LEAKY_TOOLKIT_LAYOUT_H_
#define LEAKY_TOOLKIT_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "leaky/tiling.h"
#include "plan_options.h"

namespace leaky::toolkit {

struct Layout {
  std::string split = "granule";  // granule | even | balanced
  leaky_tiling tiling{};          // the plan; the fields below are read from it
  // The request's target facts, which the plan does not carry.
  uint32_t align_bytes = 0, address_offset = 0;
  uint32_t cores_available = 0;
  uint64_t buffer_bytes = 0;
  // The plan's, under the names the tools use.
  uint64_t total = 0;
  uint32_t element_bytes = 0, streams = 0, buffers = 0;
  uint64_t tile_length = 0;  // elements per full tile
  std::vector<uint64_t> core_start, core_length;  // leaky_tiling_core_range of each core

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

// The planner's layout for n elements of `dtype` under the plan options.
// Throws std::invalid_argument with a one-line message for an impossible
// request (an unknown split, sizes that overflow, what the planner refuses).
Layout MakeLayout(const PlanOptions& options, leaky_dtype dtype, uint64_t n);
// The same for n one-byte elements (8-bit data).
Layout MakeByteLayout(const PlanOptions& options, uint64_t n);
// The layout of any request (e.g. an OpenCL device's, leaky_cl_plan_request).
Layout LayoutOf(const leaky_plan_request& request);

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

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_LAYOUT_H_

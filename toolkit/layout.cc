#include "layout.h"

#include <algorithm>
#include <stdexcept>

#include "golden_io.h"

namespace leaky::tools {

uint64_t Layout::TileCount(uint32_t core) const {
  if (planner) return leaky_tiling_tile_count(&*planner, core);
  return (core_length[core] + tile_length - 1) / tile_length;
}

void Layout::TileRange(uint32_t core, uint64_t tile, uint64_t* start, uint64_t* length) const {
  if (planner) return leaky_tiling_tile_range(&*planner, core, tile, start, length);
  *start = core_start[core] + tile * tile_length;
  *length = std::min(tile_length, core_start[core] + core_length[core] - *start);
}

Layout::Location Layout::Locate(uint64_t index) const {
  Location at;
  // Core ranges are contiguous and ascending; empty cores are skipped.
  const auto after = std::upper_bound(core_start.begin(), core_start.end(), index);
  for (auto it = after; it != core_start.begin();) {
    --it;
    const uint32_t core = static_cast<uint32_t>(it - core_start.begin());
    if (core_length[core] == 0) continue;
    if (index >= core_start[core] + core_length[core]) break;
    at.inside = true;
    at.core = core;
    at.core_start = core_start[core];
    at.core_length = core_length[core];
    at.tiles_in_core = TileCount(core);
    if (planner) {
      uint64_t first, count;
      leaky_tiling_core_granules(&*planner, core, &first, &count);
      const uint64_t granule = (index + planner->lead_length) / planner->granule_length;
      at.tile = (granule - first) / leaky_tiling_tile_granules(&*planner);
    } else {
      at.tile = (index - core_start[core]) / tile_length;
    }
    TileRange(core, at.tile, &at.tile_start, &at.tile_length);
    return at;
  }
  return at;
}

namespace {

uint64_t Multiply(uint64_t a, uint64_t b, const char* what) {
  uint64_t product;
  if (__builtin_mul_overflow(a, b, &product)) {
    throw std::invalid_argument(std::string(what) + " overflows 64 bits");
  }
  return product;
}

}  // namespace

Layout MakeLayout(const PlanOptions& options, leaky_dtype dtype, uint64_t n) {
  const leaky_plan_request request = MakePlanRequest(options, dtype, n);
  Layout l;
  l.split = options.split;
  l.total = n;
  l.element_bytes = request.element_bytes;
  l.streams = request.streams;
  l.buffers = request.buffer_count;
  l.align_bytes = request.align_bytes;
  l.address_offset = options.address_offset;
  l.cores_available = request.max_cores;
  l.buffer_bytes = request.buffer_bytes;
  Multiply(n, l.element_bytes, "--elems x the element size");
  if (l.split == "granule") {
    leaky_plan_request granule_request = request;
    granule_request.address_offset = options.address_offset;
    leaky_tiling tiling;
    if (leaky_plan_tiling(&granule_request, &tiling) != LEAKY_OK) {
      throw std::invalid_argument(leaky_last_error());
    }
    for (uint32_t core = 0; core < tiling.cores_used; ++core) {
      uint64_t start, length;
      leaky_tiling_core_range(&tiling, core, &start, &length);
      l.core_start.push_back(start);
      l.core_length.push_back(length);
    }
    if (options.tile_elems == 0) {
      l.planner = tiling;
      l.tile_length = tiling.tile_length;
    }
  } else if (l.split == "even" || l.split == "balanced") {
    const uint32_t cores = request.max_cores;
    const uint64_t step = n / cores, remainder = n % cores;
    uint64_t start = 0;
    for (uint32_t core = 0; core < cores; ++core) {
      uint64_t length = step;
      if (l.split == "even" && core + 1 == cores) length += remainder;
      if (l.split == "balanced" && core < remainder) length += 1;
      l.core_start.push_back(start);
      l.core_length.push_back(length);
      start += length;
    }
  } else {
    throw std::invalid_argument("unknown split '" + l.split + "' (granule, even or balanced)");
  }
  if (!l.planner) {
    if (options.tile_elems != 0) {
      l.tile_length = options.tile_elems;
    } else {
      // As many elements as B buffers of every stream fit, whole granules.
      const uint64_t per_element =
          Multiply(Multiply(l.buffers, l.streams, "buffers x streams"), l.element_bytes,
                   "buffers x streams x element size");
      const uint64_t granule = std::max<uint64_t>(1, l.align_bytes / l.element_bytes);
      l.tile_length = l.buffer_bytes / per_element / granule * granule;
      if (l.tile_length == 0) {
        throw std::invalid_argument("the " + std::to_string(l.buffer_bytes) +
                                    "-byte buffer holds no granule of " + std::to_string(l.buffers) +
                                    " buffers x " + std::to_string(l.streams) + " streams");
      }
    }
  }
  Multiply(Multiply(l.tile_length, l.element_bytes, "--tile-elems x the element size"),
           uint64_t{l.buffers} * l.streams, "the tile buffers");
  return l;
}

LayoutChecks CheckLayout(const Layout& l) {
  LayoutChecks c;
  uint64_t expected = 0, covered = 0, smallest = UINT64_MAX, largest = 0;
  bool contiguous = true;
  for (uint32_t core = 0; core < l.cores(); ++core) {
    contiguous = contiguous && l.core_start[core] == expected;
    expected = l.core_start[core] + l.core_length[core];
    covered += l.core_length[core];
    if (l.core_length[core] == 0) {
      ++c.idle_cores;
      continue;
    }
    smallest = std::min(smallest, l.core_length[core]);
    largest = std::max(largest, l.core_length[core]);
    const uint64_t tiles = l.TileCount(core);
    if (tiles < l.buffers) ++c.cores_with_fewer_tiles_than_buffers;
    for (uint64_t tile = 0; tile < tiles; ++tile) {
      uint64_t start, length;
      l.TileRange(core, tile, &start, &length);
      ++c.copies;
      // A copy is aligned when its first byte sits on the --align grid of
      // the output's address; the array's own first element is where it is.
      if (start != 0 && (l.address_offset + start * l.element_bytes) % l.align_bytes != 0) {
        ++c.unaligned_copies;
        if (c.first_unaligned.size() < 4) c.first_unaligned.emplace_back(core, tile);
      }
    }
  }
  c.idle_cores += l.cores_available - l.cores();
  c.covered_exactly_once = contiguous && covered == l.total && expected == l.total;
  c.load_ratio = largest == 0 ? 0 : static_cast<double>(largest) / static_cast<double>(smallest);
  c.buffer_bytes_needed = uint64_t{l.buffers} * l.tile_length * l.element_bytes * l.streams;
  c.fits_buffer = c.buffer_bytes_needed <= l.buffer_bytes;
  return c;
}

}  // namespace leaky::tools

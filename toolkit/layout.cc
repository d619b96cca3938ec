#include "layout.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "golden_io.h"
#include "user_message.h"

namespace leaky::toolkit {

uint64_t Layout::TileCount(uint32_t core) const { return leaky_tiling_tile_count(&tiling, core); }

void Layout::TileRange(uint32_t core, uint64_t tile, uint64_t* start, uint64_t* length) const {
  leaky_tiling_tile_range(&tiling, core, tile, start, length);
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
    // Tiles run from the core's first grid point (leaky_tiling_tile_range).
    uint64_t first, count;
    leaky_tiling_core_granules(&tiling, core, &first, &count);
    at.tile = (index + tiling.lead_length - first * tiling.granule_length) / tiling.tile_length;
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
  return LayoutOf(MakePlanRequest(options, dtype, n));
}

Layout MakeByteLayout(const PlanOptions& options, uint64_t n) {
  return LayoutOf(MakeBytePlanRequest(options, n));
}

Layout LayoutOf(const leaky_plan_request& request) {
  const uint64_t n = request.total_length;
  Multiply(n, request.element_bytes, "--elems x the element size");
  Multiply(Multiply(request.tile_length, request.element_bytes, "--tile-elems x the element size"),
           uint64_t{request.buffer_count} * request.streams, "the tile buffers");
  Layout l;
  if (leaky_plan_tiling(&request, &l.tiling) != LEAKY_OK) {
    throw std::invalid_argument(LastErrorForUser());
  }
  const leaky_tiling& t = l.tiling;
  l.split = SplitName(t.split);
  l.align_bytes = request.align_bytes;
  l.address_offset = request.address_offset;
  l.cores_available = request.max_cores;
  l.buffer_bytes = request.buffer_bytes;
  l.total = t.total_length;
  l.element_bytes = t.element_bytes;
  l.streams = t.streams;
  l.buffers = t.buffer_count;
  l.tile_length = t.tile_length;
  for (uint32_t core = 0; core < t.cores_used; ++core) {
    uint64_t start, length;
    leaky_tiling_core_range(&t, core, &start, &length);
    l.core_start.push_back(start);
    l.core_length.push_back(length);
  }
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
    // A copy is aligned when its first byte sits on the --align grid of
    // the output's address; the array's own first element is where it is.
    const auto unaligned = [&](uint64_t tile) {
      uint64_t start, length;
      l.TileRange(core, tile, &start, &length);
      return start != 0 && (l.address_offset + start * l.element_bytes) % l.align_bytes != 0;
    };
    // Tiles 1 .. tiles-2 start a whole tile apart, so their addresses modulo
    // the grid repeat every `period` tiles: count one period and repeat it
    // (a plan of 1e14 one-element tiles is checked as fast as one of ten).
    const uint64_t step = l.tile_length * l.element_bytes % l.align_bytes;
    const uint64_t period = step == 0 ? 1 : l.align_bytes / std::gcd(step, uint64_t{l.align_bytes});
    const uint64_t middle = tiles > 2 ? tiles - 2 : 0;
    auto count = [&](uint64_t tile, uint64_t times) {
      if (times > 0 && unaligned(tile)) c.unaligned_copies += times;
    };
    c.copies += tiles;
    if (tiles > 0) count(0, 1);
    for (uint64_t k = 0; k < std::min(middle, period); ++k) {
      count(1 + k, middle / period + (k < middle % period ? 1 : 0));
    }
    if (tiles > 1) count(tiles - 1, 1);
    // The first few unaligned tiles, in order: within the first 4 periods
    // (past them the middle tiles only repeat), then the last tile.
    const uint64_t looked = std::min(tiles, 4 * period + 1);
    for (uint64_t t = 0; t < looked && c.first_unaligned.size() < 4; ++t) {
      if (unaligned(t)) c.first_unaligned.emplace_back(core, t);
    }
    if (looked < tiles && c.first_unaligned.size() < 4 && unaligned(tiles - 1)) {
      c.first_unaligned.emplace_back(core, tiles - 1);
    }
  }
  c.idle_cores += l.cores_available - l.cores();
  c.covered_exactly_once = contiguous && covered == l.total && expected == l.total;
  c.load_ratio = largest == 0 ? 0 : static_cast<double>(largest) / static_cast<double>(smallest);
  c.buffer_bytes_needed = uint64_t{l.buffers} * l.tile_length * l.element_bytes * l.streams;
  c.fits_buffer = c.buffer_bytes_needed <= l.buffer_bytes;
  return c;
}

}  // namespace leaky::toolkit

// The host-side planner: a pure function from a problem and a target to the
// tiling data that the per-core loop reads (include/leaky/tiling.h).
#include <cmath>
#include <cstdint>

#include "leaky/tiling.h"
#include "runtime/error.h"

namespace {

bool IsPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

uint64_t DivideRoundingUp(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

extern "C" leaky_status leaky_plan_tiling(const leaky_plan_request* request,
                                          leaky_tiling* tiling) {
  using leaky::internal::Fail;
  if (request == nullptr || tiling == nullptr) {
    return Fail(LEAKY_ERROR_NULL_POINTER, "leaky_plan_tiling: request and tiling must not be null");
  }
  const leaky_plan_request& r = *request;
  if (!IsPowerOfTwo(r.element_bytes) || r.element_bytes > 64) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_plan_tiling: element_bytes %u is not a power of two in [1, 64]",
                r.element_bytes);
  }
  if (r.streams == 0 || r.streams > 16) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS, "leaky_plan_tiling: streams %u is not in [1, 16]",
                r.streams);
  }
  if (r.max_cores == 0 || r.max_cores > LEAKY_MAX_THREADS) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS, "leaky_plan_tiling: max_cores %u is not in [1, %d]",
                r.max_cores, LEAKY_MAX_THREADS);
  }
  if (!IsPowerOfTwo(r.align_bytes) || r.align_bytes < r.element_bytes || r.align_bytes > 65536) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_plan_tiling: align_bytes %u must be a power of two in [element_bytes=%u, "
                "65536]",
                r.align_bytes, r.element_bytes);
  }
  if (r.buffer_count == 0 || r.buffer_count > 8) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_plan_tiling: buffer_count %u is not in [1, 8]", r.buffer_count);
  }
  if (r.address_offset >= r.align_bytes) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_plan_tiling: address_offset %u must be below align_bytes %u",
                r.address_offset, r.align_bytes);
  }
  if (r.stream_stores < -1 || r.stream_stores > 1) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_plan_tiling: stream_stores %d is not -1, 0 or 1", r.stream_stores);
  }
  if (r.split > LEAKY_SPLIT_BALANCED) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_plan_tiling: split %u is not granule (0), even (1) or balanced (2)", r.split);
  }
  if (r.tile_length > UINT64_MAX / 64 / r.element_bytes / r.streams / r.buffer_count) {
    return Fail(LEAKY_ERROR_SIZE, "leaky_plan_tiling: a tile of %llu elements overflows a 64-bit "
                "byte count", static_cast<unsigned long long>(r.tile_length));
  }
  // Byte counts below must not wrap: n * element_bytes * streams < 2^64.
  if (r.total_length > UINT64_MAX / 64 / r.element_bytes / r.streams) {
    return Fail(LEAKY_ERROR_SIZE, "leaky_plan_tiling: %llu elements overflow a 64-bit byte count",
                static_cast<unsigned long long>(r.total_length));
  }

  leaky_tiling t{};
  t.total_length = r.total_length;
  t.element_bytes = r.element_bytes;
  t.streams = r.streams;
  t.buffer_count = r.buffer_count;
  t.split = r.split;
  const uint64_t traffic = r.total_length * r.element_bytes * r.streams;
  uint64_t cores = r.max_cores;
  if (r.split == LEAKY_SPLIT_GRANULE) {
    t.granule_length = r.align_bytes / r.element_bytes;
    // Anchor the granule grid to the output's address: if it sits `offset`
    // bytes past an aligned boundary, pretend the array starts `offset /
    // element` elements earlier, so every grid point is an aligned address.
    // A misaligned element (odd byte offset) can never be aligned: use the
    // plain index grid.
    t.lead_length =
        r.address_offset % r.element_bytes == 0 ? r.address_offset / r.element_bytes : 0;
    t.granule_count = r.total_length == 0
                          ? 0
                          : DivideRoundingUp(r.total_length + t.lead_length, t.granule_length);
    // Wake a further core only for a full `min_bytes_per_core` of traffic:
    // below that, its wake-up costs more than its share of the streaming saves.
    const uint64_t justified =
        r.min_bytes_per_core == 0 ? UINT64_MAX : traffic / r.min_bytes_per_core;
    if (justified < cores) cores = justified;
    if (t.granule_count < cores) cores = t.granule_count;
    if (cores == 0) cores = 1;
  } else {
    // The article's splits: single elements over every core asked for,
    // however few elements there are (a kernel launch wakes them all).
    t.granule_length = 1;
    t.lead_length = 0;
    t.granule_count = r.total_length;
  }
  t.cores_used = static_cast<uint32_t>(cores);
  t.granules_per_core = t.granule_count / cores;
  t.granules_remainder = t.granule_count % cores;

  if (r.tile_length != 0) {
    t.tile_length = r.tile_length;
  } else {
    // As many whole alignment granules as `buffer_count` buffers of every
    // stream hold.
    const uint64_t tile_granules =
        r.buffer_bytes / (static_cast<uint64_t>(r.buffer_count) * r.streams * r.align_bytes);
    if (tile_granules == 0) {
      return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                  "leaky_plan_tiling: the %llu-byte buffer holds no %u-byte granule of %u "
                  "buffer(s) x %u streams",
                  static_cast<unsigned long long>(r.buffer_bytes), r.align_bytes, r.buffer_count,
                  r.streams);
    }
    t.tile_length = tile_granules * (r.align_bytes / r.element_bytes);
  }

  if (r.stream_stores >= 0) {
    t.stream_stores = r.stream_stores;
  } else {
    t.stream_stores = traffic >= r.stream_threshold_bytes ? 1 : 0;
  }
  *tiling = t;
  return LEAKY_OK;
}

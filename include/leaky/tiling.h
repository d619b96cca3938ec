/* leaky tiling: the contract between the host-side planner and the kernels.
 *
 * As in CANN ops-nn's TilingData, this one struct is written by the planner
 * (leaky_plan_tiling) and read by the per-core loop that feeds the kernels;
 * neither keeps its own copy of the layout. Tools (`leaky plan`) print it.
 *
 * Shape of a plan: the n elements are cut into alignment granules (one cache
 * line / DMA burst each) on a grid anchored to the output's address, so every
 * core range except possibly the first starts on an aligned boundary. Cores
 * receive whole granules, the remainder spread one each over the first cores
 * (never dumped on the last one). Within a core, elements stream tile by tile;
 * a tile is sized so `buffer_count * tile bytes * streams` fits the per-core
 * buffer budget.
 *
 * The plan is purely geometric: an op's scalars (the slope, ELU's alpha, ...)
 * travel in the op's own kernel parameters, never here, so one plan serves
 * every slope. ABI: both structs are public and passed by pointer; version
 * 0.2 removed their negative_slope field (LEAKY_VERSION_* in leaky.h).
 */
#ifndef LEAKY_TILING_H_
#define LEAKY_TILING_H_

#include <stdint.h>

#include "leaky/leaky.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct leaky_plan_request {
  uint64_t total_length;      /* elements */
  uint32_t element_bytes;     /* bytes per stored element (2, 4 or 8) */
  uint32_t streams;           /* arrays touched per element: 2 forward, 3 backward */
  uint32_t max_cores;         /* cores (threads) available, >= 1 */
  uint32_t align_bytes;       /* granule: a power of two multiple of element_bytes */
  uint64_t buffer_bytes;      /* per-core on-chip buffer / cache budget */
  uint32_t buffer_count;      /* 1 = single buffering, 2 = double buffering */
  uint32_t address_offset;    /* output address modulo align_bytes */
  uint64_t min_bytes_per_core;/* traffic that justifies waking one more core */
  uint64_t stream_threshold_bytes; /* automatic policy: stream when bytes moved >= this */
  int32_t stream_stores;      /* -1 automatic, 0 never, 1 always */
} leaky_plan_request;

typedef struct leaky_tiling {
  uint64_t total_length;       /* elements */
  uint32_t element_bytes;
  uint32_t streams;
  uint32_t cores_used;         /* 1 .. max_cores; 1 means "stay on the caller" */
  uint32_t buffer_count;
  uint64_t granule_length;     /* elements per granule */
  uint64_t lead_length;        /* phantom elements before index 0 that align the grid */
  uint64_t granule_count;      /* granules covering [-lead, n) */
  uint64_t granules_per_core;  /* every core gets this many ... */
  uint64_t granules_remainder; /* ... and cores [0, remainder) one more */
  uint64_t tile_length;        /* elements per tile, a multiple of granule_length */
  int32_t stream_stores;       /* resolved policy: 0 or 1 */
} leaky_tiling;

/* Validates the request and fills *tiling. A pure function: no allocation,
 * no global state. Returns LEAKY_ERROR_INVALID_OPTIONS (with leaky_last_error
 * set) for an impossible request. */
LEAKY_API leaky_status leaky_plan_tiling(const leaky_plan_request* request, leaky_tiling* tiling);

/* The request this library's own drivers make on this CPU for an elementwise
 * op touching `streams` arrays (2 forward, 3 backward) of n elements of
 * `dtype`, with the output at an aligned address. `leaky plan --preset cpu`
 * prints its plan. */
LEAKY_API leaky_status leaky_cpu_plan_request(leaky_dtype dtype, uint64_t n, uint32_t streams,
                                              const leaky_options* options,
                                              leaky_plan_request* request);

/* Element index where granule `g` begins (clamped to [0, n]). */
static inline uint64_t leaky_tiling_granule_start(const leaky_tiling* t, uint64_t g) {
  uint64_t raw = g * t->granule_length;
  if (raw <= t->lead_length) return 0;
  raw -= t->lead_length;
  return raw < t->total_length ? raw : t->total_length;
}

/* The granules [*first, *first + *count) owned by `core`. */
static inline void leaky_tiling_core_granules(const leaky_tiling* t, uint32_t core,
                                              uint64_t* first, uint64_t* count) {
  uint64_t extra_before = core < t->granules_remainder ? core : t->granules_remainder;
  *first = (uint64_t)core * t->granules_per_core + extra_before;
  *count = t->granules_per_core + (core < t->granules_remainder ? 1u : 0u);
}

/* The element range [*start, *start + *length) owned by `core`. */
static inline void leaky_tiling_core_range(const leaky_tiling* t, uint32_t core, uint64_t* start,
                                           uint64_t* length) {
  uint64_t first, count;
  leaky_tiling_core_granules(t, core, &first, &count);
  *start = leaky_tiling_granule_start(t, first);
  *length = leaky_tiling_granule_start(t, first + count) - *start;
}

/* Granules per tile. */
static inline uint64_t leaky_tiling_tile_granules(const leaky_tiling* t) {
  return t->tile_length / t->granule_length;
}

/* Tiles in `core`'s range; tile boundaries stay on the granule grid, so only
 * the first tile of core 0 and the last tile of the last core can be short. */
static inline uint64_t leaky_tiling_tile_count(const leaky_tiling* t, uint32_t core) {
  uint64_t first, count, per_tile = leaky_tiling_tile_granules(t);
  leaky_tiling_core_granules(t, core, &first, &count);
  return (count + per_tile - 1) / per_tile;
}

/* The element range of tile `tile` of `core`. */
static inline void leaky_tiling_tile_range(const leaky_tiling* t, uint32_t core, uint64_t tile,
                                           uint64_t* start, uint64_t* length) {
  uint64_t first, count, per_tile = leaky_tiling_tile_granules(t);
  leaky_tiling_core_granules(t, core, &first, &count);
  uint64_t tile_first = first + tile * per_tile;
  uint64_t tile_end = first + count;
  if (tile_first + per_tile < tile_end) tile_end = tile_first + per_tile;
  *start = leaky_tiling_granule_start(t, tile_first);
  *length = leaky_tiling_granule_start(t, tile_end) - *start;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LEAKY_TILING_H_ */

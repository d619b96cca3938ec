/* leaky tiling: the contract between the host-side planner and the kernels.
 *
 * As in CANN ops-nn's TilingData, this one struct is written by the planner
 * (leaky_plan_tiling) and read by every per-core loop: the CPU driver, the
 * OpenCL kernel (src/device/opencl/leaky_relu.cl reads it from device
 * memory) and the toolkit (`leaky plan`, `leaky check --plan`); none keeps
 * its own copy of the layout. The inline functions below are the only
 * statement of the core and tile rules, compiled into the host (C/C++) and
 * the kernel (OpenCL C), so host and kernel cannot disagree.
 *
 * Shape of a plan: the n elements are cut into alignment granules (one cache
 * line / DMA burst each) on a grid anchored to the output's address, so every
 * core range except possibly the first starts on an aligned boundary. The
 * split gives cores whole granules:
 *   granule  (the library's) the remainder granules one each to the first
 *            cores, and only as many cores as the traffic justifies;
 *   even     (the article's) granules of one element, step = n / cores, the
 *            last core also takes n % cores;
 *   balanced granules of one element, the remainder one each to the first
 *            cores.
 * Within a core, elements stream tile by tile from the core's grid start; a
 * tile is sized so `buffer_count * tile bytes * streams` fits the per-core
 * buffer budget, or fixed by the caller (a kernel's BLOCK_ELEMS).
 *
 * The plan is purely geometric: an op's scalars (the slope, ELU's alpha, ...)
 * travel in the op's own kernel parameters, never here, so one plan serves
 * every slope. ABI: both structs are public and passed by pointer; fixed-width
 * fields in an order with no padding, so C and OpenCL C lay them out alike
 * (the OpenCL host checks it with a probe kernel). Version 0.2 removed their
 * negative_slope field, 0.3 added split and the request's tile_length
 * (LEAKY_VERSION_* in leaky.h).
 */
#ifndef LEAKY_TILING_H_
#define LEAKY_TILING_H_

#ifdef __OPENCL_VERSION__
typedef ulong uint64_t;
typedef uint uint32_t;
typedef int int32_t;
#define LEAKY_TILING_INLINE static inline
#else
#include <stdint.h>

#include "leaky/leaky.h"
#define LEAKY_TILING_INLINE static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* leaky_plan_request.split and leaky_tiling.split. */
#define LEAKY_SPLIT_GRANULE 0
#define LEAKY_SPLIT_EVEN 1
#define LEAKY_SPLIT_BALANCED 2

typedef struct leaky_plan_request {
  uint64_t total_length;      /* elements */
  uint32_t element_bytes;     /* bytes per stored element (2, 4 or 8) */
  uint32_t streams;           /* arrays touched per element: 2 forward, 3 backward */
  uint32_t max_cores;         /* cores (threads) available, 1 .. LEAKY_MAX_THREADS */
  uint32_t align_bytes;       /* granule: a power of two multiple of element_bytes */
  uint64_t buffer_bytes;      /* per-core on-chip buffer / cache budget */
  uint32_t buffer_count;      /* 1 = single buffering, 2 = double buffering */
  uint32_t address_offset;    /* output address modulo align_bytes */
  uint64_t min_bytes_per_core;/* traffic that justifies waking one more core */
  uint64_t stream_threshold_bytes; /* automatic policy: stream when bytes moved >= this */
  int32_t stream_stores;      /* -1 automatic, 0 never, 1 always */
  uint32_t split;             /* LEAKY_SPLIT_*; even and balanced use all max_cores */
  uint64_t tile_length;       /* elements per tile, fixed by the caller; 0: sized from
                                 buffer_bytes (whole granules) */
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
  uint64_t tile_length;        /* elements per tile (full tiles) */
  int32_t stream_stores;       /* resolved policy: 0 or 1 */
  uint32_t split;              /* LEAKY_SPLIT_* */
} leaky_tiling;

#ifndef __OPENCL_VERSION__
/* Validates the request and fills *tiling. A pure function: no allocation,
 * no global state. Returns LEAKY_ERROR_INVALID_OPTIONS (with leaky_last_error
 * set) for an impossible request. */
LEAKY_API leaky_status leaky_plan_tiling(const leaky_plan_request* request, leaky_tiling* tiling);

/* The request this library's own drivers make on this CPU for an elementwise
 * op touching `streams` arrays (2 forward, 3 backward) of n elements of
 * `dtype`, with the output at an aligned address. `leaky plan --preset cpu`
 * prints its plan. Calls whose automatic policy is cached stores make it
 * with options->stream_stores = 0: in place, per-channel rows shorter than
 * 4096 elements, and the compute-bound loops (ELU forward and backward from
 * the input, RReLU in training, bias_act + dropout forward). */
LEAKY_API leaky_status leaky_cpu_plan_request(leaky_dtype dtype, uint64_t n, uint32_t streams,
                                              const leaky_options* options,
                                              leaky_plan_request* request);
#endif

/* Element index where granule `g` begins (clamped to [0, n]). */
LEAKY_TILING_INLINE uint64_t leaky_tiling_granule_start(const leaky_tiling* t, uint64_t g) {
  uint64_t raw = g * t->granule_length;
  if (raw <= t->lead_length) return 0;
  raw -= t->lead_length;
  return raw < t->total_length ? raw : t->total_length;
}

/* The granules [*first, *first + *count) owned by `core`. */
LEAKY_TILING_INLINE void leaky_tiling_core_granules(const leaky_tiling* t, uint32_t core,
                                                    uint64_t* first, uint64_t* count) {
  if (t->split == LEAKY_SPLIT_EVEN) {
    *first = (uint64_t)core * t->granules_per_core;
    *count = t->granules_per_core + (core + 1 == t->cores_used ? t->granules_remainder : 0);
    return;
  }
  uint64_t extra_before = core < t->granules_remainder ? core : t->granules_remainder;
  *first = (uint64_t)core * t->granules_per_core + extra_before;
  *count = t->granules_per_core + (core < t->granules_remainder ? 1u : 0u);
}

/* The element range [*start, *start + *length) owned by `core`. */
LEAKY_TILING_INLINE void leaky_tiling_core_range(const leaky_tiling* t, uint32_t core,
                                                 uint64_t* start, uint64_t* length) {
  uint64_t first, count;
  leaky_tiling_core_granules(t, core, &first, &count);
  *start = leaky_tiling_granule_start(t, first);
  *length = leaky_tiling_granule_start(t, first + count) - *start;
}

/* Tiles in `core`'s range. Tiles run from the core's first grid point
 * (granule boundary), so with a tile of whole granules every tile starts on
 * the grid and only the first tile of core 0 (the grid's lead) and the last
 * tile of a core can be short. */
LEAKY_TILING_INLINE uint64_t leaky_tiling_tile_count(const leaky_tiling* t, uint32_t core) {
  uint64_t first, count;
  leaky_tiling_core_granules(t, core, &first, &count);
  return (count * t->granule_length + t->tile_length - 1) / t->tile_length;
}

/* The element range of tile `tile` of `core`. */
LEAKY_TILING_INLINE void leaky_tiling_tile_range(const leaky_tiling* t, uint32_t core,
                                                 uint64_t tile, uint64_t* start,
                                                 uint64_t* length) {
  uint64_t first, count;
  leaky_tiling_core_granules(t, core, &first, &count);
  /* In grid coordinates (element index + lead), then clamped to [0, n). */
  const uint64_t core_end = (first + count) * t->granule_length;
  uint64_t begin = first * t->granule_length + tile * t->tile_length;
  uint64_t end = begin + t->tile_length < core_end ? begin + t->tile_length : core_end;
  begin = begin > t->lead_length ? begin - t->lead_length : 0;
  end = end > t->lead_length ? end - t->lead_length : 0;
  if (begin > t->total_length) begin = t->total_length;
  if (end > t->total_length) end = t->total_length;
  *start = begin;
  *length = end - begin;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LEAKY_TILING_H_ */

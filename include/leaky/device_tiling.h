/* leaky device tiling: the TilingData of the device kernel, defined once for
 * the host (C/C++) and the OpenCL C kernel (src/device/opencl/leaky_relu.cl
 * includes this file). The host plans, writes one of these into a device
 * buffer, and every work-group (a "core") reads all its parameters from
 * there. Fixed-width fields only, so both sides agree on the layout; both
 * check it (LEAKY_DEVICE_TILING_* below, and a probe kernel the host runs).
 */
#ifndef LEAKY_DEVICE_TILING_H_
#define LEAKY_DEVICE_TILING_H_

#ifdef __OPENCL_VERSION__
typedef uint leaky_u32;
typedef ulong leaky_u64;
#else
#include <stdint.h>
typedef uint32_t leaky_u32;
typedef uint64_t leaky_u64;
#endif

/* How the elements are split over cores (work-groups). */
#define LEAKY_DEVICE_SPLIT_EVEN 0     /* step = total / cores; the last core also takes total % cores */
#define LEAKY_DEVICE_SPLIT_BALANCED 1 /* the remainder one element each to the first cores */

typedef struct leaky_device_tiling {
  leaky_u64 total;        /* elements */
  leaky_u32 cores;        /* work-groups, >= 1 */
  leaky_u32 split;        /* LEAKY_DEVICE_SPLIT_* */
  leaky_u32 tile_length;  /* elements per tile (BLOCK_ELEMS) */
  leaky_u32 buffers;      /* 1 or 2 local buffers per stream */
  float negative_slope;   /* rounded once to f32 (f64 kernels: the double below) */
  leaky_u32 reserved;     /* zero */
  double negative_slope_f64;
} leaky_device_tiling;

#define LEAKY_DEVICE_TILING_SIZE 40
#define LEAKY_DEVICE_TILING_OFFSET_CORES 8
#define LEAKY_DEVICE_TILING_OFFSET_TILE 16
#define LEAKY_DEVICE_TILING_OFFSET_SLOPE 24
#define LEAKY_DEVICE_TILING_OFFSET_SLOPE_F64 32

#endif /* LEAKY_DEVICE_TILING_H_ */

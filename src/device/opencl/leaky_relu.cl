// The article's LeakyReLU kernel in OpenCL C: a work-group is a core, local
// memory is its unified buffer. Each core takes its range and tiles from the
// planner's tiling data in device memory (leaky_tiling_core_range and
// leaky_tiling_tile_range of leaky/tiling.h, the functions the CPU driver
// and the tools read the same plan with), the slope from the op's
// parameters, copies tile after tile into local memory
// (async_work_group_copy), computes compare + multiply + select in the
// compute type (f32 for f16/bf16, which are storage only), and copies the
// result back; with 2 buffers the next tile's copy-in is issued before this
// tile's compute. Built per storage type: -D LEAKY_DTYPE=0 f32, 1 f64,
// 2 f16, 3 bf16; -D LEAKY_BACKWARD=1 for dx = saved > 0 ? dy : dy * slope.
// -D LEAKY_FAULT=<n> plants one row of the troubleshooting table (the
// toolkit's proof on a real kernel; LEAKY_FAULT_* below).
#include "leaky/device_tiling.h"

#define LEAKY_FAULT_NONE 0
#define LEAKY_FAULT_COMPUTE_BEFORE_WAIT 1  // compute on the buffer before its copy-in
#define LEAKY_FAULT_REMAINDER_DROPPED 2    // the split forgets total % cores
#define LEAKY_FAULT_SLOPE_LAYOUT 3         // the kernel reads the slope at the wrong offset
#define LEAKY_FAULT_HALF_FLUSH 4           // the product rounded to f16 and flushed to zero
#define LEAKY_FAULT_SINGLE_BUFFER 5        // one buffer, but the next copy-in still prefetched
#define LEAKY_FAULT_SELECT_MISSING 6       // y = slope * x, the Select commented out
#define LEAKY_FAULT_CORE_OFFSET 7          // each core's first copy-in starts 16 elements early
#ifndef LEAKY_FAULT
#define LEAKY_FAULT LEAKY_FAULT_NONE
#endif
#ifndef LEAKY_BACKWARD
#define LEAKY_BACKWARD 0
#endif

#if LEAKY_DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double store_t;
typedef double compute_t;
#define WIDEN(buf, i) ((buf)[i])
#define NARROW(v, buf, i) ((buf)[i] = (v))
#elif LEAKY_DTYPE == 2
typedef ushort store_t;
typedef float compute_t;
#define WIDEN(buf, i) vload_half((i), (const __local half*)(buf))
#define NARROW(v, buf, i) vstore_half_rte((v), (i), (__local half*)(buf))
#elif LEAKY_DTYPE == 3
typedef ushort store_t;
typedef float compute_t;
#define WIDEN(buf, i) as_float((uint)(buf)[i] << 16)
// Round to nearest even; NaN stays NaN, quieted (as leaky::bfloat16).
inline ushort bf16_from_float(float v) {
  const uint u = as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u | 0x00400000u) >> 16);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#define NARROW(v, buf, i) ((buf)[i] = bf16_from_float(v))
#else
typedef float store_t;
typedef float compute_t;
#define WIDEN(buf, i) ((buf)[i])
#define NARROW(v, buf, i) ((buf)[i] = (v))
#endif

#if LEAKY_FAULT == LEAKY_FAULT_SLOPE_LAYOUT
#define SLOPE_FIELD reserved  // the host wrote the slope elsewhere
#define SLOPE_OF(p) ((compute_t)as_float((p).SLOPE_FIELD))
#elif LEAKY_DTYPE == 1
#define SLOPE_OF(p) ((p).negative_slope_f64)
#else
#define SLOPE_OF(p) ((p).negative_slope)
#endif

inline compute_t leaky_relu(compute_t x, compute_t g, compute_t slope) {
#if LEAKY_FAULT == LEAKY_FAULT_SELECT_MISSING
  return g * slope;
#else
  compute_t product = g * slope;
#if LEAKY_FAULT == LEAKY_FAULT_HALF_FLUSH
  // As native f16 arithmetic under flush-to-zero: the product rounded to
  // half, and below half's smallest normal (2^-14) flushed.
  ushort half_bits;
  vstore_half_rte((float)product, 0, (__private half*)&half_bits);
  product = vload_half(0, (__private const half*)&half_bits);
  if (fabs(product) < 6.103515625e-05f) product = 0 * product;
#endif
  return x > 0 ? g : product;
#endif
}

// The layouts the kernel sees, for the host to compare with its own.
#define LEAKY_OFFSET(s, f) ((ulong)((__private char*)&(s).f - (__private char*)&(s)))
__kernel void leaky_device_tiling_probe(__global ulong* out) {
  leaky_tiling t;
  leaky_device_params p;
  out[0] = sizeof(leaky_tiling);
  out[1] = LEAKY_OFFSET(t, cores_used);
  out[2] = LEAKY_OFFSET(t, tile_length);
  out[3] = LEAKY_OFFSET(t, split);
  out[4] = sizeof(leaky_device_params);
  out[5] = LEAKY_OFFSET(p, negative_slope);
  out[6] = LEAKY_OFFSET(p, negative_slope_f64);
}

#if LEAKY_BACKWARD
#define IN_STREAMS 2
#else
#define IN_STREAMS 1
#endif

// One core: its tiles through `buffer_count` slots of local memory of
// tile_length elements each. in_buf holds IN_STREAMS x buffers x
// tile_length elements (dy first), and out_buf buffers x tile_length.
__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling,
                               __global const leaky_device_params* params,
                               __global const store_t* src0,  // x (forward) / dy (backward)
                               __global const store_t* src1,  // unused (forward) / saved x
                               __global store_t* dst, __local store_t* in_buf,
                               __local store_t* out_buf) {
  leaky_tiling t = *tiling;  // every geometric parameter from the plan
#if LEAKY_FAULT == LEAKY_FAULT_REMAINDER_DROPPED
  t.granules_remainder = 0;  // the kernel's own split, which forgets total % cores
#endif
  const uint core = get_group_id(0);
  const uint lid = get_local_id(0), lsize = get_local_size(0);
  const compute_t slope = SLOPE_OF(*params);
  const uint tile = (uint)t.tile_length;
  const uint buffers = t.buffer_count;
  const ulong tiles = leaky_tiling_tile_count(&t, core);
  __local store_t* x_buf = in_buf + (IN_STREAMS - 1) * buffers * tile;  // saved x (backward)
  event_t in_events[2], out_events[2];
#if LEAKY_FAULT == LEAKY_FAULT_COMPUTE_BEFORE_WAIT
  for (uint j = lid; j < IN_STREAMS * buffers * tile; j += lsize) in_buf[j] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  // Issue the copy-in of tile i into its slot.
#define COPY_IN(i, slot_of)                                                                    \
  do {                                                                                         \
    ulong from, count;                                                                         \
    leaky_tiling_tile_range(&t, core, (i), &from, &count);                                     \
    if (LEAKY_FAULT == LEAKY_FAULT_CORE_OFFSET && (i) == 0 && core > 0) from -= 16;            \
    const uint s = (slot_of);                                                                  \
    in_events[s] = async_work_group_copy(in_buf + s * tile, src0 + from, count, 0);            \
    if (IN_STREAMS == 2)                                                                       \
      in_events[s] = async_work_group_copy(x_buf + s * tile, src1 + from, count, in_events[s]); \
  } while (0)
  const uint slots = buffers;
#if LEAKY_FAULT != LEAKY_FAULT_COMPUTE_BEFORE_WAIT
  if (tiles > 0) COPY_IN(0, 0);
#endif
  for (ulong i = 0; i < tiles; ++i) {
    const uint slot = i % slots;
    ulong first, length;
    leaky_tiling_tile_range(&t, core, i, &first, &length);
    const uint count = (uint)length;
#if LEAKY_FAULT == LEAKY_FAULT_SINGLE_BUFFER
    // The double-buffered code with one buffer: the prefetch lands in the
    // slot this tile is about to be computed from.
    if (i == 0) wait_group_events(1, &in_events[0]);
    if (i + 1 < tiles) {
      COPY_IN(i + 1, 0);
      wait_group_events(1, &in_events[0]);
    }
#elif LEAKY_FAULT == LEAKY_FAULT_COMPUTE_BEFORE_WAIT
    // (the copy-in is issued and waited for after the compute, below)
#else
    if (buffers == 2 && i + 1 < tiles) COPY_IN(i + 1, (i + 1) % 2);
    wait_group_events(1, &in_events[slot]);
#endif
    // The slot's previous copy-out must be done before it is written again.
    if (i >= slots) wait_group_events(1, &out_events[slot]);
    for (uint j = lid; j < count; j += lsize) {
      const compute_t g = WIDEN(in_buf + slot * tile, j);
      const compute_t x = IN_STREAMS == 2 ? WIDEN(x_buf + slot * tile, j) : g;
      NARROW(leaky_relu(x, g, slope), out_buf + slot * tile, j);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#if LEAKY_FAULT == LEAKY_FAULT_COMPUTE_BEFORE_WAIT
    COPY_IN(i, slot);
    wait_group_events(1, &in_events[slot]);
#endif
    out_events[slot] = async_work_group_copy(dst + first, out_buf + slot * tile, count, 0);
#if LEAKY_FAULT != LEAKY_FAULT_COMPUTE_BEFORE_WAIT && LEAKY_FAULT != LEAKY_FAULT_SINGLE_BUFFER
    if (buffers == 1 && i + 1 < tiles) COPY_IN(i + 1, 0);
#endif
  }
  for (uint s = 0; s < slots && s < tiles; ++s) wait_group_events(1, &out_events[s]);
}

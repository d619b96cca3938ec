// Correct, written differently: another tile loop. The core walks its range
// with a cursor, one tile at a time through slot 0 only (copy in, wait,
// compute, copy out, wait), whatever tiling->buffer_count says - the buffer
// count only sizes the local memory the host allots, so using fewer slots
// is valid, just without overlap.
#include "leaky/device_tiling.h"

#if LEAKY_DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double data_t;
typedef double math_t;
#define SLOPE_FIELD negative_slope_f64
#elif LEAKY_DTYPE == 2 || LEAKY_DTYPE == 3
typedef ushort data_t;
typedef float math_t;
#define SLOPE_FIELD negative_slope
#else
typedef float data_t;
typedef float math_t;
#define SLOPE_FIELD negative_slope
#endif

inline math_t get(__local const data_t* p, uint i) {
#if LEAKY_DTYPE == 2
  return vload_half(i, (__local const half*)p);
#elif LEAKY_DTYPE == 3
  return as_float((uint)p[i] << 16);
#else
  return p[i];
#endif
}

inline void put(math_t v, __local data_t* p, uint i) {
#if LEAKY_DTYPE == 2
  vstore_half_rte(v, i, (__local half*)p);
#elif LEAKY_DTYPE == 3
  // Round half to even on the 16 bits dropped; NaN: set the quiet bit.
  const uint u = as_uint(v);
  const uint rounded = u + 0x7fffu + ((u >> 16) & 1u);
  p[i] = isnan(v) ? (ushort)((u | 0x00400000u) >> 16) : (ushort)(rounded >> 16);
#else
  p[i] = v;
#endif
}

__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling, __global const leaky_device_params* params,
                               __global const data_t* src0, __global const data_t* src1,
                               __global data_t* dst, __local data_t* in_buf,
                               __local data_t* out_buf) {
  const uint core = get_group_id(0), cores = tiling->cores_used;
  const uint lid = get_local_id(0), lsz = get_local_size(0);
  const math_t slope = params->SLOPE_FIELD;
  const uint tile = tiling->tile_length;
  const ulong per = tiling->total_length / cores, rest = tiling->total_length % cores;
  ulong cursor, stop;
  if (tiling->split == LEAKY_SPLIT_BALANCED) {
    cursor = core * per + min((ulong)core, rest);
    stop = cursor + per + (core < rest);
  } else {
    cursor = core * per;
    stop = core == cores - 1 ? tiling->total_length : cursor + per;
  }
  __local data_t* x_tile = in_buf;
#if LEAKY_BACKWARD
  __local data_t* dy_tile = in_buf + tiling->buffer_count * tile;  // the second stream's slot 0
#endif
  while (cursor < stop) {
    const uint m = (uint)min((ulong)tile, stop - cursor);
#if LEAKY_BACKWARD
    event_t in = async_work_group_copy(dy_tile, src0 + cursor, m, 0);
    in = async_work_group_copy(x_tile, src1 + cursor, m, in);
#else
    event_t in = async_work_group_copy(x_tile, src0 + cursor, m, 0);
#endif
    wait_group_events(1, &in);
    for (uint i = lid; i < m; i += lsz) {
      const math_t x = get(x_tile, i);
#if LEAKY_BACKWARD
      const math_t g = get(dy_tile, i);
#else
      const math_t g = x;
#endif
      put(x > 0 ? g : g * slope, out_buf, i);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t out = async_work_group_copy(dst + cursor, out_buf, m, 0);
    wait_group_events(1, &out);
    cursor += m;
  }
}

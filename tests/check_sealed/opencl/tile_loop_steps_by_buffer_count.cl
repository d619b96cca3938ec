// Faulty: a plain tile loop (copy in, wait, compute, copy out, wait), whose
// step was written as the buffer count, t += buffer_count ("one iteration per
// slot"), while each iteration processes a single tile: with 2 buffers every
// other tile of each core, tiles 1, 3, 5, ..., is never written. With 65537
// elements on 4 cores, balanced split, 1024-element tiles: in each core's
// range (core 0 [0, 16385), core k from 16384k + 1) the odd-numbered
// 1024-element tiles are zeros; the even ones are right.
#include "leaky/device_tiling.h"

#if LEAKY_DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double elem_t;
typedef double real_t;
#elif LEAKY_DTYPE == 2 || LEAKY_DTYPE == 3
typedef ushort elem_t;  // f16 / bf16 bits
typedef float real_t;
#else
typedef float elem_t;
typedef float real_t;
#endif

#if LEAKY_BACKWARD
#define STREAMS 2  // dy, then the saved x
#else
#define STREAMS 1
#endif

inline real_t slope_of(__global const leaky_device_params* p) {
#if LEAKY_DTYPE == 1
  return p->negative_slope_f64;
#else
  return p->negative_slope;
#endif
}

// Storage <-> arithmetic in local memory; 16-bit types rounded to nearest even.
inline real_t widen(__local const elem_t* p, uint i) {
#if LEAKY_DTYPE == 2
  return vload_half(i, (__local const half*)p);
#elif LEAKY_DTYPE == 3
  return as_float((uint)p[i] << 16);
#else
  return p[i];
#endif
}

inline void narrow(real_t v, __local elem_t* p, uint i) {
#if LEAKY_DTYPE == 2
  vstore_half_rte(v, i, (__local half*)p);
#elif LEAKY_DTYPE == 3
  const uint u = as_uint(v);
  p[i] = isnan(v) ? (ushort)((u >> 16) | 0x0040u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
  p[i] = v;
#endif
}

// Copy-in of n elements at `first` into one slot of each stream.
inline event_t fetch(__local elem_t* g, __local elem_t* x, __global const elem_t* src0,
                     __global const elem_t* src1, ulong first, uint n) {
  event_t e = async_work_group_copy(g, src0 + first, n, 0);
#if LEAKY_BACKWARD
  e = async_work_group_copy(x, src1 + first, n, e);
#endif
  return e;
}

__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling, __global const leaky_device_params* params,
                               __global const elem_t* src0,  // x, or dy backward
                               __global const elem_t* src1,  // backward: the saved x
                               __global elem_t* dst, __local elem_t* in_buf,
                               __local elem_t* out_buf) {
  const uint core = get_group_id(0);
  const uint lane = get_local_id(0), lanes = get_local_size(0);
  const ulong total = tiling->total_length;
  const uint cores = tiling->cores_used;
  const uint tile = (uint)tiling->tile_length;
  const uint buffers = tiling->buffer_count;
  const real_t slope = slope_of(params);
  const ulong per_core = total / cores, extra = total % cores;
  ulong begin, count;
  if (tiling->split == LEAKY_SPLIT_BALANCED) {
    begin = core * per_core + min((ulong)core, extra);
    count = per_core + (core < extra ? 1 : 0);
  } else {
    begin = core * per_core;
    count = core == cores - 1 ? per_core + extra : per_core;
  }
  const ulong end = begin + count;
  const ulong tiles = (count + tile - 1) / tile;
  __local elem_t* xs = in_buf + (STREAMS - 1) * buffers * tile;
  for (ulong k = 0; k < tiles; k += buffers) {  // FAULT: steps by the buffer count, one tile per iteration
    const ulong first = begin + k * tile;
    const uint n = (uint)min((ulong)tile, end - first);
    event_t e = fetch(in_buf, xs, src0, src1, first, n);
    wait_group_events(1, &e);
    for (uint i = lane; i < n; i += lanes) {
#if LEAKY_BACKWARD
      const real_t g = widen(in_buf, i), x = widen(xs, i);
#else
      const real_t x = widen(in_buf, i), g = x;
#endif
      narrow(x > 0 ? g : g * slope, out_buf, i);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    e = async_work_group_copy(dst + first, out_buf, n, 0);
    wait_group_events(1, &e);
  }
}

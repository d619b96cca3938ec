// Correct, written differently: the kernel ignores the plan's split and tile
// length and makes its own: ceil(total / cores) elements per core (the last
// core the rest, possibly fewer) and tiles of at most 128 elements through
// the plan's slots (which are at least that big here; never more than a
// slot). A different partition than the plan's granule split, but every
// element is computed from its own input and stored at its own index.
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
  const leaky_tiling t = *tiling;  // the plan's helpers take a private copy
  const uint core = get_group_id(0);
  const uint lane = get_local_id(0), lanes = get_local_size(0);
  const uint tile = (uint)t.tile_length;  // a slot's size
  const uint slots = t.buffer_count;
  const real_t slope = slope_of(params);
  const ulong total = t.total_length, cores = t.cores_used;
  const ulong chunk = (total + cores - 1) / cores;
  const ulong begin = min(core * chunk, total);
  const ulong count = min(chunk, total - begin);
  const uint step = min(128u, tile);
  const ulong tiles = (count + step - 1) / step;
  const ulong end = begin + count;
  __local elem_t* x_slots = in_buf + (STREAMS - 1) * slots * tile;
  event_t in_ev[2], out_ev[2];
  if (tiles > 0) in_ev[0] = fetch(in_buf, x_slots, src0, src1, begin, (uint)min((ulong)step, count));
  for (ulong k = 0; k < tiles; ++k) {
    const uint s = (uint)(k % slots);
    const ulong first = begin + k * step;
    const uint n = (uint)min((ulong)step, end - first);
    if (slots == 2 && k + 1 < tiles) {
      const ulong next = first + step;
      in_ev[1 - s] = fetch(in_buf + (1 - s) * tile, x_slots + (1 - s) * tile, src0, src1, next,
                           (uint)min((ulong)step, end - next));
    }
    wait_group_events(1, &in_ev[s]);
    if (k >= slots) wait_group_events(1, &out_ev[s]);  // the slot's last copy-out has left
    __local const elem_t* gs = in_buf + s * tile;
    __local const elem_t* xs = x_slots + s * tile;
    __local elem_t* os = out_buf + s * tile;
    for (uint i = lane; i < n; i += lanes) {
#if LEAKY_BACKWARD
      const real_t g = widen(gs, i), x = widen(xs, i);
#else
      const real_t x = widen(gs, i), g = x;
#endif
      narrow(x > 0 ? g : g * slope, os, i);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out_ev[s] = async_work_group_copy(dst + first, os, n, 0);
    if (slots == 1 && k + 1 < tiles) {
      const ulong next = first + step;
      in_ev[0] = fetch(in_buf, x_slots, src0, src1, next, (uint)min((ulong)step, end - next));
    }
  }
  for (uint s = 0; s < slots && s < tiles; ++s) wait_group_events(1, &out_ev[s]);
}

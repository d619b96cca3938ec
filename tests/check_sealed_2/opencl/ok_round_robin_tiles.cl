// Correct, written differently: the plan's split is ignored. The array is cut
// into tiles of tile_length from index 0, and work-group g of G takes tiles g, g
// + G, g + 2G, ... (round robin), through 1 or 2 slots as the corpus's port
// does. Every element is still computed once, at its own index; half types
// computed in f32 and rounded to nearest even.
#include "leaky/device_tiling.h"

#if LEAKY_DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double elem_t;  // as stored
typedef double real_t;  // as computed
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
#define STREAMS 1  // x
#endif

// Storage -> arithmetic (exact).
inline real_t widen(__local const elem_t* p, uint i) {
#if LEAKY_DTYPE == 2
  return vload_half(i, (__local const half*)p);
#elif LEAKY_DTYPE == 3
  return as_float((uint)p[i] << 16);
#else
  return p[i];
#endif
}

// Arithmetic -> storage, rounded to nearest even.
inline void narrow(real_t v, __local elem_t* p, uint i) {
#if LEAKY_DTYPE == 2
  vstore_half_rte(v, i, (__local half*)p);
#elif LEAKY_DTYPE == 3
  const uint bits = as_uint(v);
  if (isnan(v)) {
    p[i] = (ushort)((bits >> 16) | 0x0040u);  // still a NaN once the low half is gone
  } else {
    p[i] = (ushort)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
  }
#else
  p[i] = v;
#endif
}

inline real_t slope_of(__global const leaky_device_params* t) {
#if LEAKY_DTYPE == 1
  return t->negative_slope_f64;
#else
  return t->negative_slope;
#endif
}

// Forward: leaky(x, x); backward: leaky(x, dy).
inline real_t leaky(real_t x, real_t value, real_t slope) { return x > 0 ? value : value * slope; }

// Starts the copy-in of n elements from `first` into one slot of each stream.
inline event_t fetch(__local elem_t* grad, __local elem_t* saved, __global const elem_t* src0,
                     __global const elem_t* src1, ulong first, uint n) {
  event_t done = async_work_group_copy(grad, src0 + first, n, 0);
#if LEAKY_BACKWARD
  done = async_work_group_copy(saved, src1 + first, n, done);
#endif
  return done;
}

// One tile: out[i] = leaky for i < n, from a slot of each stream.
inline void compute_tile(__local const elem_t* grad, __local const elem_t* saved, __local elem_t* out,
                         uint n, real_t slope, uint lane, uint lanes) {
  for (uint i = lane; i < n; i += lanes) {
#if LEAKY_BACKWARD
    narrow(leaky(widen(saved, i), widen(grad, i), slope), out, i);
#else
    const real_t x = widen(grad, i);
    narrow(leaky(x, x, slope), out, i);
#endif
  }
}

__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling, __global const leaky_device_params* params,
                               __global const elem_t* src0,  // x, or dy backward
                               __global const elem_t* src1,  // backward: the saved x
                               __global elem_t* dst, __local elem_t* in_buf,
                               __local elem_t* out_buf) {
  const uint group = get_group_id(0), groups = get_num_groups(0);
  const uint lane = get_local_id(0), lanes = get_local_size(0);
  const ulong total = tiling->total_length;
  const uint tile = tiling->tile_length;
  const uint slots = tiling->buffer_count;
  const real_t slope = slope_of(params);
  const ulong all_tiles = (total + tile - 1) / tile;
  // This group's tiles: group + j * groups for j < mine.
  const ulong mine = group < all_tiles ? (all_tiles - group + groups - 1) / groups : 0;

  __local elem_t* grad_slots = in_buf;
  __local elem_t* saved_slots = in_buf + (STREAMS - 1) * slots * tile;
  event_t loaded[2], stored[2];

  if (mine > 0) {
    const ulong first = (ulong)group * tile;
    loaded[0] = fetch(grad_slots, saved_slots, src0, src1, first, (uint)min((ulong)tile, total - first));
  }
  for (ulong j = 0; j < mine; ++j) {
    const uint s = (uint)(j % slots);
    const ulong first = (group + j * groups) * tile;
    const uint n = (uint)min((ulong)tile, total - first);
    const ulong next = first + (ulong)groups * tile;
    if (slots == 2 && j + 1 < mine) {
      loaded[1 - s] = fetch(grad_slots + (1 - s) * tile, saved_slots + (1 - s) * tile, src0, src1,
                            next, (uint)min((ulong)tile, total - next));
    }
    wait_group_events(1, &loaded[s]);
    if (j >= slots) wait_group_events(1, &stored[s]);
    compute_tile(grad_slots + s * tile, saved_slots + s * tile, out_buf + s * tile, n, slope, lane,
                 lanes);
    barrier(CLK_LOCAL_MEM_FENCE);
    stored[s] = async_work_group_copy(dst + first, out_buf + s * tile, n, 0);
    if (slots == 1 && j + 1 < mine) {
      loaded[0] =
          fetch(grad_slots, saved_slots, src0, src1, next, (uint)min((ulong)tile, total - next));
    }
  }
  for (uint s = 0; s < slots && s < mine; ++s) wait_group_events(1, &stored[s]);
}

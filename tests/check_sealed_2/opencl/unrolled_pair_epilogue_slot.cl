// Faulty: double buffering by pairs: the tile loop is unrolled by two, the first
// tile of a pair in slot 0 and the second in slot 1 (both copy-ins issued before
// the first compute), and an odd tile count leaves a last tile done alone by an
// epilogue, which fetches it into slot 0 but computes from slot 1, still holding
// the input of the tile before it (the second of the last pair). Needs 2
// buffers; cores with an even tile count are right.
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
  const uint core = get_group_id(0);
  const uint lane = get_local_id(0), lanes = get_local_size(0);
  const ulong total = tiling->total_length;
  const uint cores = tiling->cores_used;
  const uint tile = tiling->tile_length;
  const uint slots = tiling->buffer_count;
  const real_t slope = slope_of(params);

  // This core's elements: [begin, begin + count).
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

  // Local memory: in_buf is [stream][slot][tile], out_buf [slot][tile].
  __local elem_t* grad_slots = in_buf;
  __local elem_t* saved_slots = in_buf + (STREAMS - 1) * slots * tile;

  ulong t = 0;
  for (; t + 1 < tiles; t += 2) {  // tiles t (slot 0) and t + 1 (slot 1)
    const ulong first0 = begin + t * tile, first1 = first0 + tile;
    const uint n1 = (uint)min((ulong)tile, end - first1);
    event_t in0 = fetch(grad_slots, saved_slots, src0, src1, first0, tile);
    event_t in1 = fetch(grad_slots + tile, saved_slots + tile, src0, src1, first1, n1);
    wait_group_events(1, &in0);
    compute_tile(grad_slots, saved_slots, out_buf, tile, slope, lane, lanes);
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t out0 = async_work_group_copy(dst + first0, out_buf, tile, 0);
    wait_group_events(1, &in1);
    compute_tile(grad_slots + tile, saved_slots + tile, out_buf + tile, n1, slope, lane, lanes);
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t out1 = async_work_group_copy(dst + first1, out_buf + tile, n1, 0);
    wait_group_events(1, &out0);
    wait_group_events(1, &out1);
  }
  // An odd tile count: the last tile alone, fetched into slot 0 (a loop run at most once).
  for (; t < tiles; ++t) {
    const ulong first = begin + t * tile;
    const uint n = (uint)(end - first);
    event_t in = fetch(grad_slots, saved_slots, src0, src1, first, n);
    wait_group_events(1, &in);
    // FAULT: computed from slot 1 (grad_slots + tile), it was fetched into slot 0
    compute_tile(grad_slots + tile, saved_slots + tile, out_buf, n, slope, lane, lanes);
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t out = async_work_group_copy(dst + first, out_buf, n, 0);
    wait_group_events(1, &out);
  }
}

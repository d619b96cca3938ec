// Faulty: a hand-written f16 -> f32 widening rebiases the exponent with 113
// instead of 127 - 15 = 112: every normal f16 input is read as twice its
// value, so its result is doubled (results of |x| >= 32768 overflow to inf,
// negatives round as 0.4 x). Subnormals (their own branch), zeros,
// infinities and NaNs are right.
//
// Otherwise the corpus's correct port (tests/check_corpus/opencl/port_tiles.cl):
// a work-group per core, the split and every parameter from the tiling data,
// tiles through local memory with async_work_group_copy in 1 or 2 slots, f16
// and bf16 computed in f32 and rounded to nearest even.
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
  const uint h = p[i];
  const uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1fu) return as_float(sign | 0x7f800000u | (m << 13));  // inf, NaN
  if (e == 0) return as_float(sign | as_uint((float)m * 0x1p-24f));  // zero, subnormal
  return as_float(sign | ((e + 113u) << 23) | (m << 13));  // FAULT: bias 127 - 15 = 112
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
  event_t loaded[2], stored[2];

  if (tiles > 0) {
    loaded[0] = fetch(grad_slots, saved_slots, src0, src1, begin, (uint)min((ulong)tile, count));
  }
  for (ulong t = 0; t < tiles; ++t) {
    const uint s = (uint)(t % slots);
    const ulong first = begin + t * tile;
    const uint n = (uint)min((ulong)tile, end - first);
    // Two slots: the next tile's copy-in overlaps this tile's compute.
    if (slots == 2 && t + 1 < tiles) {
      const ulong next = first + tile;
      loaded[1 - s] = fetch(grad_slots + (1 - s) * tile, saved_slots + (1 - s) * tile, src0, src1,
                            next, (uint)min((ulong)tile, end - next));
    }
    wait_group_events(1, &loaded[s]);
    // This slot's previous copy-out must have left before it is written again.
    if (t >= slots) wait_group_events(1, &stored[s]);
    __local const elem_t* grad = grad_slots + s * tile;
    __local const elem_t* saved = saved_slots + s * tile;
    __local elem_t* out = out_buf + s * tile;
    for (uint i = lane; i < n; i += lanes) {
#if LEAKY_BACKWARD
      narrow(leaky(widen(saved, i), widen(grad, i), slope), out, i);
#else
      const real_t x = widen(grad, i);
      narrow(leaky(x, x, slope), out, i);
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);  // every lane's results in place before the copy-out
    stored[s] = async_work_group_copy(dst + first, out, n, 0);
    // One slot: the next copy-in only once this tile's compute has read it.
    if (slots == 1 && t + 1 < tiles) {
      const ulong next = first + tile;
      loaded[0] =
          fetch(grad_slots, saved_slots, src0, src1, next, (uint)min((ulong)tile, end - next));
    }
  }
  for (uint s = 0; s < slots && s < tiles; ++s) wait_group_events(1, &stored[s]);
}

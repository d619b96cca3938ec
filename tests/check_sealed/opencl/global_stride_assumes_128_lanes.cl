// Faulty: no local memory; each work-group's lanes stride over its core's
// range straight in global memory, but the stride is a hard-coded
// GROUP_SIZE of 128 (the NPU's vector width) while the host launches 64 lanes
// per work-group: in each core's range the elements at offsets j with
// j mod 128 in [64, 128) are never written. With 10007 elements on 16 cores,
// balanced split (625 or 626 each), that is offsets 64-127, 192-255, ...
// of every core: about half of the array, in 64-element runs.
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

// Storage <-> arithmetic straight in global memory.
inline real_t load_value(__global const elem_t* p, ulong i) {
#if LEAKY_DTYPE == 2
  return vload_half(i, (__global const half*)p);
#elif LEAKY_DTYPE == 3
  return as_float((uint)p[i] << 16);
#else
  return p[i];
#endif
}

inline void store_value(real_t v, __global elem_t* p, ulong i) {
#if LEAKY_DTYPE == 2
  vstore_half_rte(v, i, (__global half*)p);
#elif LEAKY_DTYPE == 3
  const uint u = as_uint(v);
  p[i] = isnan(v) ? (ushort)((u >> 16) | 0x0040u) : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
  p[i] = v;
#endif
}

__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling, __global const leaky_device_params* params,
                               __global const elem_t* src0,  // x, or dy backward
                               __global const elem_t* src1,  // backward: the saved x
                               __global elem_t* dst, __local elem_t* in_buf,
                               __local elem_t* out_buf) {
  const leaky_tiling t = *tiling;
  const real_t slope = slope_of(params);
  const uint core = get_group_id(0);
  ulong begin, count;  // this core's elements
  const ulong per_core = t.total_length / t.cores_used, extra = t.total_length % t.cores_used;
  if (t.split == LEAKY_SPLIT_BALANCED) {
    begin = core * per_core + min((ulong)core, extra);
    count = per_core + (core < extra ? 1 : 0);
  } else {
    begin = core * per_core;
    count = core + 1 == t.cores_used ? per_core + extra : per_core;
  }
#define GROUP_SIZE 128  // FAULT: the launch has get_local_size(0) = 64 lanes
  for (ulong i = begin + get_local_id(0); i < begin + count; i += GROUP_SIZE) {
#if LEAKY_BACKWARD
    const real_t g = load_value(src0, i), x = load_value(src1, i);
#else
    const real_t x = load_value(src0, i), g = x;
#endif
    store_value(x > 0 ? g : g * slope, dst, i);
  }
}

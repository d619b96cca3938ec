// Correct, written differently: the plan is ignored entirely; every
// work-item walks the whole array with the grid stride (i = global id;
// i += global size), straight in global memory, no local buffers. Each
// element is computed once, from its own inputs, at its own index.
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
  const real_t slope = slope_of(params);
  const ulong total = tiling->total_length;
  for (ulong i = get_global_id(0); i < total; i += get_global_size(0)) {
#if LEAKY_BACKWARD
    const real_t dy = load_value(src0, i), x = load_value(src1, i);
    store_value(isgreater(x, (real_t)0) ? dy : dy * slope, dst, i);
#else
    const real_t x = load_value(src0, i);
    store_value(isgreater(x, (real_t)0) ? x : x * slope, dst, i);
#endif
  }
}

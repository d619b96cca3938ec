// Faulty: forward written branch-free as max(x, 0) + slope * min(x, 0). fmax
// and fmin return the other operand when one is NaN, so a NaN input comes out
// as 0 + slope * 0 = 0 (and -0 as +0).
//
// Otherwise the corpus's correct port without local memory
// (port_global_direct.cl): a work-group per core, its lanes striding over the
// core's range in global memory.
#include "leaky/device_tiling.h"

#if LEAKY_DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define STORE_T double
#define CALC_T double
#elif LEAKY_DTYPE == 2 || LEAKY_DTYPE == 3
#define STORE_T ushort
#define CALC_T float
#else
#define STORE_T float
#define CALC_T float
#endif

inline CALC_T load_value(__global const STORE_T* p, ulong i) {
#if LEAKY_DTYPE == 2
  return vload_half(i, (__global const half*)p);
#elif LEAKY_DTYPE == 3
  return as_float(((uint)p[i]) << 16);
#else
  return p[i];
#endif
}

inline void store_value(CALC_T v, __global STORE_T* p, ulong i) {
#if LEAKY_DTYPE == 2
  vstore_half_rte(v, i, (__global half*)p);
#elif LEAKY_DTYPE == 3
  const uint u = as_uint(v);
  // A NaN keeps its sign and stays quiet; anything else to nearest even.
  p[i] = isnan(v) ? (ushort)(0x7fc0u | ((u >> 16) & 0x8000u))
                  : (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
  p[i] = v;
#endif
}

__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling, __global const leaky_device_params* params,
                               __global const STORE_T* src0, __global const STORE_T* src1,
                               __global STORE_T* dst, __local STORE_T* in_buf,
                               __local STORE_T* out_buf) {
  const leaky_tiling t = *tiling;
#if LEAKY_DTYPE == 1
  const CALC_T slope = params->negative_slope_f64;
#else
  const CALC_T slope = params->negative_slope;
#endif
  const ulong core = get_group_id(0);
  // [first, last): the elements of the cores before this one are skipped.
  const ulong step = t.total_length / t.cores_used, left = t.total_length % t.cores_used;
  ulong first, last;  // [first, last)
  if (t.split == LEAKY_SPLIT_BALANCED) {
    first = core * step + (core < left ? core : left);
    last = first + step + (core < left ? 1 : 0);
  } else {
    first = core * step;
    last = core + 1 == t.cores_used ? t.total_length : first + step;
  }
  for (ulong i = first + get_local_id(0); i < last; i += get_local_size(0)) {
#if LEAKY_BACKWARD
    const CALC_T g = load_value(src0, i), x = load_value(src1, i);
#else
    const CALC_T x = load_value(src0, i), g = x;
#endif
#if LEAKY_BACKWARD
    store_value(x > 0 ? g : g * slope, dst, i);
#else
    store_value(fmax(x, (CALC_T)0) + slope * fmin(x, (CALC_T)0), dst, i);  // FAULT: NaN -> 0
#endif
  }
}

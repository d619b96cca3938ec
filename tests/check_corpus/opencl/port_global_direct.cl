// Correct, written differently: no local memory at all. Each work-group
// still is a core and takes its range from the split in the tiling data,
// but its lanes stride over the range straight in global memory (the local
// buffers the host allocates are left unused, which is allowed). f16 goes
// through vload_half/vstore_half_rte on global memory, bf16 through its bits.
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
    store_value(x > 0 ? g : g * slope, dst, i);
  }
}

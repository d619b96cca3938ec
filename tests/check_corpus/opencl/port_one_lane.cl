// Correct, written differently: one work-item does all of its core's work.
// Lane 0 of each work-group walks the core's range tile by tile, copying
// each tile into local memory and the result back with plain loops (no
// async copies, so nothing to wait for); the other lanes only meet the
// barrier. Slow, but the results are the same bits.
#include "leaky/device_tiling.h"

#if LEAKY_DTYPE == 1
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double stored;
typedef double wide;
#elif LEAKY_DTYPE == 2 || LEAKY_DTYPE == 3
typedef ushort stored;
typedef float wide;
#else
typedef float stored;
typedef float wide;
#endif

#if LEAKY_DTYPE == 3
// bf16 <-> f32: the bits are the top half; to bf16 by rounding to nearest
// even, NaN kept a quiet NaN.
inline wide to_wide(ushort b) { return as_float((uint)b << 16); }
inline ushort to_stored(float f) {
  uint u = as_uint(f);
  if (isnan(f)) return (ushort)((u >> 16) | 0x40u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
#endif

__kernel void leaky_relu_tiles(__global const leaky_tiling* tiling, __global const leaky_device_params* params,
                               __global const stored* src0, __global const stored* src1,
                               __global stored* dst, __local stored* in_buf,
                               __local stored* out_buf) {
  const uint core = get_group_id(0);
  if (get_local_id(0) == 0) {
    const ulong n = tiling->total_length;
    const uint cores = tiling->cores_used;
    const ulong base = n / cores, spare = n % cores;
    const bool balanced = tiling->split == LEAKY_SPLIT_BALANCED;
    const ulong start = core * base + (balanced ? min((ulong)core, spare) : 0);
    const ulong len = base + (balanced ? (core < spare) : (core == cores - 1 ? spare : 0));
#if LEAKY_DTYPE == 1
    const wide slope = params->negative_slope_f64;
#else
    const wide slope = params->negative_slope;
#endif
    const uint tile = tiling->tile_length;
#if LEAKY_BACKWARD
    __local stored* saved = in_buf + tile;  // [dy tile][x tile]: the host allots 2 x buffers x tile
#endif
    for (ulong done = 0; done < len; done += tile) {
      const uint m = (uint)min((ulong)tile, len - done);
      for (uint j = 0; j < m; ++j) {
        in_buf[j] = src0[start + done + j];
#if LEAKY_BACKWARD
        saved[j] = src1[start + done + j];
#endif
      }
      for (uint j = 0; j < m; ++j) {
#if LEAKY_DTYPE == 2
        const wide g = vload_half(j, (__local const half*)in_buf);
#if LEAKY_BACKWARD
        const wide x = vload_half(j, (__local const half*)saved);
#else
        const wide x = g;
#endif
        vstore_half_rte(x > 0 ? g : g * slope, j, (__local half*)out_buf);
#elif LEAKY_DTYPE == 3
        const wide g = to_wide(in_buf[j]);
#if LEAKY_BACKWARD
        const wide x = to_wide(saved[j]);
#else
        const wide x = g;
#endif
        out_buf[j] = to_stored(x > 0 ? g : g * slope);
#else
        const wide g = in_buf[j];
#if LEAKY_BACKWARD
        const wide x = saved[j];
#else
        const wide x = g;
#endif
        out_buf[j] = x > 0 ? g : g * slope;
#endif
      }
      for (uint j = 0; j < m; ++j) dst[start + done + j] = out_buf[j];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

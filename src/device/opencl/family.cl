// The rest of leaky/family.h on the device, with the article's kernel
// structure (leaky_relu.cl's: a work-group per core, its range and tiles
// from the planner's leaky_tiling in device memory, tiles copied into
// local memory with async_work_group_copy, double-buffered, computed in the
// compute type, copied back). Each element is computed as
// include/leaky/reference.hpp defines it, operation for operation, so the
// results equal the CPU library's bit for bit (ELU: within the bound the
// CPU kernels meet against the same reference). Built per storage type
// (-D LEAKY_DTYPE as leaky_relu.cl), direction (-D LEAKY_BACKWARD) and op
// (-D LEAKY_OP: 1 ReLU, 2 ELU, 3 PReLU, 4 RReLU, 5 bias_act, 6 bias_act
// with dropout); -D LEAKY_HAS_FP64=1 where the device has cl_khr_fp64 (f32
// ELU then takes expm1 and exp in double, rounded once, as the reference).
//
// What is not a tile stream goes straight to global memory: the
// per-channel operand (PReLU's weight, bias_act's bias: a few values, read
// where used), dropout's keep decisions (a byte per element: the host packs
// them into the mask's bits, which no two cores could write safely at a
// tile edge), RReLU's noise and PReLU's dweight terms (summed by the host
// in double in the library's order, so dweight is the CPU's to the bit).
#include "leaky/device_tiling.h"

#pragma OPENCL FP_CONTRACT OFF

#ifndef LEAKY_BACKWARD
#define LEAKY_BACKWARD 0
#endif
#ifndef LEAKY_HAS_FP64
#define LEAKY_HAS_FP64 0
#endif
#if LEAKY_DTYPE == 1 || LEAKY_HAS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

#if LEAKY_DTYPE == 1
typedef double store_t;
typedef double compute_t;
#define WIDEN(buf, i) ((buf)[i])
#define NARROW_TO(v, buf, i) ((buf)[i] = (v))
#define WIDEN_G(buf, i) ((buf)[i])
#define NARROW_G(v, buf, i) ((buf)[i] = (v))
#define SCALAR(p, k) as_double((p).scalar_f64_bits[k])
#elif LEAKY_DTYPE == 2
typedef ushort store_t;
typedef float compute_t;
#define WIDEN(buf, i) vload_half((i), (const __local half*)(buf))
#define NARROW_TO(v, buf, i) vstore_half_rte((v), (i), (__local half*)(buf))
#define WIDEN_G(buf, i) vload_half((i), (const __global half*)(buf))
#define NARROW_G(v, buf, i) vstore_half_rte((v), (i), (__global half*)(buf))
#define SCALAR(p, k) ((p).scalar[k])
#elif LEAKY_DTYPE == 3
typedef ushort store_t;
typedef float compute_t;
#define WIDEN(buf, i) as_float((uint)(buf)[i] << 16)
#define WIDEN_G(buf, i) as_float((uint)(buf)[i] << 16)
// Round to nearest even; NaN stays NaN, quieted (as leaky::bfloat16).
inline ushort bf16_from_float(float v) {
  const uint u = as_uint(v);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u | 0x00400000u) >> 16);
  return (ushort)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#define NARROW_TO(v, buf, i) ((buf)[i] = bf16_from_float(v))
#define NARROW_G(v, buf, i) ((buf)[i] = bf16_from_float(v))
#define SCALAR(p, k) ((p).scalar[k])
#else
typedef float store_t;
typedef float compute_t;
#define WIDEN(buf, i) ((buf)[i])
#define NARROW_TO(v, buf, i) ((buf)[i] = (v))
#define WIDEN_G(buf, i) ((buf)[i])
#define NARROW_G(v, buf, i) ((buf)[i] = (v))
#define SCALAR(p, k) ((p).scalar[k])
#endif

#define OP_RELU 1
#define OP_ELU 2
#define OP_PRELU 3
#define OP_RRELU 4
#define OP_BIAS_ACT 5
#define OP_BIAS_ACT_DROPOUT 6

// The layout the kernel sees, for the host to compare with its own.
#define LEAKY_OFFSET(s, f) ((ulong)((__private char*)&(s).f - (__private char*)&(s)))
__kernel void leaky_device_family_probe(__global ulong* out) {
  leaky_device_family_params p;
  out[0] = sizeof(leaky_device_family_params);
  out[1] = LEAKY_OFFSET(p, scalar);
  out[2] = LEAKY_OFFSET(p, channels);
}

// ---- the random stream (leaky.h, reference.hpp's philox4x32_10)
inline uint stream_word(ulong seed, ulong s) {
  const ulong counter = (s / 64) * 16 + s % 16;
  uint c0 = (uint)counter, c1 = (uint)(counter >> 32), c2 = 0, c3 = 0;
  uint k0 = (uint)seed, k1 = (uint)(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    const ulong p0 = (ulong)0xD2511F53u * c0, p1 = (ulong)0xCD9E8D57u * c2;
    const uint n0 = (uint)(p1 >> 32) ^ c1 ^ k0, n1 = (uint)p1;
    const uint n2 = (uint)(p0 >> 32) ^ c3 ^ k1, n3 = (uint)p0;
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
  }
  const uint word = (uint)((s % 64) / 16);
  return word == 0 ? c0 : word == 1 ? c1 : word == 2 ? c2 : c3;
}

inline uint stream_half_word(ulong seed, ulong s) {
  const uint word = stream_word(seed, (s / 128) * 64 + s % 64);
  return s % 128 < 64 ? (word & 0xFFFFu) : (word >> 16);
}

inline compute_t rrelu_slope(uint word, compute_t low, compute_t high) {
  const compute_t range = high - low;
#if LEAKY_DTYPE == 1
  const compute_t u = (compute_t)word * 0x1p-32;
#else
  const compute_t u = (compute_t)(word >> 8) * 0x1p-24f;
#endif
  return low + u * range;
}

// ---- ELU's transcendentals (reference.hpp's expm1_of, exp_of)
inline compute_t expm1_of(compute_t t) {
#if LEAKY_DTYPE != 1 && LEAKY_HAS_FP64
  return (compute_t)expm1((double)t);
#else
  return expm1(t);
#endif
}
inline compute_t exp_of(compute_t t) {
#if LEAKY_DTYPE != 1 && LEAKY_HAS_FP64
  return (compute_t)exp((double)t);
#else
  return exp(t);
#endif
}

// ---- bias_act (reference.hpp's bias_act_activate, _value, _backward_compute)
inline compute_t activate(compute_t z, uint act, compute_t alpha) {
  if (act == 2) return z > 0 ? z : z * alpha;  // LEAKY_ACT_LRELU
  if (act == 1) return z < 0 ? (compute_t)0 : z;  // LEAKY_ACT_RELU
  return z;
}

inline compute_t bias_act_value(compute_t z, __global const leaky_device_family_params* p) {
  const compute_t alpha = SCALAR(*p, 0), gain = SCALAR(*p, 1), clamp = SCALAR(*p, 2);
  compute_t u = activate(z, p->activation, alpha) * gain;
  if (p->has_clamp) {
    const compute_t high = clamp, low = -clamp;
    u = u > high ? high : u < low ? low : u;
  }
  return u;
}

inline compute_t bias_act_grad(compute_t g, compute_t z,
                               __global const leaky_device_family_params* p) {
  const compute_t alpha = SCALAR(*p, 0), gain = SCALAR(*p, 1), clamp = SCALAR(*p, 2);
  if (p->has_clamp) {
    const compute_t u = activate(z, p->activation, alpha) * gain;
    if (!(u >= -clamp && u <= clamp)) g = 0;
  }
  g = g * gain;
  if (p->activation == 2) return z > 0 ? g : g * alpha;
  if (p->activation == 1) return activate(z, 1, alpha) <= 0 ? (compute_t)0 : g;
  return g;
}

inline compute_t dropout_scale(__global const leaky_device_family_params* p) {
  return (compute_t)1 / SCALAR(*p, 3);
}

#if LEAKY_BACKWARD
#define IN_STREAMS 2
#else
#define IN_STREAMS 1
#endif

// One core: its tiles through `buffer_count` slots of local memory, as
// leaky_relu_tiles. src0 is x (forward) or dy (backward), src1 the saved x
// (backward); channel_operand is PReLU's weight or bias_act's bias (has_bias
// 0: none, -0 used, as the CPU's); keep_in the backward's keep bytes;
// noise, keep_out and terms the side outputs of the ops that have them.
__kernel void leaky_family_tiles(__global const leaky_tiling* tiling,
                                 __global const leaky_device_family_params* params,
                                 __global const store_t* src0, __global const store_t* src1,
                                 __global const store_t* channel_operand, uint has_operand,
                                 __global const uchar* keep_in, __global store_t* dst,
                                 __global store_t* noise, __global uchar* keep_out,
                                 __global compute_t* terms, __local store_t* in_buf,
                                 __local store_t* out_buf) {
  const leaky_tiling t = *tiling;
  const uint core = get_group_id(0);
  const uint lid = get_local_id(0), lsize = get_local_size(0);
  const uint tile = (uint)t.tile_length;
  const uint buffers = t.buffer_count;
  const ulong tiles = leaky_tiling_tile_count(&t, core);
  const ulong inner = params->inner, channels = params->channels;
  __local store_t* x_buf = in_buf + (IN_STREAMS - 1) * buffers * tile;
  event_t in_events[2], out_events[2];
#define COPY_IN(i, s)                                                                         \
  do {                                                                                        \
    ulong from, count;                                                                        \
    leaky_tiling_tile_range(&t, core, (i), &from, &count);                                    \
    in_events[s] = async_work_group_copy(in_buf + (s) * tile, src0 + from, count, 0);         \
    if (IN_STREAMS == 2)                                                                      \
      in_events[s] = async_work_group_copy(x_buf + (s) * tile, src1 + from, count, in_events[s]); \
  } while (0)
  if (tiles > 0) COPY_IN(0, 0);
  for (ulong i = 0; i < tiles; ++i) {
    const uint slot = i % buffers;
    ulong first, length;
    leaky_tiling_tile_range(&t, core, i, &first, &length);
    const uint count = (uint)length;
    if (buffers == 2 && i + 1 < tiles) COPY_IN(i + 1, (i + 1) % 2);
    wait_group_events(1, &in_events[slot]);
    if (i >= buffers) wait_group_events(1, &out_events[slot]);
    for (uint j = lid; j < count; j += lsize) {
      const ulong at = first + j;
      const compute_t a = WIDEN(in_buf + slot * tile, j);  // x, or dy
      const compute_t v = LEAKY_BACKWARD ? WIDEN(x_buf + slot * tile, j) : a;
      compute_t w = 0;
#if LEAKY_OP == OP_PRELU || LEAKY_OP == OP_BIAS_ACT || LEAKY_OP == OP_BIAS_ACT_DROPOUT
      const ulong c = (at / inner) % channels;
      w = has_operand ? WIDEN_G(channel_operand, c) : (compute_t)-0.0f;
#endif
      compute_t r;
#if LEAKY_OP == OP_RELU
      r = LEAKY_BACKWARD ? (v <= 0 ? (compute_t)0 : a) : (v < 0 ? (compute_t)0 : v);
#elif LEAKY_OP == OP_ELU
      {
        const compute_t alpha = SCALAR(*params, 0), scale = SCALAR(*params, 1);
        const compute_t is = SCALAR(*params, 2), coef = alpha * scale;
#if LEAKY_BACKWARD
        r = v <= 0 ? a * is * coef * exp_of(v * is) : a * scale;
#else
        // expm1(-0) is +0 here, as the CPU kernels' expm1 gives it (and
        // PyTorch): the reference's -0 is within its bound, not its sign.
        const compute_t e = expm1_of(v * is);
        r = v <= 0 ? (e == 0 ? (compute_t)0 : e) * coef : v * scale;
#endif
      }
#elif LEAKY_OP == OP_PRELU
#if LEAKY_BACKWARD
      r = v > 0 ? a : w * a;
      terms[at] = v > 0 ? (compute_t)0 : v * a;
#else
      r = v > 0 ? v : w * v;
#endif
#elif LEAKY_OP == OP_RRELU
      if (params->training) {
        const compute_t s =
            rrelu_slope(stream_word(params->seed, params->offset + at), SCALAR(*params, 0),
                        SCALAR(*params, 1));
#if LEAKY_BACKWARD
        r = v <= 0 ? a * s : a;
#else
        r = v <= 0 ? v * s : v;
        NARROW_G(v <= 0 ? s : (compute_t)1, noise, at);
#endif
      } else {
        const compute_t s = SCALAR(*params, 2);
        r = v > 0 ? a : a * s;
      }
#elif LEAKY_OP == OP_BIAS_ACT
      r = LEAKY_BACKWARD ? bias_act_grad(a, v + w, params) : bias_act_value(v + w, params);
#elif LEAKY_OP == OP_BIAS_ACT_DROPOUT
#if LEAKY_BACKWARD
      r = bias_act_grad(a * (keep_in[at] ? dropout_scale(params) : (compute_t)0), v + w, params);
#else
      {
        const uchar kept = stream_half_word(params->seed, params->offset + at) >= params->threshold;
        keep_out[at] = kept;
        r = bias_act_value(v + w, params) * (kept ? dropout_scale(params) : (compute_t)0);
      }
#endif
#endif
      NARROW_TO(r, out_buf + slot * tile, j);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    out_events[slot] = async_work_group_copy(dst + first, out_buf + slot * tile, count, 0);
    if (buffers == 1 && i + 1 < tiles) COPY_IN(i + 1, 0);
  }
  for (uint s = 0; s < buffers && s < tiles; ++s) wait_group_events(1, &out_events[s]);
}

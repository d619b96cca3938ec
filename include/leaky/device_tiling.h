/* leaky device tiling: what the OpenCL kernel reads, defined once for the
 * host (C/C++) and the kernel (OpenCL C; src/device/opencl/leaky_relu.cl and
 * a caller's kernel include this file, which the host puts in place of the
 * #include together with leaky/tiling.h).
 *
 * The kernel gets two structs in device memory:
 *   - the planner's leaky_tiling (leaky/tiling.h), the same plan the CPU
 *     driver and the tools read; its inline functions give every core its
 *     range and tiles, so host and kernel cannot disagree;
 *   - leaky_device_params, the op's scalars.
 * The slope is a kernel argument of its own, not part of the plan, as on the
 * CPU. It stays in a struct the host writes (rather than a scalar argument)
 * because that is the article's interface and its troubleshooting table's
 * struct-layout fault: a kernel that declares the struct by hand with the
 * padding on the other side reads the slope from the padding. Both sides
 * check the layout (the LEAKY_DEVICE_PARAMS_* offsets below, and a probe
 * kernel the host runs for both structs).
 */
#ifndef LEAKY_DEVICE_TILING_H_
#define LEAKY_DEVICE_TILING_H_

#include "leaky/tiling.h"

typedef struct leaky_device_params {
  float negative_slope;      /* rounded once to f32 (f64 kernels: the double below) */
  uint32_t reserved;         /* zero */
  double negative_slope_f64;
} leaky_device_params;

#define LEAKY_DEVICE_PARAMS_SIZE 16
#define LEAKY_DEVICE_PARAMS_OFFSET_SLOPE 0
#define LEAKY_DEVICE_PARAMS_OFFSET_SLOPE_F64 8

/* The rest of leaky/family.h on the device (src/device/opencl/family.cl):
 * each op's scalars, in the order of leaky/family.h's row, once rounded to
 * f32 (the f32, f16 and bf16 kernels compute in f32) and once as the bits
 * of the double (f64 kernels; bits, so that a device without fp64 can
 * still read the struct):
 *   ELU:      alpha, scale, input_scale
 *   RReLU:    lower, upper, (lower + upper) / 2 (the evaluation slope)
 *   bias_act: alpha, gain, clamp, 1 - p (dropout)
 * and the geometry and stream of the ops that have them. */
typedef struct leaky_device_family_params {
  uint64_t scalar_f64_bits[4];
  float scalar[4];
  uint64_t seed, offset;      /* RReLU in training, dropout: the stream's seed and first word */
  uint64_t inner, channels;   /* PReLU, bias_act: x viewed as [outer, channels, inner] */
  uint32_t activation;        /* bias_act: leaky_activation */
  uint32_t training;          /* RReLU: 0 evaluation */
  uint32_t threshold;         /* dropout: kept when the 16 random bits are >= it */
  uint32_t has_clamp;         /* bias_act: clamp >= 0 */
} leaky_device_family_params;

#define LEAKY_DEVICE_FAMILY_PARAMS_SIZE 96
#define LEAKY_DEVICE_FAMILY_PARAMS_OFFSET_SCALAR 32
#define LEAKY_DEVICE_FAMILY_PARAMS_OFFSET_CHANNELS 72

#endif /* LEAKY_DEVICE_TILING_H_ */

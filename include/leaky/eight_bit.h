/* leaky: the activation family on 8-bit data (plain C99, as leaky.h).
 *
 * Four 8-bit types, one byte per element:
 *   LEAKY_QU8, LEAKY_QS8  quantized uint8 / int8: a byte q stands for the real
 *                         value scale * (q - zero_point), per tensor;
 *   LEAKY_FP8_E4M3        OCP 8-bit float E4M3 (bias 7, largest finite 448,
 *                         no infinity, NaN = S.1111.111, subnormals);
 *   LEAKY_FP8_E5M2        OCP 8-bit float E5M2 (bias 15, largest finite
 *                         57344, IEEE-like: S.11111.00 is infinity,
 *                         S.11111.{01,10,11} are NaN, subnormals).
 *
 * With 256 possible inputs every op is a table: a call builds the 256
 * outputs once (per channel for PReLU), exactly, and the kernel is a byte
 * lookup. The results are correctly rounded for every input:
 *
 * Quantized (qu8, qs8): with v = input.scale * (x - input.zero_point) the
 * real input value and f the op's function on reals,
 *   y = clamp(output.zero_point + round(f(v) / output.scale),
 *             output_min, output_max)
 * where round is to nearest, ties to even (PyTorch's quantizer), taken of
 * the exact real value (the scales and the slope are the doubles given; no
 * intermediate rounding). LeakyReLU, ReLU, PReLU (f32 weights) and RReLU in
 * evaluation (slope (lower + upper) / 2, computed in double) are exact for
 * every parameter. ELU's f involves expm1: its table is computed in 64-bit
 * long double and rounded from that value: exact unless f(v) / scale lies
 * within about 2^-60 (relative) of a rounding tie (eight_bit_test's grid puts
 * 13,776 quantized and 8,352 fp8 outputs in that band; every one matched a
 * 400-bit reference). Quantized data has no backward.
 *
 * fp8: the input decodes exactly; y = round(f(x)) to the type, to nearest
 * with ties to even, from the exact real f(x), with the slope (ELU: alpha,
 * scale, input_scale) rounded once to f32 (as the float family's f16/bf16:
 * leaky.h) and ELU's expm1 taken in long double as above. Overflow follows
 * `saturate`: 1 gives the largest finite value of the result's sign, also
 * for any infinite E5M2 result, one the op passes through included (the
 * output then never holds an infinity); 0 gives OCP's non-saturating
 * result: infinity (E5M2) or NaN (E4M3). A value
 * rounds to overflow when it reaches the largest finite value plus half its
 * ulp and would round away from it (E4M3: above 464; E5M2: from 61440). A
 * NaN input gives its own byte back (sign and payload kept); a NaN made by
 * the op (E5M2: -inf * 0) is S.11111.10. -0 is kept where the float ops
 * keep it (LeakyReLU: -0 * slope; ReLU: -0). leaky_fp8_from_f32 maps NaN to
 * S.1111.111 (E4M3) or S.11111.10 (E5M2) with the input's sign.
 *
 * Pointers, in place, options, n == 0 and errors are as in leaky.h (an
 * output may equal its input exactly; any error leaves outputs untouched).
 */
#ifndef LEAKY_EIGHT_BIT_H_
#define LEAKY_EIGHT_BIT_H_

#include "leaky/leaky.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum leaky_type8 LEAKY_ENUM_INT {
  LEAKY_QU8 = 0,
  LEAKY_QS8 = 1,
  LEAKY_FP8_E4M3 = 2,
  LEAKY_FP8_E5M2 = 3
} leaky_type8;

/* One tensor's quantization: real = scale * (q - zero_point). scale must be
 * finite and > 0; zero_point within the type's range (qu8: 0..255, qs8:
 * -128..127). */
typedef struct leaky_quantization {
  double scale;
  int32_t zero_point;
} leaky_quantization;

/* The 8-bit type of a call and its encoding parameters.
 *   qu8/qs8: input and output quantization; output_min <= output_max clamp
 *            the quantized result (within the type's range; the full range
 *            for no clamp, which leaky_q8_params_init sets).
 *   fp8:     saturate (0 or 1, above); input, output and the clamp are
 *            ignored. */
typedef struct leaky_q8_params {
  leaky_type8 type;
  leaky_quantization input;
  leaky_quantization output;
  int32_t output_min, output_max;
  int saturate;
} leaky_q8_params;

/* Parameters for `type` with scale 1, zero point 0 (qu8: 0 too), the full
 * output range and saturate = 1. */
LEAKY_API leaky_q8_params leaky_q8_params_init(leaky_type8 type);

/* Forward ops: y = f(x) per the rules above. */
LEAKY_API leaky_status leaky_q8_leaky_relu_forward(const leaky_q8_params* q, size_t n,
                                                   const void* x, void* y,
                                                   double negative_slope,
                                                   const leaky_options* opts);
LEAKY_API leaky_status leaky_q8_plain_relu_forward(const leaky_q8_params* q, size_t n,
                                                   const void* x, void* y,
                                                   const leaky_options* opts);
/* RReLU in evaluation: LeakyReLU with slope (lower + upper) / 2. */
LEAKY_API leaky_status leaky_q8_rrelu_eval_forward(const leaky_q8_params* q, size_t n,
                                                   const void* x, void* y, double lower,
                                                   double upper, const leaky_options* opts);
/* ELU as leaky.h's: f(v) = v <= 0 ? expm1(v * input_scale) * alpha * scale : v * scale. */
LEAKY_API leaky_status leaky_q8_elu_forward(const leaky_q8_params* q, size_t n, const void* x,
                                            void* y, double alpha, double scale,
                                            double input_scale, const leaky_options* opts);
/* PReLU over [outer, channels, inner] (leaky.h): f(v) = v > 0 ? v : weight[c] * v,
 * one table per channel; weights (f32) must be finite. */
LEAKY_API leaky_status leaky_q8_prelu_forward(const leaky_q8_params* q, size_t outer,
                                              size_t channels, size_t inner, const void* x,
                                              const float* weight, void* y,
                                              const leaky_options* opts);

/* The conv epilogue: bias_act on the int32 accumulators of an int8
 * convolution or matmul, requantized to qu8/qs8 in one pass. Over the
 * [outer, channels, inner] view (leaky.h; c the channel of element i):
 *   k    = (int64) acc[i] + (bias ? bias[c] : 0)
 *   M    = k >= 0 ? positive_multiplier[c] : negative_multiplier[c]
 *   y[i] = clamp(output_zero_point + round_half_even(k * M), output_min, output_max)
 * where k * M is the exact real product of the integer and the double (no
 * intermediate rounding; |k| < 2^32 + 2^31): exact for every input. The
 * multipliers are the caller's (as XNNPACK's and TFLite's requantization
 * take a precomputed scale), one per channel, or multipliers[0] for every
 * channel when per_channel is 0; they fold the real scales:
 *   positive = input_scale[c] * gain / output_scale
 *   negative = positive * slope   (LeakyReLU's; ReLU: 0; linear: 1)
 * leaky_q8_bias_act_multipliers computes them; the one rounding of the
 * epilogue's real scales to doubles happens there, once per multiplier.
 * The name: this is leaky_bias_act_forward (bias, activation, gain, clamp)
 * on quantized data, and every leaky_q8_ op requantizes its output. */
typedef struct leaky_q8_bias_act_params {
  leaky_type8 type;           /* y's: LEAKY_QU8 or LEAKY_QS8 */
  int32_t output_zero_point;  /* within the type's range */
  int32_t output_min, output_max; /* output_min <= output_max within the type's range */
  int per_channel;            /* 1: `channels` multipliers each; 0: one */
} leaky_q8_bias_act_params;

/* Zero point 0, the full range of `type`, per_channel = 1. */
LEAKY_API leaky_q8_bias_act_params leaky_q8_bias_act_params_init(leaky_type8 type);

/* y (outer * channels * inner bytes of params->type) from acc (as many
 * int32); bias (`channels` int32) may be null. The multipliers must be
 * finite (negative is allowed). acc and y must not overlap. */
LEAKY_API leaky_status leaky_q8_bias_act_forward(const leaky_q8_bias_act_params* params,
                                                 size_t outer, size_t channels, size_t inner,
                                                 const int32_t* acc, const int32_t* bias,
                                                 const double* positive_multiplier,
                                                 const double* negative_multiplier, void* y,
                                                 const leaky_options* opts);

/* Fills count multipliers from real scales: for c < count,
 *   positive_multiplier[c] = input_scale[c] * gain / output_scale
 *   negative_multiplier[c] = input_scale[c] * gain * s / output_scale
 * with s = alpha (LEAKY_ACT_LRELU), 0 (LEAKY_ACT_RELU) or 1 (LEAKY_ACT_LINEAR),
 * each evaluated in long double and rounded once to double. input_scale[c]
 * (a convolution's input scale times its weight scale of channel c) and
 * output_scale must be finite and > 0; gain and alpha finite. */
LEAKY_API leaky_status leaky_q8_bias_act_multipliers(size_t count, const double* input_scale,
                                                     double gain, leaky_activation activation,
                                                     double alpha, double output_scale,
                                                     double* positive_multiplier,
                                                     double* negative_multiplier);

/* Backward, fp8 only (training); quantized types give LEAKY_ERROR_UNSUPPORTED.
 * dx is rounded once from the exact real dy * f'(x) as the forward rounds
 * (saturate; a NaN dy gives its own byte).
 * dx = saved > 0 ? dy : round(dy * slope), saved the forward input (or its
 * result when saved_is_result, then negative_slope >= 0), as leaky.h. */
LEAKY_API leaky_status leaky_q8_leaky_relu_backward(const leaky_q8_params* q, size_t n,
                                                    const void* dy, const void* saved,
                                                    int saved_is_result, void* dx,
                                                    double negative_slope,
                                                    const leaky_options* opts);
/* dx = saved <= 0 ? 0 : dy (NaN saved: dy), as leaky_plain_relu_backward. */
LEAKY_API leaky_status leaky_q8_plain_relu_backward(const leaky_q8_params* q, size_t n,
                                                    const void* dy, const void* saved, void* dx,
                                                    const leaky_options* opts);

/* RReLU in evaluation: leaky_q8_leaky_relu_backward from the input with
 * slope (lower + upper) / 2 (as leaky_rrelu_backward in evaluation). */
LEAKY_API leaky_status leaky_q8_rrelu_eval_backward(const leaky_q8_params* q, size_t n,
                                                    const void* dy, const void* x, void* dx,
                                                    double lower, double upper,
                                                    const leaky_options* opts);
/* ELU, as leaky_elu_backward on the exact values of alpha, scale and
 * input_scale rounded once to f32 (alpha * scale their exact product):
 * from the input (saved = x),
 *   dx = x <= 0 ? round(dy * input_scale * alpha * scale * exp(x * input_scale))
 *               : round(dy * scale);
 * from the result (saved_is_result, then alpha >= 0; saved = y),
 *   dx = y <= 0 ? round(dy * input_scale * (y + alpha * scale)) : round(dy * scale).
 * Each dx is rounded once from the exact real value, except that exp is
 * taken in long double as the forward's expm1 (exact unless the value lies
 * within about 2^-60, relative, of a rounding tie; at x * input_scale = 0
 * it is rational and exact). A NaN dy gives its own byte; a NaN saved
 * takes the dy * scale side (comparisons are false, as leaky.h's). Every
 * call builds (or finds in a per-thread cache of two parameter sets) a
 * 64 KiB table of all (saved, dy) pairs, then gathers a byte per element;
 * a build measured 2 ms (from the input) and 13 ms (from the result) on a
 * busy machine (docs/semantics.md). */
LEAKY_API leaky_status leaky_q8_elu_backward(const leaky_q8_params* q, size_t n, const void* dy,
                                             const void* saved, int saved_is_result, void* dx,
                                             double alpha, double scale, double input_scale,
                                             const leaky_options* opts);
/* PReLU over [outer, channels, inner]: dx = x > 0 ? dy : round(weight[c] * dy)
 * (weights f32, finite); dweight (may be NULL; f32, `channels` of them):
 * for each channel the sum over every outer and inner position of
 * (x > 0 ? 0 : x * dy), taken exactly and rounded once to f32 (to nearest,
 * ties to even): the same bits for any thread count, order or tiling. A
 * NaN term or infinities of both signs give NaN, one sign of infinity
 * gives it. dx may be dy or x (in place); dweight must not overlap
 * anything. */
LEAKY_API leaky_status leaky_q8_prelu_backward(const leaky_q8_params* q, size_t outer,
                                               size_t channels, size_t inner, const void* dy,
                                               const void* x, const float* weight, void* dx,
                                               float* dweight, const leaky_options* opts);

/* fp8 conversions, correctly rounded as above (type: LEAKY_FP8_E4M3 or
 * LEAKY_FP8_E5M2). to_f32 is exact. */
LEAKY_API leaky_status leaky_fp8_from_f32(leaky_type8 type, size_t n, const float* x,
                                          uint8_t* y, int saturate);
LEAKY_API leaky_status leaky_fp8_to_f32(leaky_type8 type, size_t n, const uint8_t* x, float* y);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LEAKY_EIGHT_BIT_H_ */

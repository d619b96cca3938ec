/* leaky: exact, tiled, multi-core LeakyReLU kernels.
 *
 * The stable C ABI. Everything here is plain C99 so that any language with an
 * FFI can call it; no SIMD or threading detail leaks through.
 *
 * Semantics (bit-exact for every dtype, every SIMD target, every thread count):
 *   forward:  y  = x > 0 ? x : x * negative_slope
 *   backward: dx = saved > 0 ? dy : dy * negative_slope
 *             where `saved` is the forward input, or the forward result when
 *             saved_is_result != 0 (then negative_slope must be >= 0, because a
 *             negative slope flips signs and the input's sign is lost).
 * f32, f16 and bf16 are computed in f32 with the slope rounded once to f32;
 * f16/bf16 results are rounded to nearest-even from that f32 value (NaN stays
 * NaN). f64 is computed in f64. NaN propagates, -0 gives -0 * slope, and
 * subnormal inputs and outputs are preserved even if the calling thread has
 * set FTZ/DAZ: the library runs its kernels with IEEE defaults and restores
 * the caller's floating-point state.
 *
 * Memory: f16/bf16 are IEEE binary16 / bfloat16 bit patterns in uint16_t
 * storage. Pointers need no particular alignment. An output may equal an input
 * exactly (in-place); any other overlap is an error. n == 0 is a no-op that
 * accepts null pointers. Any error leaves every output byte untouched.
 */
#ifndef LEAKY_LEAKY_H_
#define LEAKY_LEAKY_H_

#include <stddef.h>
#include <stdint.h>

/* The version of this header; leaky_version() gives the library's. While the
 * major version is 0, a new minor version may change the ABI (the shared
 * library's soname carries major.minor). CMakeLists.txt reads these lines. */
#define LEAKY_VERSION_MAJOR 0
#define LEAKY_VERSION_MINOR 3
#define LEAKY_VERSION_PATCH 0

#if defined(_WIN32)
#define LEAKY_API __declspec(dllexport)
#else
#define LEAKY_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The most threads a call may ask for (leaky_options.num_threads,
 * leaky_executor.max_threads): the planner's core limit (leaky_plan_request's
 * max_cores). A larger count is refused with LEAKY_ERROR_INVALID_OPTIONS. */
#define LEAKY_MAX_THREADS 65536

/* The enums a caller passes in have int as their underlying type in C++: a C
 * caller may pass any int (the library refuses the ones that are not
 * enumerators), and in C++ even reading a value outside an enum's range is
 * undefined unless its underlying type is fixed. The size and the calling
 * convention are those of C's enum. */
#ifdef __cplusplus
#define LEAKY_ENUM_INT : int
#else
#define LEAKY_ENUM_INT
#endif

typedef enum leaky_dtype LEAKY_ENUM_INT {
  LEAKY_F32 = 0,
  LEAKY_F64 = 1,
  LEAKY_F16 = 2,
  LEAKY_BF16 = 3
} leaky_dtype;

typedef enum leaky_status {
  LEAKY_OK = 0,
  LEAKY_ERROR_NULL_POINTER = 1,          /* a null pointer with n > 0 */
  LEAKY_ERROR_INVALID_DTYPE = 2,         /* not one of leaky_dtype */
  LEAKY_ERROR_INVALID_PARAMETER = 3,     /* e.g. a NaN or infinite slope */
  LEAKY_ERROR_OVERLAP = 4,               /* an output partly overlaps an input */
  LEAKY_ERROR_INVALID_OPTIONS = 5,       /* num_threads not in [0, LEAKY_MAX_THREADS],
                                            stream_stores not -1/0/1, an executor with
                                            nothing to run on or max_threads not in
                                            [1, LEAKY_MAX_THREADS] */
  LEAKY_ERROR_UNSUPPORTED = 6,           /* backward from the result with a negative slope */
  LEAKY_ERROR_SIZE = 7,                  /* n bytes do not fit the address space; size mismatch */
  LEAKY_ERROR_INTERNAL = 8,              /* e.g. the thread pool could not be created */
  LEAKY_ERROR_DEVICE = 9                 /* an OpenCL device call failed or no device (leaky/opencl.h) */
} leaky_status;

/* Threads the caller owns (as XNNPACK's xnn_run_operator(op, threadpool)).
 * A call splits its work into tasks and hands them to the executor instead of
 * the library's own pool:
 *   - parallel_for(executor_context, task_count, task, task_context) must run
 *     task(task_context, i) once for every i in [0, task_count) and return
 *     when all have run; tasks may run on any thread, in any order,
 *     concurrently (PyTorch's at::parallel_for, OpenMP, TBB, ...);
 *   - or, with parallel_for NULL, `pthreadpool` is a pthreadpool_t to run on
 *     (pthreadpool_parallelize_1d).
 * max_threads (1 to LEAKY_MAX_THREADS) is how many tasks may usefully run at once; with
 * num_threads = 0 a call plans for that many. Inside every task the library
 * clears FTZ/DAZ (ARM: FZ) and restores the thread's state afterwards.
 * Results are bit-identical for every executor, thread count and task order.
 * The executor must outlive the call only. */
typedef void (*leaky_task)(void* task_context, size_t index);
typedef struct leaky_executor {
  void (*parallel_for)(void* executor_context, size_t task_count, leaky_task task,
                       void* task_context);
  void* executor_context;
  void* pthreadpool; /* a pthreadpool_t, used when parallel_for is NULL */
  int max_threads;
} leaky_executor;

/* Version 0.2 added `executor` (ABI: the struct grew, hence the soname
 * libleaky.so.0.2). Sources that built against 0.1 build unchanged: an
 * aggregate initializer that names fewer fields leaves it NULL (GCC's
 * -Wmissing-field-initializers then warns in C++). */
typedef struct leaky_options {
  int num_threads;   /* 0 = library default (all cores, or the executor's max_threads);
                        1 = calling thread only; at most LEAKY_MAX_THREADS */
  int stream_stores; /* -1 = automatic (non-temporal stores for calls
                        moving 16 MiB or more, except in place, per-channel
                        rows under 4096 elements (but the int32 epilogue's
                        channels-last rows of up to 512 channels, which run
                        as one stream) and the compute-bound ops: ELU,
                        RReLU in training, dropout's forward),
                        0 = never, 1 = always */
  const leaky_executor* executor; /* NULL = the library's own pool */
} leaky_options;     /* NULL options = all defaults */

LEAKY_API leaky_status leaky_relu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                          double negative_slope, const leaky_options* opts);

LEAKY_API leaky_status leaky_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                           const void* saved, int saved_is_result, void* dx,
                                           double negative_slope, const leaky_options* opts);

/* ReLU, as PyTorch's torch.relu: y = x < 0 ? 0 : x (NaN propagates, -0 stays
 * -0). Backward: dx = saved <= 0 ? 0 : dy, where saved is the forward input or
 * result (the same answer from either). Computed like LeakyReLU (half types in
 * f32); bit-exact. */
LEAKY_API leaky_status leaky_plain_relu_forward(leaky_dtype dtype, size_t n, const void* x,
                                                void* y, const leaky_options* opts);
LEAKY_API leaky_status leaky_plain_relu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                                 const void* saved, void* dx,
                                                 const leaky_options* opts);

/* ELU, as PyTorch's elu: y = x <= 0 ? expm1(x * input_scale) * (alpha * scale)
 * : x * scale, with alpha, scale, input_scale rounded once to the compute type
 * and alpha * scale multiplied in it. Backward from the input:
 * dx = x <= 0 ? dy * input_scale * (alpha * scale) * exp(x * input_scale)
 *            : dy * scale;
 * from the result (saved_is_result, needs alpha >= 0):
 * dx = y <= 0 ? dy * input_scale * (y + alpha * scale) : dy * scale.
 * expm1 and exp are not bit-exact; the bounds measured against a correctly
 * rounded reference are in leaky/reference.hpp. All parameters must be
 * finite. */
LEAKY_API leaky_status leaky_elu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                         double alpha, double scale, double input_scale,
                                         const leaky_options* opts);
LEAKY_API leaky_status leaky_elu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                          const void* saved, int saved_is_result, void* dx,
                                          double alpha, double scale, double input_scale,
                                          const leaky_options* opts);

/* Fused bias + activation + gain + clamp, as StyleGAN's bias_act and
 * ops-nn's FusedBiasLeakyRelu: x is viewed as [outer, channels, inner] (the
 * channel axis and the axes after it: NCHW with the channel axis 1 has inner
 * = H * W; channels-last has inner = 1), bias has `channels` elements (NULL:
 * no bias), and
 *   y = clamp(act(x + bias[c]) * gain, -clamp, +clamp)
 * with act = identity, ReLU (x < 0 ? 0 : x) or LeakyReLU(alpha), computed in
 * the compute type with PyTorch's operations in PyTorch's order, so f32/f64
 * results equal the unfused PyTorch sequence bit for bit (half types round
 * once, at the end). clamp < 0 means no clamp. */
typedef enum leaky_activation LEAKY_ENUM_INT {
  LEAKY_ACT_LINEAR = 0,
  LEAKY_ACT_RELU = 1,
  LEAKY_ACT_LRELU = 2
} leaky_activation;

typedef struct leaky_bias_act_params {
  leaky_activation activation;
  double alpha; /* LeakyReLU's negative slope (StyleGAN uses 0.2) */
  double gain;  /* StyleGAN uses sqrt(2) for LeakyReLU */
  double clamp; /* < 0: none; else the output is clamped to [-clamp, clamp] */
} leaky_bias_act_params;

LEAKY_API leaky_status leaky_bias_act_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                              size_t inner, const void* x, const void* bias,
                                              void* y, const leaky_bias_act_params* params,
                                              const leaky_options* opts);

/* dx: the gradient of y with respect to x (clamp passes it where
 * -clamp <= pre-clamp value <= clamp, as torch.clamp's backward); db (may be
 * NULL): the sum of dx over the outer and inner positions of each channel,
 * accumulated in double in (outer, inner) order and rounded once per channel
 * (half types: to float, then to the type), the same bits for any thread
 * count. dx may be dy or x (in place); db must not overlap anything. */
LEAKY_API leaky_status leaky_bias_act_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                               size_t inner, const void* dy, const void* x,
                                               const void* bias, void* dx, void* db,
                                               const leaky_bias_act_params* params,
                                               const leaky_options* opts);

/* PReLU, as torch.nn.functional.prelu: x viewed as [outer, channels, inner]
 * (as for bias_act: NCHW with the channel axis 1 has inner = H * W; NHWC has
 * inner = 1), weight has `channels` elements (one slope shared by every
 * element: pass channels = 1), and
 *   y = x > 0 ? x : weight[c] * x
 * computed like LeakyReLU (half types in f32); bit-exact. Weights are data:
 * they are not checked for finiteness. */
LEAKY_API leaky_status leaky_prelu_forward(leaky_dtype dtype, size_t outer, size_t channels,
                                           size_t inner, const void* x, const void* weight,
                                           void* y, const leaky_options* opts);

/* dx = x > 0 ? dy : weight[c] * dy; dweight (may be NULL): for each channel
 * the sum over every outer and inner position of (x > 0 ? 0 : x * dy), the
 * product taken in the compute type, accumulated in double in (outer, inner)
 * order and rounded once per channel (half types: to float, then to the
 * type): the same bits for any thread count. dx may be dy or x (in place);
 * dweight must not overlap anything. */
LEAKY_API leaky_status leaky_prelu_backward(leaky_dtype dtype, size_t outer, size_t channels,
                                            size_t inner, const void* dy, const void* x,
                                            const void* weight, void* dx, void* dweight,
                                            const leaky_options* opts);

/* Random streams (RReLU, dropout). Element i of a call draws the 32-bit word
 * number s = offset + i of the stream of `seed`: word (s % 64) / 16 of
 * Philox4x32-10 (Salmon et al., SC'11; the generator of PyTorch's and
 * cuRAND's GPU kernels) with key {seed & 0xffffffff, seed >> 32} and counter
 * {c & 0xffffffff, c >> 32, 0, 0}, c = (s / 64) * 16 + s % 16. The words of
 * a call therefore do not depend on the thread count, the tiling or the SIMD
 * target; a call consumes words [offset, offset + n), so the next call
 * continues at offset + n. offset + n must not exceed 2^64. */

/* RReLU, as PyTorch's rrelu_with_noise. In training, every element with
 * x <= 0 gets the slope
 *   r = lower + u * (upper - lower)   (in the compute type, no fused ops)
 * from its word w: u = (w >> 8) * 2^-24 in f32 compute, u = w * 2^-32 in
 * f64, and y = x <= 0 ? x * r : x; `noise` (may be NULL) receives
 * x <= 0 ? r : 1, rounded to the dtype. In evaluation (training == 0) y is
 * LeakyReLU with slope (lower + upper) / 2 and noise is not written.
 * lower and upper must be finite with lower <= upper. */
typedef struct leaky_rrelu_params {
  double lower;    /* PyTorch's default: 1/8 */
  double upper;    /* PyTorch's default: 1/3 */
  int training;    /* 0: evaluation */
  uint64_t seed;
  uint64_t offset; /* first stream word of this call */
} leaky_rrelu_params;

LEAKY_API leaky_status leaky_rrelu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                           void* noise, const leaky_rrelu_params* params,
                                           const leaky_options* opts);

/* dx = x <= 0 ? dy * r : dy in training, with r regenerated from (seed,
 * offset) exactly as the forward drew it (no noise tensor needed); in
 * evaluation LeakyReLU's backward with slope (lower + upper) / 2. */
LEAKY_API leaky_status leaky_rrelu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                            const void* x, void* dx,
                                            const leaky_rrelu_params* params,
                                            const leaky_options* opts);

/* bias_act followed by dropout, as F.dropout(bias_act(x, b)). Dropout draws
 * 16 bits per element: stream position s = offset + i takes the low half
 * (s % 128 < 64) or the high half of word 64 * (s / 128) + s % 64 of the
 * stream above, and element i is kept when those bits are >= ceil(p * 2^16)
 * (keep-probability 1 - p rounded up to a multiple of 2^-16: half the
 * Philox work of a word per element, which made this op compute-bound).
 * A call uses positions [offset, offset + n); the next continues at
 * offset + n. Then
 *   y = u * (kept ? 1 / (1 - p) : 0)   with u the bias_act value
 * (1 / (1 - p) computed in the compute type from 1 - p rounded to it, as
 * PyTorch's dropout; a NaN u stays NaN even when dropped, as u * 0). `mask`
 * receives one bit per element, bit i % 8 of byte i / 8 set when element i
 * is kept ((n + 7) / 8 bytes; the last byte's bits past element n - 1 are
 * the caller's and left as they were: clear the buffer first for
 * reproducible bytes, as the NumPy and PyTorch bindings do). p must be in
 * [0, 1). */
typedef struct leaky_dropout_params {
  double p;
  uint64_t seed;
  uint64_t offset; /* first stream word of this call */
} leaky_dropout_params;

LEAKY_API leaky_status leaky_bias_act_dropout_forward(
    leaky_dtype dtype, size_t outer, size_t channels, size_t inner, const void* x,
    const void* bias, void* y, uint8_t* mask, const leaky_bias_act_params* params,
    const leaky_dropout_params* dropout, const leaky_options* opts);

/* The gradients of leaky_bias_act_dropout_forward from its mask: dy is first
 * multiplied by (kept ? 1 / (1 - p) : 0), then as leaky_bias_act_backward. */
LEAKY_API leaky_status leaky_bias_act_dropout_backward(
    leaky_dtype dtype, size_t outer, size_t channels, size_t inner, const void* dy,
    const void* x, const void* bias, const uint8_t* mask, void* dx, void* db,
    const leaky_bias_act_params* params, double p, const leaky_options* opts);

/* Static text naming the status code. Never null. */
LEAKY_API const char* leaky_status_string(leaky_status s);
/* Thread-local detail of this thread's last failure ("" if none yet); valid
 * until the next failing call on the same thread. */
LEAKY_API const char* leaky_last_error(void);
/* The SIMD target that runtime dispatch chose, e.g. "AVX2" or "AVX3". */
LEAKY_API const char* leaky_simd_target(void);
/* Library version, "major.minor.patch". */
LEAKY_API const char* leaky_version(void);

/* Threads the library's own pool has started in this process (0 until a call
 * without an executor first splits its work). */
LEAKY_API int leaky_pool_threads(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LEAKY_LEAKY_H_ */

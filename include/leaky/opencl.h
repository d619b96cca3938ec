/* leaky on an OpenCL device: the article's kernel (a work-group per core,
 * local memory as the unified buffer, double-buffered async copies), planned
 * on the host by the library's planner (leaky_plan_tiling, leaky/tiling.h)
 * into the leaky_tiling that the kernel reads from device memory, beside the
 * op's parameters (leaky/device_tiling.h). Bit-identical to the CPU library for every
 * dtype: f16 and bf16 are storage only and computed in f32; f64 needs
 * cl_khr_fp64. Built when CMake finds OpenCL (LEAKY_HAS_OPENCL in the build).
 *
 * Errors as in leaky.h: a status, and leaky_last_error() with the detail (a
 * kernel build failure carries the build log). Bad arguments are refused
 * before anything is enqueued; outputs stay untouched on failure.
 */
#ifndef LEAKY_OPENCL_H_
#define LEAKY_OPENCL_H_

#include <stddef.h>
#include <stdint.h>

#include "leaky/device_tiling.h"
#include "leaky/leaky.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A context, an in-order profiling queue and the built kernels on one
 * device. Not thread-safe: one thread at a time per device. */
typedef struct leaky_cl_device leaky_cl_device;

/* The faults of the article's troubleshooting table, planted into the
 * kernel at build time (for testing diagnosis tools; 0 in production). */
typedef enum leaky_cl_fault {
  LEAKY_CL_FAULT_NONE = 0,
  LEAKY_CL_FAULT_COMPUTE_BEFORE_WAIT = 1, /* compute on the buffer before its copy-in */
  LEAKY_CL_FAULT_REMAINDER_DROPPED = 2,   /* the split forgets total % cores */
  LEAKY_CL_FAULT_SLOPE_LAYOUT = 3,        /* the kernel reads the slope at another offset */
  LEAKY_CL_FAULT_HALF_FLUSH = 4,          /* the product rounded to f16, flushed to zero */
  LEAKY_CL_FAULT_SINGLE_BUFFER = 5,       /* one buffer, the next copy-in still prefetched */
  LEAKY_CL_FAULT_SELECT_MISSING = 6,      /* y = slope * x */
  LEAKY_CL_FAULT_CORE_OFFSET = 7          /* each core's first copy-in 16 elements early */
} leaky_cl_fault;

typedef struct leaky_cl_options {
  int32_t device;       /* -1: a GPU if the ICD loader finds one, else the first device;
                           k >= 0: the k-th device over all platforms */
  int32_t fault;        /* leaky_cl_fault */
  /* A kernel of the caller's own in place of the library's, so that a port
   * of the article's kernel runs on the same host, plan and tiling data and
   * can be checked by the same tools (null: the library's kernel). OpenCL C
   * text defining leaky_relu_tiles with the library kernel's arguments
   * (tiling, params, src0, src1, dst, in_buf, out_buf; see leaky_relu.cl), built
   * with the same -D LEAKY_DTYPE, LEAKY_BACKWARD and LEAKY_FAULT. Its
   * `#include "leaky/device_tiling.h"` is replaced by the header's text, as
   * in the library's own kernel, so no include path is needed. Copied at
   * leaky_cl_open; built per dtype and direction at first use, where a
   * build failure returns LEAKY_ERROR_DEVICE with the build log. The
   * tiling layout probe is built from the library's kernel either way: a
   * port need not carry it, and the probe checks the device compiler
   * against the header both include. */
  const char* source;
  /* Extra compiler options for the kernel (e.g. "-cl-denorms-are-zero", to
   * see what a flushing build does to f32); null: none. Copied. */
  const char* build_options;
} leaky_cl_options;

/* Opens a device (null options: device -1, no fault, the library's kernel). */
LEAKY_API leaky_status leaky_cl_open(const leaky_cl_options* options, leaky_cl_device** device);
LEAKY_API void leaky_cl_close(leaky_cl_device* device);
/* "platform: device", and whether f64 kernels are available. */
LEAKY_API const char* leaky_cl_device_name(const leaky_cl_device* device);
LEAKY_API int leaky_cl_has_f64(const leaky_cl_device* device);

/* The plan request this backend makes on `device` for n elements of
 * `dtype` touching `streams` arrays (2 forward, 3 backward): the device's
 * compute units as cores, its base-address alignment as the granule, tiles
 * of whole granules sized from its local memory with 2 buffers, the granule
 * split. As the CPU's leaky_cpu_plan_request sizes tiles from the cache. A
 * caller may change max_cores, split, tile_length and buffer_count (1 or 2)
 * before handing it to a call below. */
LEAKY_API leaky_status leaky_cl_plan_request(const leaky_cl_device* device, leaky_dtype dtype,
                                             uint64_t n, uint32_t streams,
                                             leaky_plan_request* request);

/* What a call ran: the kernel's device time (profiling events) and the plan
 * it was handed. */
typedef struct leaky_cl_profile {
  double kernel_ns;
  leaky_tiling tiling;
} leaky_cl_profile;

/* y = x > 0 ? x : x * slope over host arrays of n elements (copied to the
 * device and back; y's prior contents are copied in first, so what a faulty
 * kernel never writes keeps them). `request` (null: leaky_cl_plan_request's)
 * is planned by leaky_plan_tiling; it must describe this call (n, the
 * dtype's size, 2 streams forward or 3 backward), and its tiles must fit
 * the device's local memory. `profile` may be null. */
LEAKY_API leaky_status leaky_cl_leaky_relu_forward(leaky_cl_device* device, leaky_dtype dtype,
                                                   size_t n, const void* x, void* y,
                                                   double negative_slope,
                                                   const leaky_plan_request* request,
                                                   leaky_cl_profile* profile);
/* dx = x > 0 ? dy : dy * slope. */
LEAKY_API leaky_status leaky_cl_leaky_relu_backward(leaky_cl_device* device, leaky_dtype dtype,
                                                    size_t n, const void* dy, const void* x,
                                                    void* dx, double negative_slope,
                                                    const leaky_plan_request* request,
                                                    leaky_cl_profile* profile);

/* The rest of leaky/family.h on the device (src/device/opencl/family.cl,
 * the same kernel structure): each takes the operands and parameters of the
 * CPU function of leaky.h without "cl_" (checked by the same rules), and
 * `request` and `profile` as above (2 streams forward, 3 backward), and
 * gives the CPU library's results bit for bit; ELU within the bounds of
 * leaky/reference.hpp that the CPU kernels meet too. RReLU and dropout draw
 * the CPU's Philox stream; dropout's mask bits and the sums dweight and db
 * (in double, in the CPU's order) are finished on the host. ELU's backward
 * takes the forward's input (no saved_is_result). A caller's kernel
 * (leaky_cl_options.source) and the planted faults are LeakyReLU's only. */
LEAKY_API leaky_status leaky_cl_plain_relu_forward(leaky_cl_device* device, leaky_dtype dtype,
                                                   size_t n, const void* x, void* y,
                                                   const leaky_plan_request* request,
                                                   leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_plain_relu_backward(leaky_cl_device* device, leaky_dtype dtype,
                                                    size_t n, const void* dy, const void* saved,
                                                    void* dx, const leaky_plan_request* request,
                                                    leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_elu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                            const void* x, void* y, double alpha, double scale,
                                            double input_scale, const leaky_plan_request* request,
                                            leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_elu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                             const void* dy, const void* x, void* dx,
                                             double alpha, double scale, double input_scale,
                                             const leaky_plan_request* request,
                                             leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_prelu_forward(leaky_cl_device* device, leaky_dtype dtype,
                                              size_t outer, size_t channels, size_t inner,
                                              const void* x, const void* weight, void* y,
                                              const leaky_plan_request* request,
                                              leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_prelu_backward(leaky_cl_device* device, leaky_dtype dtype,
                                               size_t outer, size_t channels, size_t inner,
                                               const void* dy, const void* x, const void* weight,
                                               void* dx, void* dweight,
                                               const leaky_plan_request* request,
                                               leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_rrelu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                              const void* x, void* y, void* noise,
                                              const leaky_rrelu_params* params,
                                              const leaky_plan_request* request,
                                              leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_rrelu_backward(leaky_cl_device* device, leaky_dtype dtype,
                                               size_t n, const void* dy, const void* x, void* dx,
                                               const leaky_rrelu_params* params,
                                               const leaky_plan_request* request,
                                               leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_bias_act_forward(leaky_cl_device* device, leaky_dtype dtype,
                                                 size_t outer, size_t channels, size_t inner,
                                                 const void* x, const void* bias, void* y,
                                                 const leaky_bias_act_params* params,
                                                 const leaky_plan_request* request,
                                                 leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_bias_act_backward(leaky_cl_device* device, leaky_dtype dtype,
                                                  size_t outer, size_t channels, size_t inner,
                                                  const void* dy, const void* x, const void* bias,
                                                  void* dx, void* db,
                                                  const leaky_bias_act_params* params,
                                                  const leaky_plan_request* request,
                                                  leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_bias_act_dropout_forward(
    leaky_cl_device* device, leaky_dtype dtype, size_t outer, size_t channels, size_t inner,
    const void* x, const void* bias, void* y, uint8_t* mask, const leaky_bias_act_params* params,
    const leaky_dropout_params* dropout, const leaky_plan_request* request,
    leaky_cl_profile* profile);
LEAKY_API leaky_status leaky_cl_bias_act_dropout_backward(
    leaky_cl_device* device, leaky_dtype dtype, size_t outer, size_t channels, size_t inner,
    const void* dy, const void* x, const void* bias, const uint8_t* mask, void* dx, void* db,
    const leaky_bias_act_params* params, double p, const leaky_plan_request* request,
    leaky_cl_profile* profile);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LEAKY_OPENCL_H_ */

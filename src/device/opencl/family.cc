// The rest of leaky/family.h on an OpenCL device (family.cl): each entry
// point checks its operands and scalars by the CPU's rules (runtime/
// operands.h, ops/op_params.h), plans with the library's planner
// (PlanLaunch), launches one work-group per core, and reads back. What
// the kernel cannot write safely or in the library's order is finished
// here: dropout's keep bytes packed into the mask's bits, and dweight and
// db summed per channel in double in (outer, inner) order
// (ops/channels.h's ReducePerChannel, the CPU's own), so every output is
// the CPU library's bit for bit. Outputs are written only once every
// device step has succeeded.
#include <cmath>
#include <cstring>
#include <algorithm>
#include <vector>

#include "device/opencl/device.h"
#include "leaky/reference.hpp"
#include "ops/channels.h"
#include "ops/op_params.h"
#include "runtime/operands.h"

namespace {

using leaky::internal::Fail;
using leaky::internal::Role;
using leaky::opencl::Buffer;
using leaky::opencl::ClFail;
using leaky::opencl::DtypeCode;
using leaky::opencl::Event;
using leaky::opencl::Kernel;

// family.cl's -D LEAKY_OP codes.
enum FamilyOp { kRelu = 1, kElu = 2, kPrelu = 3, kRrelu = 4, kBiasAct = 5, kBiasActDropout = 6 };

// One call, described: its operands by role and the kernel's parameters.
struct FamilyCall {
  const char* function;
  FamilyOp op;
  bool backward;
  leaky_dtype dtype;
  size_t n = 0, channels = 0, inner = 1;  // channels 0: no per-channel operand
  const void* src0 = nullptr;             // x, or dy
  const void* src1 = nullptr;             // the saved x (backward)
  const void* channel_operand = nullptr;  // PReLU's weight, bias_act's bias (may be null)
  const uint8_t* mask_in = nullptr;       // dropout's backward
  void* dst = nullptr;                    // y, or dx
  void* noise = nullptr;                  // RReLU's forward (may be null)
  uint8_t* mask_out = nullptr;            // dropout's forward
  void* reduction = nullptr;              // dweight, db (may be null)
  leaky_device_family_params params{};
};

void SetScalars(leaky_device_family_params* p, std::initializer_list<double> values) {
  int k = 0;
  for (double v : values) {
    p->scalar[k] = static_cast<float>(v);  // rounded once, as the CPU's compute-type scalars
    std::memcpy(&p->scalar_f64_bits[k], &v, sizeof(v));
    ++k;
  }
}

// The channel view's layout: n = outer * channels * inner, without overflow.
leaky_status Layout(const char* function, size_t outer, size_t channels, size_t inner, size_t* n) {
  if (channels != 0 && inner != 0 && outer > SIZE_MAX / channels / inner) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: outer * channels * inner overflows", function);
  }
  if (channels == 0 && outer != 0 && inner != 0) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: channels is 0 for a non-empty tensor",
                function);
  }
  *n = outer * channels * inner;
  return LEAKY_OK;
}

// dweight or db from per-element terms, as the CPU computes them.
void Reduce(leaky_dtype dtype, size_t n, size_t channels, size_t inner,
            const std::vector<double>& terms, void* out) {
  leaky_options options{};
  (void)leaky::internal::ResolveOptions("leaky_cl", nullptr, &options);
  options.num_threads = 1;  // the bits do not depend on it; the host stays quiet
  const size_t outer = n / (channels * inner);
  leaky::internal::WithType(dtype, [&](auto* none) {
    using T = std::remove_pointer_t<decltype(none)>;
    leaky::internal::ReducePerChannel<T>(outer, channels, inner,
                                         [&](size_t k) { return terms[k]; },
                                         static_cast<T*>(out), options);
  });
}

leaky_status Run(leaky_cl_device* device, FamilyCall& c, const leaky_plan_request* given,
                 leaky_cl_profile* profile) {
  const char* function = c.function;
  if (device == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: device is null", function);
  leaky_status status = LEAKY_OK;
  const size_t element = leaky::internal::ElementBytes(function, c.dtype, &status);
  if (element == 0) return status;
  if (c.dtype == LEAKY_F64 && !device->f64) {
    return Fail(LEAKY_ERROR_UNSUPPORTED, "%s: %s has no cl_khr_fp64", function, device->name.c_str());
  }
  const size_t n = c.n, mask_bytes = (n + 7) / 8;
  const bool channel_op = c.op == kPrelu || c.op == kBiasAct || c.op == kBiasActDropout;
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOperands(
      function,
      {{c.backward ? "dy" : "x", c.src0, n, element, Role::kInput},
       {"x", c.src1, c.backward ? n : 0, element, Role::kInput},
       {c.op == kPrelu ? "weight" : "bias", c.channel_operand, channel_op ? c.channels : 0,
        element, Role::kInput, c.op != kPrelu},
       {"mask", c.mask_in, c.mask_in != nullptr || (c.op == kBiasActDropout && c.backward)
                               ? mask_bytes : 0, 1, Role::kInput},
       {c.backward ? "dx" : "y", c.dst, n, element, Role::kOutput},
       {"noise", c.noise, c.noise != nullptr ? n : 0, element, Role::kOutput, true},
       {"mask", c.mask_out, c.op == kBiasActDropout && !c.backward ? mask_bytes : 0, 1,
        Role::kOutput},
       {c.op == kPrelu ? "dweight" : "db", c.reduction, c.reduction != nullptr ? c.channels : 0,
        element, Role::kOutput, true}}));
  const uint32_t streams = c.backward ? 3 : 2;
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(
      leaky::opencl::PlanLaunch(function, device, c.dtype, n, streams, element, given, &tiling));
  if (profile != nullptr) profile->tiling = tiling;
  if (n == 0) {  // an empty tensor: dweight and db are sums of nothing
    if (c.reduction != nullptr && c.channels > 0) Reduce(c.dtype, 0, c.channels, 1, {}, c.reduction);
    return LEAKY_OK;
  }
  cl_program program;
  LEAKY_RETURN_IF_ERROR(device->FamilyProgram(DtypeCode(c.dtype), c.op, c.backward, &program));
  cl_int error = CL_SUCCESS;
  Kernel kernel(clCreateKernel(program, "leaky_family_tiles", &error));
  if (error != CL_SUCCESS) return ClFail(error, "clCreateKernel");

  const size_t bytes = n * element;
  const size_t compute_bytes = c.dtype == LEAKY_F64 ? 8 : 4;
  // The side outputs the kernel writes whenever its op has them (sized in
  // full then), read back only when the caller asked.
  const bool terms_written = c.op == kPrelu && c.backward;
  const bool noise_written = c.op == kRrelu && !c.backward;
  const bool terms_out = terms_written && c.reduction != nullptr;
  const bool noise_out = noise_written && c.noise != nullptr;
  const bool keep_out = c.op == kBiasActDropout && !c.backward;
  std::vector<uint8_t> keep_in;
  if (c.op == kBiasActDropout && c.backward) {
    keep_in.resize(n);
    for (size_t i = 0; i < n; ++i) keep_in[i] = (c.mask_in[i / 8] >> (i % 8)) & 1;
  }
  cl_context context = device->context;
  auto make = [&](cl_mem_flags flags, size_t size, const void* host, Buffer& into) {
    into.object = clCreateBuffer(context, flags | (host ? CL_MEM_COPY_HOST_PTR : 0),
                                 std::max<size_t>(size, 1), const_cast<void*>(host), &error);
    return error;
  };
  Buffer tiling_buffer, params_buffer, a, b, channel, keep_in_buffer, out, noise, keep, terms;
  if (make(CL_MEM_READ_ONLY, sizeof(tiling), &tiling, tiling_buffer) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, sizeof(c.params), &c.params, params_buffer) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, bytes, c.src0, a) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, c.backward ? bytes : element, c.backward ? c.src1 : nullptr, b) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, c.channel_operand ? c.channels * element : element,
           c.channel_operand, channel) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, keep_in.size(), keep_in.empty() ? nullptr : keep_in.data(),
           keep_in_buffer) != CL_SUCCESS ||
      make(CL_MEM_READ_WRITE, bytes, c.dst, out) != CL_SUCCESS ||
      make(CL_MEM_WRITE_ONLY, noise_written ? bytes : element, nullptr, noise) != CL_SUCCESS ||
      make(CL_MEM_WRITE_ONLY, keep_out ? n : 1, nullptr, keep) != CL_SUCCESS ||
      make(CL_MEM_WRITE_ONLY, terms_written ? n * compute_bytes : compute_bytes, nullptr, terms) !=
          CL_SUCCESS) {
    return ClFail(error, "clCreateBuffer");
  }
  const cl_uint has_operand = c.channel_operand != nullptr;
  const size_t tile_bytes = tiling.buffer_count * size_t{tiling.tile_length} * element;
  const cl_mem args[] = {tiling_buffer.object, params_buffer.object, a.object, b.object,
                         channel.object};
  for (cl_uint i = 0; i < 5; ++i) clSetKernelArg(kernel.object, i, sizeof(cl_mem), &args[i]);
  clSetKernelArg(kernel.object, 5, sizeof(cl_uint), &has_operand);
  const cl_mem rest[] = {keep_in_buffer.object, out.object, noise.object, keep.object, terms.object};
  for (cl_uint i = 0; i < 5; ++i) clSetKernelArg(kernel.object, 6 + i, sizeof(cl_mem), &rest[i]);
  clSetKernelArg(kernel.object, 11, (c.backward ? 2u : 1u) * tile_bytes, nullptr);
  error = clSetKernelArg(kernel.object, 12, tile_bytes, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clSetKernelArg");
  Event done;
  LEAKY_RETURN_IF_ERROR(leaky::opencl::EnqueueCores(device, kernel.object, tiling, &done.object));
  // Everything into host memory of our own first: the caller's outputs are
  // written only when every read has succeeded.
  std::vector<uint8_t> dst(bytes), noise_host(noise_out ? bytes : 0), keep_host(keep_out ? n : 0);
  std::vector<uint8_t> terms_raw(terms_out ? n * compute_bytes : 0);
  error = clEnqueueReadBuffer(device->queue, out.object, CL_TRUE, 0, bytes, dst.data(), 0, nullptr, nullptr);
  if (error == CL_SUCCESS && noise_out) {
    error = clEnqueueReadBuffer(device->queue, noise.object, CL_TRUE, 0, bytes, noise_host.data(),
                                0, nullptr, nullptr);
  }
  if (error == CL_SUCCESS && keep_out) {
    error = clEnqueueReadBuffer(device->queue, keep.object, CL_TRUE, 0, n, keep_host.data(), 0,
                                nullptr, nullptr);
  }
  if (error == CL_SUCCESS && terms_out) {
    error = clEnqueueReadBuffer(device->queue, terms.object, CL_TRUE, 0, terms_raw.size(),
                                terms_raw.data(), 0, nullptr, nullptr);
  }
  if (error != CL_SUCCESS) return ClFail(error, "clEnqueueReadBuffer");
  leaky::opencl::ReadProfile(done.object, profile);
  // The reductions, in the CPU's order: PReLU's terms as the kernel
  // computed them (in the compute type), bias_act's db from dx as stored.
  if (c.reduction != nullptr && c.backward && channel_op) {
    std::vector<double> values(n);
    if (terms_out) {
      for (size_t k = 0; k < n; ++k) {
        if (compute_bytes == 8) {
          std::memcpy(&values[k], terms_raw.data() + 8 * k, 8);
        } else {
          float f;
          std::memcpy(&f, terms_raw.data() + 4 * k, 4);
          values[k] = f;
        }
      }
    } else {
      leaky::internal::WithType(c.dtype, [&](auto* none) {
        using T = std::remove_pointer_t<decltype(none)>;
        const T* dx = reinterpret_cast<const T*>(dst.data());
        for (size_t k = 0; k < n; ++k) values[k] = leaky::internal::ToDouble(dx[k]);
      });
    }
    Reduce(c.dtype, n, c.channels, c.inner, values, c.reduction);
  }
  std::memcpy(c.dst, dst.data(), bytes);
  if (noise_out) std::memcpy(c.noise, noise_host.data(), bytes);
  if (keep_out) {
    // Bit i % 8 of byte i / 8; the last byte's bits past n stay the caller's.
    for (size_t byte = 0; byte < mask_bytes; ++byte) {
      uint8_t bits = 0, used = 0;
      for (size_t i = byte * 8; i < std::min(n, byte * 8 + 8); ++i) {
        bits = static_cast<uint8_t>(bits | (keep_host[i] << (i % 8)));
        used = static_cast<uint8_t>(used | (1u << (i % 8)));
      }
      c.mask_out[byte] = static_cast<uint8_t>((c.mask_out[byte] & ~used) | bits);
    }
  }
  return LEAKY_OK;
}

// The scalars and stream of bias_act (and dropout) in the kernel's params.
leaky_status BiasActScalars(FamilyCall& c, const leaky_bias_act_params* params,
                            const double* dropout_p, const leaky_dropout_params* dropout) {
  leaky::kernels::BiasActParams checked{};
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckBiasActParams(c.function, params, &checked));
  double p = 0.0;
  if (dropout_p != nullptr) {
    LEAKY_RETURN_IF_ERROR(leaky::internal::CheckDropoutP(c.function, *dropout_p, &checked));
    p = *dropout_p;
  }
  if (dropout != nullptr) {
    LEAKY_RETURN_IF_ERROR(leaky::internal::CheckStreamRange(c.function, dropout->offset, c.n));
    c.params.seed = dropout->seed;
    c.params.offset = dropout->offset;
  }
  SetScalars(&c.params, {checked.alpha, checked.gain, checked.clamp, 1.0 - p});
  c.params.activation = static_cast<uint32_t>(checked.activation);
  c.params.has_clamp = checked.clamp >= 0;
  c.params.threshold = checked.dropout_threshold;
  return LEAKY_OK;
}

leaky_status ChannelCall(FamilyCall& c, size_t outer, size_t channels, size_t inner) {
  LEAKY_RETURN_IF_ERROR(Layout(c.function, outer, channels, inner, &c.n));
  c.channels = channels;
  c.inner = inner;
  c.params.channels = std::max<size_t>(channels, 1);
  c.params.inner = std::max<size_t>(inner, 1);
  return LEAKY_OK;
}

}  // namespace

extern "C" {

leaky_status leaky_cl_plain_relu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                         const void* x, void* y, const leaky_plan_request* request,
                                         leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_plain_relu_forward", kRelu, false, dtype};
  c.n = n, c.src0 = x, c.dst = y;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_plain_relu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                          const void* dy, const void* saved, void* dx,
                                          const leaky_plan_request* request,
                                          leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_plain_relu_backward", kRelu, true, dtype};
  c.n = n, c.src0 = dy, c.src1 = saved, c.dst = dx;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_elu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                  const void* x, void* y, double alpha, double scale,
                                  double input_scale, const leaky_plan_request* request,
                                  leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_elu_forward", kElu, false, dtype};
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckFinite(
      c.function, {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}}));
  c.n = n, c.src0 = x, c.dst = y;
  SetScalars(&c.params, {alpha, scale, input_scale});
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_elu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                   const void* dy, const void* x, void* dx, double alpha,
                                   double scale, double input_scale,
                                   const leaky_plan_request* request, leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_elu_backward", kElu, true, dtype};
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckFinite(
      c.function, {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}}));
  c.n = n, c.src0 = dy, c.src1 = x, c.dst = dx;
  SetScalars(&c.params, {alpha, scale, input_scale});
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_prelu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t outer,
                                    size_t channels, size_t inner, const void* x,
                                    const void* weight, void* y, const leaky_plan_request* request,
                                    leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_prelu_forward", kPrelu, false, dtype};
  LEAKY_RETURN_IF_ERROR(ChannelCall(c, outer, channels, inner));
  c.src0 = x, c.channel_operand = weight, c.dst = y;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_prelu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t outer,
                                     size_t channels, size_t inner, const void* dy,
                                     const void* x, const void* weight, void* dx, void* dweight,
                                     const leaky_plan_request* request, leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_prelu_backward", kPrelu, true, dtype};
  LEAKY_RETURN_IF_ERROR(ChannelCall(c, outer, channels, inner));
  c.src0 = dy, c.src1 = x, c.channel_operand = weight, c.dst = dx, c.reduction = dweight;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_rrelu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                    const void* x, void* y, void* noise,
                                    const leaky_rrelu_params* params,
                                    const leaky_plan_request* request, leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_rrelu_forward", kRrelu, false, dtype};
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckRreluParams(c.function, params, n));
  c.n = n, c.src0 = x, c.dst = y, c.noise = params->training ? noise : nullptr;
  SetScalars(&c.params, {params->lower, params->upper, (params->lower + params->upper) / 2});
  c.params.training = params->training != 0, c.params.seed = params->seed;
  c.params.offset = params->offset;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_rrelu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                     const void* dy, const void* x, void* dx,
                                     const leaky_rrelu_params* params,
                                     const leaky_plan_request* request, leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_rrelu_backward", kRrelu, true, dtype};
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckRreluParams(c.function, params, n));
  c.n = n, c.src0 = dy, c.src1 = x, c.dst = dx;
  SetScalars(&c.params, {params->lower, params->upper, (params->lower + params->upper) / 2});
  c.params.training = params->training != 0, c.params.seed = params->seed;
  c.params.offset = params->offset;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_bias_act_forward(leaky_cl_device* device, leaky_dtype dtype, size_t outer,
                                       size_t channels, size_t inner, const void* x,
                                       const void* bias, void* y,
                                       const leaky_bias_act_params* params,
                                       const leaky_plan_request* request,
                                       leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_bias_act_forward", kBiasAct, false, dtype};
  LEAKY_RETURN_IF_ERROR(ChannelCall(c, outer, channels, inner));
  LEAKY_RETURN_IF_ERROR(BiasActScalars(c, params, nullptr, nullptr));
  c.src0 = x, c.channel_operand = bias, c.dst = y;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_bias_act_backward(leaky_cl_device* device, leaky_dtype dtype, size_t outer,
                                        size_t channels, size_t inner, const void* dy,
                                        const void* x, const void* bias, void* dx, void* db,
                                        const leaky_bias_act_params* params,
                                        const leaky_plan_request* request,
                                        leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_bias_act_backward", kBiasAct, true, dtype};
  LEAKY_RETURN_IF_ERROR(ChannelCall(c, outer, channels, inner));
  LEAKY_RETURN_IF_ERROR(BiasActScalars(c, params, nullptr, nullptr));
  c.src0 = dy, c.src1 = x, c.channel_operand = bias, c.dst = dx, c.reduction = db;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_bias_act_dropout_forward(
    leaky_cl_device* device, leaky_dtype dtype, size_t outer, size_t channels, size_t inner,
    const void* x, const void* bias, void* y, uint8_t* mask, const leaky_bias_act_params* params,
    const leaky_dropout_params* dropout, const leaky_plan_request* request,
    leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_bias_act_dropout_forward", kBiasActDropout, false, dtype};
  LEAKY_RETURN_IF_ERROR(ChannelCall(c, outer, channels, inner));
  if (dropout == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: dropout is null", c.function);
  LEAKY_RETURN_IF_ERROR(BiasActScalars(c, params, &dropout->p, dropout));
  c.src0 = x, c.channel_operand = bias, c.dst = y, c.mask_out = mask;
  return Run(device, c, request, profile);
}

leaky_status leaky_cl_bias_act_dropout_backward(
    leaky_cl_device* device, leaky_dtype dtype, size_t outer, size_t channels, size_t inner,
    const void* dy, const void* x, const void* bias, const uint8_t* mask, void* dx, void* db,
    const leaky_bias_act_params* params, double p, const leaky_plan_request* request,
    leaky_cl_profile* profile) {
  FamilyCall c{"leaky_cl_bias_act_dropout_backward", kBiasActDropout, true, dtype};
  LEAKY_RETURN_IF_ERROR(ChannelCall(c, outer, channels, inner));
  LEAKY_RETURN_IF_ERROR(BiasActScalars(c, params, &p, nullptr));
  c.src0 = dy, c.src1 = x, c.channel_operand = bias, c.mask_in = mask, c.dst = dx,
  c.reduction = db;
  return Run(device, c, request, profile);
}

}  // extern "C"

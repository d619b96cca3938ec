// An OpenCL call: check the operands as the CPU ops do, plan with the
// library's planner, write the tiling and the op's parameters into device
// memory, launch one work-group per core, read back.
#include <cmath>
#include <cstring>
#include <algorithm>

#include "device/opencl/device.h"
#include "runtime/operands.h"

namespace leaky::opencl {

leaky_status PlanLaunch(const char* function, leaky_cl_device* device, leaky_dtype dtype, size_t n,
                        uint32_t streams, size_t element, const leaky_plan_request* given,
                        leaky_tiling* tiling) {
  using internal::Fail;
  leaky_plan_request request;
  if (given != nullptr) {
    request = *given;
  } else {
    LEAKY_RETURN_IF_ERROR(leaky_cl_plan_request(device, dtype, n, streams, &request));
  }
  if (request.total_length != n || request.element_bytes != element || request.streams != streams) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: the request is for %llu elements of %u bytes over %u streams; this call has "
                "%zu of %zu over %u",
                function, static_cast<unsigned long long>(request.total_length),
                request.element_bytes, request.streams, n, element, streams);
  }
  if (request.buffer_count != 1 && request.buffer_count != 2) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS, "%s: the kernel has 1 or 2 buffers, not %u", function,
                request.buffer_count);
  }
  LEAKY_RETURN_IF_ERROR(leaky_plan_tiling(&request, tiling));
  const uint64_t local = uint64_t{streams} * tiling->buffer_count * tiling->tile_length * element;
  if (tiling->tile_length > UINT32_MAX || local > device->local_memory) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: tiles of %llu elements with %u buffer(s) need %llu bytes of local memory; "
                "%s has %llu",
                function, static_cast<unsigned long long>(tiling->tile_length),
                tiling->buffer_count, static_cast<unsigned long long>(local),
                device->name.c_str(), static_cast<unsigned long long>(device->local_memory));
  }
  return LEAKY_OK;
}

leaky_status EnqueueCores(leaky_cl_device* device, cl_kernel kernel, const leaky_tiling& tiling,
                          cl_event* done) {
  const size_t group = std::min<size_t>(64, device->max_group);
  const size_t global = group * tiling.cores_used;
  const cl_int error = clEnqueueNDRangeKernel(device->queue, kernel, 1, nullptr, &global, &group,
                                              0, nullptr, done);
  return error == CL_SUCCESS ? LEAKY_OK : ClFail(error, "clEnqueueNDRangeKernel");
}

void ReadProfile(cl_event done, leaky_cl_profile* profile) {
  if (profile == nullptr) return;
  cl_ulong begin = 0, end = 0;
  clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof(begin), &begin, nullptr);
  clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
  profile->kernel_ns = static_cast<double>(end - begin);
}

}  // namespace leaky::opencl

namespace {

using leaky::internal::Fail;
using leaky::opencl::Buffer;
using leaky::opencl::ClFail;
using leaky::opencl::DtypeCode;
using leaky::opencl::Event;
using leaky::opencl::Kernel;

// src1 is the saved x of the backward pass (backward), unused forward.
leaky_status Run(const char* function, bool backward, leaky_cl_device* device, leaky_dtype dtype,
                 size_t n, const void* src0, const void* src1, void* dst, double slope,
                 const leaky_plan_request* given, leaky_cl_profile* profile) {
  const uint32_t streams = backward ? 3 : 2;
  if (device == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: device is null", function);
  leaky_status status = LEAKY_OK;
  const size_t element = leaky::internal::ElementBytes(function, dtype, &status);
  if (element == 0) return status;
  if (!std::isfinite(slope)) return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: slope is not finite", function);
  if (dtype == LEAKY_F64 && !device->f64) {
    return Fail(LEAKY_ERROR_UNSUPPORTED, "%s: %s has no cl_khr_fp64", function, device->name.c_str());
  }
  // The operands as the CPU ops describe theirs: the same null, size and
  // overlap rules (the output may be its input exactly: both are copied).
  using leaky::internal::Role;
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOperands(
      function, {{backward ? "dy" : "x", src0, n, element, Role::kInput},
                 {"x", src1, backward ? n : 0, element, Role::kInput},
                 {backward ? "dx" : "y", dst, n, element, Role::kOutput}}));
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(
      leaky::opencl::PlanLaunch(function, device, dtype, n, streams, element, given, &tiling));
  if (profile != nullptr) profile->tiling = tiling;
  if (n == 0) return LEAKY_OK;
  const size_t bytes = n * element;
  cl_program program;
  LEAKY_RETURN_IF_ERROR(device->Program(DtypeCode(dtype), backward, &program));
  cl_int error = CL_SUCCESS;
  Kernel kernel(clCreateKernel(program, "leaky_relu_tiles", &error));
  if (error == CL_INVALID_KERNEL_NAME) {
    return Fail(LEAKY_ERROR_DEVICE, "%s: the kernel source has no kernel leaky_relu_tiles", function);
  }
  if (error != CL_SUCCESS) return ClFail(error, "clCreateKernel");

  leaky_device_params params{};
  params.negative_slope = static_cast<float>(slope);
  params.negative_slope_f64 = slope;
  cl_context context = device->context;
  auto make = [&](cl_mem_flags flags, size_t size, const void* host, Buffer& into) {
    into.object = clCreateBuffer(context, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), size,
                                 const_cast<void*>(host), &error);
    return error;
  };
  Buffer tiling_buffer, params_buffer, a, b, out;
  if (make(CL_MEM_READ_ONLY, sizeof(tiling), &tiling, tiling_buffer) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, sizeof(params), &params, params_buffer) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, bytes, src0, a) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, backward ? bytes : element, backward ? src1 : nullptr, b) != CL_SUCCESS ||
      make(CL_MEM_READ_WRITE, bytes, dst, out) != CL_SUCCESS) {
    return ClFail(error, "clCreateBuffer");
  }
  const size_t tile_bytes = tiling.buffer_count * size_t{tiling.tile_length} * element;
  const size_t in_local = (backward ? 2u : 1u) * tile_bytes;
  clSetKernelArg(kernel.object, 0, sizeof(cl_mem), &tiling_buffer.object);
  clSetKernelArg(kernel.object, 1, sizeof(cl_mem), &params_buffer.object);
  clSetKernelArg(kernel.object, 2, sizeof(cl_mem), &a.object);
  clSetKernelArg(kernel.object, 3, sizeof(cl_mem), &b.object);
  clSetKernelArg(kernel.object, 4, sizeof(cl_mem), &out.object);
  clSetKernelArg(kernel.object, 5, in_local, nullptr);
  error = clSetKernelArg(kernel.object, 6, tile_bytes, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clSetKernelArg");
  Event done;
  LEAKY_RETURN_IF_ERROR(leaky::opencl::EnqueueCores(device, kernel.object, tiling, &done.object));
  error = clEnqueueReadBuffer(device->queue, out.object, CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clEnqueueReadBuffer");
  leaky::opencl::ReadProfile(done.object, profile);
  return LEAKY_OK;
}

}  // namespace

extern "C" {

leaky_status leaky_cl_leaky_relu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                         const void* x, void* y, double negative_slope,
                                         const leaky_plan_request* request,
                                         leaky_cl_profile* profile) {
  return Run("leaky_cl_leaky_relu_forward", false, device, dtype, n, x, nullptr, y, negative_slope,
             request, profile);
}

leaky_status leaky_cl_leaky_relu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                          const void* dy, const void* x, void* dx,
                                          double negative_slope,
                                          const leaky_plan_request* request,
                                          leaky_cl_profile* profile) {
  return Run("leaky_cl_leaky_relu_backward", true, device, dtype, n, dy, x, dx, negative_slope, request,
             profile);
}

}  // extern "C"

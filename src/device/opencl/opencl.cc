// The host side of the OpenCL backend: pick a device, build the kernel of
// leaky_relu.cl per dtype and direction, check that host and kernel agree
// on the tiling data's layout, plan, write the tiling data into device
// memory, launch one work-group per core, read back.
#define CL_TARGET_OPENCL_VERSION 120
#include "leaky/opencl.h"

#include <CL/cl.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ops/operands.h"  // LEAKY_RETURN_IF_ERROR
#include "runtime/error.h"

static_assert(sizeof(leaky_device_tiling) == LEAKY_DEVICE_TILING_SIZE);
static_assert(offsetof(leaky_device_tiling, cores) == LEAKY_DEVICE_TILING_OFFSET_CORES);
static_assert(offsetof(leaky_device_tiling, tile_length) == LEAKY_DEVICE_TILING_OFFSET_TILE);
static_assert(offsetof(leaky_device_tiling, negative_slope) == LEAKY_DEVICE_TILING_OFFSET_SLOPE);
static_assert(offsetof(leaky_device_tiling, negative_slope_f64) ==
              LEAKY_DEVICE_TILING_OFFSET_SLOPE_F64);

namespace {

// leaky_relu.cl with leaky/device_tiling.h in place of its #include
// (generated at configure time).
constexpr const char kSource[] =
#include "leaky_relu_cl.inc"
    ;

using leaky::internal::Fail;

leaky_status ClFail(cl_int code, const char* what) {
  return Fail(LEAKY_ERROR_DEVICE, "OpenCL: %s failed (error %d)", what, code);
}

// Owns one OpenCL object.
template <class T, cl_int (*Release)(T)>
struct Held {
  T object = nullptr;
  Held() = default;
  explicit Held(T o) : object(o) {}
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
  ~Held() {
    if (object != nullptr) Release(object);
  }
};
using Buffer = Held<cl_mem, clReleaseMemObject>;
using Kernel = Held<cl_kernel, clReleaseKernel>;
using Event = Held<cl_event, clReleaseEvent>;

std::string DeviceString(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  clGetDeviceInfo(device, what, 0, nullptr, &size);
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

int DtypeCode(leaky_dtype dtype) {
  switch (dtype) {
    case LEAKY_F32: return 0;
    case LEAKY_F64: return 1;
    case LEAKY_F16: return 2;
    case LEAKY_BF16: return 3;
  }
  return -1;
}

}  // namespace

struct leaky_cl_device {
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string name;
  bool f64 = false;
  int fault = 0;
  cl_ulong local_memory = 0;
  size_t max_group = 1;
  std::map<std::pair<int, bool>, cl_program> programs;

  ~leaky_cl_device() {
    for (auto& [key, program] : programs) clReleaseProgram(program);
    if (queue != nullptr) clReleaseCommandQueue(queue);
    if (context != nullptr) clReleaseContext(context);
  }

  // The program for (dtype code, direction), built on first use. A build
  // failure reports the build log.
  leaky_status Program(int dtype, bool backward, cl_program* out) {
    auto found = programs.find({dtype, backward});
    if (found != programs.end()) {
      *out = found->second;
      return LEAKY_OK;
    }
    const char* source = kSource;
    cl_int error = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &source, nullptr, &error);
    if (error != CL_SUCCESS) return ClFail(error, "clCreateProgramWithSource");
    const std::string options = "-cl-std=CL1.2 -D LEAKY_DTYPE=" + std::to_string(dtype) +
                                " -D LEAKY_BACKWARD=" + std::to_string(backward ? 1 : 0) +
                                " -D LEAKY_FAULT=" + std::to_string(fault);
    error = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
    if (error != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      clReleaseProgram(program);
      return Fail(LEAKY_ERROR_DEVICE, "OpenCL: the kernel did not build (%s): %s", options.c_str(),
                  log.c_str());
    }
    programs[{dtype, backward}] = program;
    *out = program;
    return LEAKY_OK;
  }

  // Host and kernel must agree on leaky_device_tiling's layout.
  leaky_status CheckLayout() {
    cl_program program;
    LEAKY_RETURN_IF_ERROR(Program(0, false, &program));
    cl_int error = CL_SUCCESS;
    Kernel kernel(clCreateKernel(program, "leaky_device_tiling_probe", &error));
    if (error != CL_SUCCESS) return ClFail(error, "clCreateKernel(probe)");
    Buffer out(clCreateBuffer(context, CL_MEM_WRITE_ONLY, 5 * sizeof(cl_ulong), nullptr, &error));
    if (error != CL_SUCCESS) return ClFail(error, "clCreateBuffer(probe)");
    clSetKernelArg(kernel.object, 0, sizeof(cl_mem), &out.object);
    const size_t one = 1;
    error = clEnqueueNDRangeKernel(queue, kernel.object, 1, nullptr, &one, &one, 0, nullptr, nullptr);
    if (error != CL_SUCCESS) return ClFail(error, "clEnqueueNDRangeKernel(probe)");
    cl_ulong seen[5];
    error = clEnqueueReadBuffer(queue, out.object, CL_TRUE, 0, sizeof(seen), seen, 0, nullptr, nullptr);
    if (error != CL_SUCCESS) return ClFail(error, "clEnqueueReadBuffer(probe)");
    const cl_ulong host[5] = {sizeof(leaky_device_tiling), offsetof(leaky_device_tiling, cores),
                              offsetof(leaky_device_tiling, tile_length),
                              offsetof(leaky_device_tiling, negative_slope),
                              offsetof(leaky_device_tiling, negative_slope_f64)};
    for (int i = 0; i < 5; ++i) {
      if (seen[i] != host[i]) {
        return Fail(LEAKY_ERROR_DEVICE,
                    "OpenCL: the kernel's leaky_device_tiling layout differs from the host's "
                    "(field %d: %llu against %llu)",
                    i, static_cast<unsigned long long>(seen[i]),
                    static_cast<unsigned long long>(host[i]));
      }
    }
    return LEAKY_OK;
  }
};

extern "C" {

leaky_status leaky_cl_open(const leaky_cl_options* options, leaky_cl_device** out) {
  if (out == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "leaky_cl_open: device is null");
  *out = nullptr;
  const int wanted = options != nullptr ? options->device : -1;
  const int fault = options != nullptr ? options->fault : 0;
  if (fault < LEAKY_CL_FAULT_NONE || fault > LEAKY_CL_FAULT_CORE_OFFSET) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS, "leaky_cl_open: unknown fault %d", fault);
  }
  cl_uint platform_count = 0;
  cl_int error = clGetPlatformIDs(0, nullptr, &platform_count);
  if (error != CL_SUCCESS || platform_count == 0) {
    return Fail(LEAKY_ERROR_DEVICE,
                "OpenCL: no platform found (install an ICD, e.g. Debian's pocl-opencl-icd)");
  }
  std::vector<cl_platform_id> platforms(platform_count);
  clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  std::vector<std::pair<cl_device_id, cl_device_type>> devices;
  for (cl_platform_id platform : platforms) {
    cl_uint count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count) != CL_SUCCESS) continue;
    std::vector<cl_device_id> ids(count);
    clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, ids.data(), nullptr);
    for (cl_device_id id : ids) {
      cl_device_type type = 0;
      clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
      devices.emplace_back(id, type);
    }
  }
  if (devices.empty()) return Fail(LEAKY_ERROR_DEVICE, "OpenCL: no device on any platform");
  cl_device_id chosen = nullptr;
  if (wanted >= 0) {
    if (static_cast<size_t>(wanted) >= devices.size()) {
      return Fail(LEAKY_ERROR_INVALID_OPTIONS, "leaky_cl_open: device %d does not exist (%zu found)",
                  wanted, devices.size());
    }
    chosen = devices[static_cast<size_t>(wanted)].first;
  } else {
    chosen = devices.front().first;
    for (const auto& [id, type] : devices) {
      if (type & CL_DEVICE_TYPE_GPU) {
        chosen = id;
        break;
      }
    }
  }
  auto device = std::make_unique<leaky_cl_device>();
  device->device = chosen;
  device->fault = fault;
  device->context = clCreateContext(nullptr, 1, &chosen, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) return ClFail(error, "clCreateContext");
  device->queue = clCreateCommandQueue(device->context, chosen, CL_QUEUE_PROFILING_ENABLE, &error);
  if (error != CL_SUCCESS) return ClFail(error, "clCreateCommandQueue");
  cl_platform_id platform = nullptr;
  clGetDeviceInfo(chosen, CL_DEVICE_PLATFORM, sizeof(platform), &platform, nullptr);
  size_t size = 0;
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size);
  std::string platform_name(size, '\0');
  clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, platform_name.data(), nullptr);
  while (!platform_name.empty() && platform_name.back() == '\0') platform_name.pop_back();
  device->name = platform_name + ": " + DeviceString(chosen, CL_DEVICE_NAME);
  device->f64 = DeviceString(chosen, CL_DEVICE_EXTENSIONS).find("cl_khr_fp64") != std::string::npos;
  clGetDeviceInfo(chosen, CL_DEVICE_LOCAL_MEM_SIZE, sizeof(device->local_memory),
                  &device->local_memory, nullptr);
  clGetDeviceInfo(chosen, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(device->max_group),
                  &device->max_group, nullptr);
  LEAKY_RETURN_IF_ERROR(device->CheckLayout());
  *out = device.release();
  return LEAKY_OK;
}

void leaky_cl_close(leaky_cl_device* device) { delete device; }

const char* leaky_cl_device_name(const leaky_cl_device* device) {
  return device != nullptr ? device->name.c_str() : "";
}

int leaky_cl_has_f64(const leaky_cl_device* device) { return device != nullptr && device->f64; }

}  // extern "C"

namespace {

leaky_status Run(const char* function, leaky_cl_device* device, leaky_dtype dtype, size_t n,
                 const void* src0, const void* src1, void* dst, double slope,
                 const leaky_cl_plan* plan, leaky_cl_profile* profile) {
  const bool backward = src1 != nullptr;
  if (device == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: device is null", function);
  const int code = DtypeCode(dtype);
  if (code < 0) return Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: unknown dtype %d", function, dtype);
  if (plan == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: plan is null", function);
  if (!std::isfinite(slope)) return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: slope is not finite", function);
  if (plan->cores < 1 || plan->tile_length < 1 || (plan->buffers != 1 && plan->buffers != 2) ||
      (plan->split != LEAKY_DEVICE_SPLIT_EVEN && plan->split != LEAKY_DEVICE_SPLIT_BALANCED)) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: plan needs cores >= 1, tile_length >= 1, buffers 1 or 2 and a known split "
                "(got %u, %u, %u, %u)",
                function, plan->cores, plan->tile_length, plan->buffers, plan->split);
  }
  if (dtype == LEAKY_F64 && !device->f64) {
    return Fail(LEAKY_ERROR_UNSUPPORTED, "%s: %s has no cl_khr_fp64", function, device->name.c_str());
  }
  if (n == 0) return LEAKY_OK;
  if (src0 == nullptr || dst == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: null array", function);
  const size_t element = dtype == LEAKY_F64 ? 8 : dtype == LEAKY_F32 ? 4 : 2;
  if (n > SIZE_MAX / element) return Fail(LEAKY_ERROR_SIZE, "%s: %zu elements overflow", function, n);
  const size_t bytes = n * element;
  const uint64_t local = (uint64_t{backward ? 3u : 2u} * plan->buffers) * plan->tile_length * element;
  if (local > device->local_memory) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: tile_length %u with %u buffer(s) needs %llu bytes of local memory; %s has %llu",
                function, plan->tile_length, plan->buffers, static_cast<unsigned long long>(local),
                device->name.c_str(), static_cast<unsigned long long>(device->local_memory));
  }
  cl_program program;
  LEAKY_RETURN_IF_ERROR(device->Program(code, backward, &program));
  cl_int error = CL_SUCCESS;
  Kernel kernel(clCreateKernel(program, "leaky_relu_tiles", &error));
  if (error != CL_SUCCESS) return ClFail(error, "clCreateKernel");

  leaky_device_tiling tiling{};
  tiling.total = n;
  tiling.cores = plan->cores;
  tiling.split = plan->split;
  tiling.tile_length = plan->tile_length;
  tiling.buffers = plan->buffers;
  tiling.negative_slope = static_cast<float>(slope);
  tiling.negative_slope_f64 = slope;
  cl_context context = device->context;
  auto make = [&](cl_mem_flags flags, size_t size, const void* host, Buffer& into) {
    into.object = clCreateBuffer(context, flags | (host ? CL_MEM_COPY_HOST_PTR : 0), size,
                                 const_cast<void*>(host), &error);
    return error;
  };
  Buffer tiling_buffer, a, b, out;
  if (make(CL_MEM_READ_ONLY, sizeof(tiling), &tiling, tiling_buffer) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, bytes, src0, a) != CL_SUCCESS ||
      make(CL_MEM_READ_ONLY, backward ? bytes : element, backward ? src1 : nullptr, b) != CL_SUCCESS ||
      make(CL_MEM_READ_WRITE, bytes, dst, out) != CL_SUCCESS) {
    return ClFail(error, "clCreateBuffer");
  }
  const size_t in_local = (backward ? 2u : 1u) * plan->buffers * size_t{plan->tile_length} * element;
  const size_t out_local = plan->buffers * size_t{plan->tile_length} * element;
  clSetKernelArg(kernel.object, 0, sizeof(cl_mem), &tiling_buffer.object);
  clSetKernelArg(kernel.object, 1, sizeof(cl_mem), &a.object);
  clSetKernelArg(kernel.object, 2, sizeof(cl_mem), &b.object);
  clSetKernelArg(kernel.object, 3, sizeof(cl_mem), &out.object);
  clSetKernelArg(kernel.object, 4, in_local, nullptr);
  error = clSetKernelArg(kernel.object, 5, out_local, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clSetKernelArg");
  const size_t group = std::min<size_t>(64, device->max_group);
  const size_t global = group * plan->cores;
  Event done;
  error = clEnqueueNDRangeKernel(device->queue, kernel.object, 1, nullptr, &global, &group, 0,
                                 nullptr, &done.object);
  if (error != CL_SUCCESS) return ClFail(error, "clEnqueueNDRangeKernel");
  error = clEnqueueReadBuffer(device->queue, out.object, CL_TRUE, 0, bytes, dst, 0, nullptr, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clEnqueueReadBuffer");
  if (profile != nullptr) {
    cl_ulong begin = 0, end = 0;
    clGetEventProfilingInfo(done.object, CL_PROFILING_COMMAND_START, sizeof(begin), &begin, nullptr);
    clGetEventProfilingInfo(done.object, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    profile->kernel_ns = static_cast<double>(end - begin);
  }
  return LEAKY_OK;
}

}  // namespace

extern "C" {

leaky_status leaky_cl_leaky_relu_forward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                         const void* x, void* y, double negative_slope,
                                         const leaky_cl_plan* plan, leaky_cl_profile* profile) {
  return Run("leaky_cl_leaky_relu_forward", device, dtype, n, x, nullptr, y, negative_slope, plan,
             profile);
}

leaky_status leaky_cl_leaky_relu_backward(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                          const void* dy, const void* x, void* dx,
                                          double negative_slope, const leaky_cl_plan* plan,
                                          leaky_cl_profile* profile) {
  if (n > 0 && x == nullptr) {
    return Fail(LEAKY_ERROR_NULL_POINTER, "leaky_cl_leaky_relu_backward: x is null");
  }
  return Run("leaky_cl_leaky_relu_backward", device, dtype, n, dy, n > 0 ? x : nullptr, dx,
             negative_slope, plan, profile);
}

}  // extern "C"

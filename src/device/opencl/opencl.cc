// The host side of the OpenCL backend: pick a device, build the kernel of
// leaky_relu.cl (or the caller's, leaky_cl_options.source) per dtype and
// direction, check that host and kernel agree on the structs' layouts, plan
// with the library's planner, write the tiling and the op's parameters into
// device memory, launch one work-group per core, read back.
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
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/error.h"
#include "runtime/operands.h"

static_assert(sizeof(leaky_device_params) == LEAKY_DEVICE_PARAMS_SIZE);
static_assert(offsetof(leaky_device_params, negative_slope) == LEAKY_DEVICE_PARAMS_OFFSET_SLOPE);
static_assert(offsetof(leaky_device_params, negative_slope_f64) ==
              LEAKY_DEVICE_PARAMS_OFFSET_SLOPE_F64);

namespace {

// leaky_relu.cl with leaky/device_tiling.h in place of its #include
// (generated at configure time).
constexpr const char kSource[] =
#include "leaky_relu_cl.inc"
    ;

// leaky/device_tiling.h with leaky/tiling.h in place (generated at
// configure time), for a caller's kernel.
constexpr const char kTilingHeader[] =
#include "device_tiling_h.inc"
    ;

// A caller's kernel with its #include of leaky/device_tiling.h (either
// spelling) replaced by the header's text, as CMake does for the library's
// kernel: the device compiler then needs no include path, which an
// installed library could not point at reliably. The header's include guard
// makes a second replacement harmless.
std::string WithTilingHeader(std::string source) {
  constexpr std::string_view kHeader(kTilingHeader, sizeof(kTilingHeader) - 1);
  for (std::string_view line : {std::string_view("#include \"leaky/device_tiling.h\""),
                                std::string_view("#include <leaky/device_tiling.h>")}) {
    for (size_t at = source.find(line); at != std::string::npos;
         at = source.find(line, at + kHeader.size())) {
      source.replace(at, line.size(), kHeader);
    }
  }
  return source;
}

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
  std::string source;         // the caller's kernel, header in place; empty: the library's
  std::string build_options;  // the caller's extra compiler options
  cl_ulong local_memory = 0;
  size_t max_group = 1;
  cl_uint compute_units = 1;
  cl_uint align_bytes = 128;  // CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bytes
  std::map<std::pair<int, bool>, cl_program> programs;
  cl_program probe_program = nullptr;  // the library's kernel, for the probe beside a caller's

  ~leaky_cl_device() {
    for (auto& [key, program] : programs) clReleaseProgram(program);
    if (probe_program != nullptr) clReleaseProgram(probe_program);
    if (queue != nullptr) clReleaseCommandQueue(queue);
    if (context != nullptr) clReleaseContext(context);
  }

  // `text` built for (dtype code, direction) with the -D defines every
  // kernel source is written against, then `extra`. A failure reports the
  // build log, naming `whose` kernel it was.
  leaky_status Build(const char* text, const char* whose, int dtype, bool backward,
                     const std::string& extra, cl_program* out) {
    cl_int error = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context, 1, &text, nullptr, &error);
    if (error != CL_SUCCESS) return ClFail(error, "clCreateProgramWithSource");
    std::string options = "-cl-std=CL1.2 -D LEAKY_DTYPE=" + std::to_string(dtype) +
                          " -D LEAKY_BACKWARD=" + std::to_string(backward ? 1 : 0) +
                          " -D LEAKY_FAULT=" + std::to_string(fault);
    if (!extra.empty()) options += " " + extra;
    error = clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr);
    if (error != CL_SUCCESS) {
      size_t size = 0;
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size);
      std::string log(size, '\0');
      clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
      clReleaseProgram(program);
      return Fail(LEAKY_ERROR_DEVICE, "OpenCL: %s did not build (error %d; %s): %s", whose, error,
                  options.c_str(), log.c_str());
    }
    *out = program;
    return LEAKY_OK;
  }

  // The program of leaky_relu_tiles for (dtype code, direction), the
  // caller's kernel if one was given, built on first use.
  leaky_status Program(int dtype, bool backward, cl_program* out) {
    auto found = programs.find({dtype, backward});
    if (found != programs.end()) {
      *out = found->second;
      return LEAKY_OK;
    }
    const bool own = !source.empty();
    LEAKY_RETURN_IF_ERROR(
        Build(own ? source.c_str() : kSource,
              own ? "the caller's kernel (leaky_cl_options.source)" : "the kernel", dtype, backward,
              build_options, out));
    programs[{dtype, backward}] = *out;
    return LEAKY_OK;
  }

  // Host and kernel must agree on the layouts of leaky_tiling and
  // leaky_device_params. The probe comes from the library's kernel even
  // beside a caller's: it checks the device compiler against the headers,
  // which both include, and a port need not carry it. (The caller's
  // options are for the caller's kernel.)
  leaky_status CheckLayout() {
    cl_program program;
    if (source.empty()) {
      LEAKY_RETURN_IF_ERROR(Program(0, false, &program));
    } else {
      LEAKY_RETURN_IF_ERROR(Build(kSource, "the kernel", 0, false, "", &probe_program));
      program = probe_program;
    }
    constexpr int kFields = 7;
    cl_int error = CL_SUCCESS;
    Kernel kernel(clCreateKernel(program, "leaky_device_tiling_probe", &error));
    if (error != CL_SUCCESS) return ClFail(error, "clCreateKernel(probe)");
    Buffer out(clCreateBuffer(context, CL_MEM_WRITE_ONLY, kFields * sizeof(cl_ulong), nullptr, &error));
    if (error != CL_SUCCESS) return ClFail(error, "clCreateBuffer(probe)");
    clSetKernelArg(kernel.object, 0, sizeof(cl_mem), &out.object);
    const size_t one = 1;
    error = clEnqueueNDRangeKernel(queue, kernel.object, 1, nullptr, &one, &one, 0, nullptr, nullptr);
    if (error != CL_SUCCESS) return ClFail(error, "clEnqueueNDRangeKernel(probe)");
    cl_ulong seen[kFields];
    error = clEnqueueReadBuffer(queue, out.object, CL_TRUE, 0, sizeof(seen), seen, 0, nullptr, nullptr);
    if (error != CL_SUCCESS) return ClFail(error, "clEnqueueReadBuffer(probe)");
    const cl_ulong host[kFields] = {
        sizeof(leaky_tiling), offsetof(leaky_tiling, cores_used),
        offsetof(leaky_tiling, tile_length), offsetof(leaky_tiling, split),
        sizeof(leaky_device_params), offsetof(leaky_device_params, negative_slope),
        offsetof(leaky_device_params, negative_slope_f64)};
    for (int i = 0; i < kFields; ++i) {
      if (seen[i] != host[i]) {
        return Fail(LEAKY_ERROR_DEVICE,
                    "OpenCL: the kernel's %s layout differs from the host's (field %d: %llu "
                    "against %llu)",
                    i < 4 ? "leaky_tiling" : "leaky_device_params", i,
                    static_cast<unsigned long long>(seen[i]),
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
  const char* source = options != nullptr ? options->source : nullptr;
  const char* build_options = options != nullptr ? options->build_options : nullptr;
  if (source != nullptr && *source == '\0') {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "leaky_cl_open: source is empty (null: the library's kernel)");
  }
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
  if (source != nullptr) device->source = WithTilingHeader(source);
  if (build_options != nullptr) device->build_options = build_options;
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
  clGetDeviceInfo(chosen, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(device->compute_units),
                  &device->compute_units, nullptr);
  cl_uint align_bits = 0;
  clGetDeviceInfo(chosen, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, nullptr);
  // A power of two from 8 to 65536 bytes, as the planner takes (bits per
  // the OpenCL spec; some devices report 0).
  for (cl_uint bytes = 8; bytes <= 65536 && bytes * 8 <= align_bits; bytes *= 2) {
    device->align_bytes = bytes;
  }
  if (device->compute_units == 0) device->compute_units = 1;
  LEAKY_RETURN_IF_ERROR(device->CheckLayout());
  *out = device.release();
  return LEAKY_OK;
}

void leaky_cl_close(leaky_cl_device* device) { delete device; }

const char* leaky_cl_device_name(const leaky_cl_device* device) {
  return device != nullptr ? device->name.c_str() : "";
}

int leaky_cl_has_f64(const leaky_cl_device* device) { return device != nullptr && device->f64; }

leaky_status leaky_cl_plan_request(const leaky_cl_device* device, leaky_dtype dtype, uint64_t n,
                                   uint32_t streams, leaky_plan_request* request) {
  static constexpr char kFunction[] = "leaky_cl_plan_request";
  if (device == nullptr || request == nullptr) {
    return Fail(LEAKY_ERROR_NULL_POINTER, "%s: device and request must not be null", kFunction);
  }
  leaky_status status = LEAKY_OK;
  const size_t element = leaky::internal::ElementBytes(kFunction, dtype, &status);
  if (element == 0) return status;
  std::memset(request, 0, sizeof(*request));
  request->total_length = n;
  request->element_bytes = static_cast<uint32_t>(element);
  request->streams = streams;
  request->max_cores = device->compute_units;
  request->align_bytes = std::max<uint32_t>(device->align_bytes, static_cast<uint32_t>(element));
  request->buffer_bytes = device->local_memory;
  request->buffer_count = 2;  // the next tile's copy-in overlaps this tile's compute
  request->min_bytes_per_core = 0;  // a launch wakes every work-group anyway
  request->stream_threshold_bytes = UINT64_MAX;
  request->stream_stores = 0;
  request->split = LEAKY_SPLIT_GRANULE;
  return LEAKY_OK;
}

}  // extern "C"

namespace {

// src1 is the saved x of the backward pass (backward), unused forward.
leaky_status Run(const char* function, bool backward, leaky_cl_device* device, leaky_dtype dtype,
                 size_t n, const void* src0, const void* src1, void* dst, double slope,
                 const leaky_plan_request* given, leaky_cl_profile* profile) {
  const uint32_t streams = backward ? 3 : 2;
  if (device == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: device is null", function);
  const int code = DtypeCode(dtype);
  if (code < 0) return Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: unknown dtype %d", function, dtype);
  if (!std::isfinite(slope)) return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: slope is not finite", function);
  if (dtype == LEAKY_F64 && !device->f64) {
    return Fail(LEAKY_ERROR_UNSUPPORTED, "%s: %s has no cl_khr_fp64", function, device->name.c_str());
  }
  leaky_status status = LEAKY_OK;
  const size_t element = leaky::internal::ElementBytes(function, dtype, &status);
  if (element == 0) return status;
  // The operands as the CPU ops describe theirs: the same null, size and
  // overlap rules (the output may be its input exactly: both are copied).
  using leaky::internal::Role;
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOperands(
      function, {{backward ? "dy" : "x", src0, n, element, Role::kInput},
                 {"x", src1, backward ? n : 0, element, Role::kInput},
                 {backward ? "dx" : "y", dst, n, element, Role::kOutput}}));
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
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(leaky_plan_tiling(&request, &tiling));
  const uint64_t local = uint64_t{streams} * tiling.buffer_count * tiling.tile_length * element;
  if (tiling.tile_length > UINT32_MAX || local > device->local_memory) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: tiles of %llu elements with %u buffer(s) need %llu bytes of local memory; "
                "%s has %llu",
                function, static_cast<unsigned long long>(tiling.tile_length), tiling.buffer_count,
                static_cast<unsigned long long>(local), device->name.c_str(),
                static_cast<unsigned long long>(device->local_memory));
  }
  if (profile != nullptr) profile->tiling = tiling;
  if (n == 0) return LEAKY_OK;
  const size_t bytes = n * element;
  cl_program program;
  LEAKY_RETURN_IF_ERROR(device->Program(code, backward, &program));
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
  const size_t group = std::min<size_t>(64, device->max_group);
  const size_t global = group * tiling.cores_used;
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
  if (n > 0 && x == nullptr) {
    return Fail(LEAKY_ERROR_NULL_POINTER, "leaky_cl_leaky_relu_backward: x is null");
  }
  return Run("leaky_cl_leaky_relu_backward", true, device, dtype, n, dy, x, dx, negative_slope, request,
             profile);
}

}  // extern "C"

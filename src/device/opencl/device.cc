// Opening an OpenCL device: pick it, build the kernel of leaky_relu.cl (or
// the caller's, leaky_cl_options.source) per dtype and direction, check that
// host and kernel agree on the structs' layouts; and the plan request this
// backend makes on it.
#include <cstring>
#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "device/opencl/device.h"
#include "runtime/operands.h"

static_assert(sizeof(leaky_device_params) == LEAKY_DEVICE_PARAMS_SIZE);
static_assert(offsetof(leaky_device_params, negative_slope) == LEAKY_DEVICE_PARAMS_OFFSET_SLOPE);
static_assert(offsetof(leaky_device_params, negative_slope_f64) ==
              LEAKY_DEVICE_PARAMS_OFFSET_SLOPE_F64);
static_assert(sizeof(leaky_device_family_params) == LEAKY_DEVICE_FAMILY_PARAMS_SIZE);
static_assert(offsetof(leaky_device_family_params, scalar) ==
              LEAKY_DEVICE_FAMILY_PARAMS_OFFSET_SCALAR);
static_assert(offsetof(leaky_device_family_params, channels) ==
              LEAKY_DEVICE_FAMILY_PARAMS_OFFSET_CHANNELS);


namespace {

using leaky::internal::Fail;
using leaky::opencl::Buffer;
using leaky::opencl::ClFail;
using leaky::opencl::Kernel;

// leaky_relu.cl with leaky/device_tiling.h in place of its #include
// (generated at configure time).
constexpr const char kSource[] =
#include "leaky_relu_cl.inc"
    ;

// family.cl with leaky/device_tiling.h in place (generated at configure
// time).
constexpr const char kFamilySource[] =
#include "family_cl.inc"
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

std::string DeviceString(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  clGetDeviceInfo(device, what, 0, nullptr, &size);
  std::string text(size, '\0');
  clGetDeviceInfo(device, what, size, text.data(), nullptr);
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

}  // namespace

// `text` built for (dtype code, direction) with the -D defines every
// kernel source is written against, then `extra`. A failure reports the
// build log, naming `whose` kernel it was.
leaky_status leaky_cl_device::Build(const char* text, const char* whose, int dtype,
                                   bool backward, const std::string& extra, cl_program* out) {
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
leaky_status leaky_cl_device::Program(int dtype, bool backward, cl_program* out) {
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

leaky_status leaky_cl_device::FamilyProgram(int dtype, int op, bool backward, cl_program* out) {
  const auto key = std::make_tuple(dtype, op, backward);
  auto found = family_programs.find(key);
  if (found != family_programs.end()) {
    *out = found->second;
    return LEAKY_OK;
  }
  const std::string defines = "-D LEAKY_OP=" + std::to_string(op) +
                              " -D LEAKY_HAS_FP64=" + std::to_string(f64 ? 1 : 0);
  LEAKY_RETURN_IF_ERROR(Build(kFamilySource, "the family kernel", dtype, backward, defines, out));
  family_programs[key] = *out;
  if (family_programs.size() > 1) return LEAKY_OK;
  // The first family program: host and kernel must agree on
  // leaky_device_family_params (its probe kernel, as CheckLayout's).
  constexpr int kFields = 3;
  cl_int error = CL_SUCCESS;
  Kernel kernel(clCreateKernel(*out, "leaky_device_family_probe", &error));
  if (error != CL_SUCCESS) return ClFail(error, "clCreateKernel(family probe)");
  Buffer seen_buffer(clCreateBuffer(context, CL_MEM_WRITE_ONLY, kFields * sizeof(cl_ulong), nullptr, &error));
  if (error != CL_SUCCESS) return ClFail(error, "clCreateBuffer(family probe)");
  clSetKernelArg(kernel.object, 0, sizeof(cl_mem), &seen_buffer.object);
  const size_t one = 1;
  error = clEnqueueNDRangeKernel(queue, kernel.object, 1, nullptr, &one, &one, 0, nullptr, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clEnqueueNDRangeKernel(family probe)");
  cl_ulong seen[kFields];
  error = clEnqueueReadBuffer(queue, seen_buffer.object, CL_TRUE, 0, sizeof(seen), seen, 0, nullptr, nullptr);
  if (error != CL_SUCCESS) return ClFail(error, "clEnqueueReadBuffer(family probe)");
  const cl_ulong host[kFields] = {sizeof(leaky_device_family_params),
                                  offsetof(leaky_device_family_params, scalar),
                                  offsetof(leaky_device_family_params, channels)};
  for (int i = 0; i < kFields; ++i) {
    if (seen[i] != host[i]) {
      family_programs.erase(key);
      clReleaseProgram(*out);
      return Fail(LEAKY_ERROR_DEVICE,
                  "OpenCL: the family kernel's leaky_device_family_params layout differs from the "
                  "host's (field %d: %llu against %llu)",
                  i, static_cast<unsigned long long>(seen[i]), static_cast<unsigned long long>(host[i]));
    }
  }
  return LEAKY_OK;
}

// Host and kernel must agree on the layouts of leaky_tiling and
// leaky_device_params. The probe comes from the library's kernel even
// beside a caller's: it checks the device compiler against the headers,
// which both include, and a port need not carry it. (The caller's
// options are for the caller's kernel.)
leaky_status leaky_cl_device::CheckLayout() {
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


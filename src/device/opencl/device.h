// The OpenCL backend's host objects, shared by device.cc (opening a device,
// building and probing its kernels) and launch.cc (planning and running a
// call): the device handle, owners of OpenCL objects, error helpers.
#ifndef LEAKY_DEVICE_OPENCL_DEVICE_H_
#define LEAKY_DEVICE_OPENCL_DEVICE_H_

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <cstddef>
#include <map>
#include <tuple>
#include <string>
#include <utility>

#include "leaky/opencl.h"
#include "runtime/error.h"

namespace leaky::opencl {

inline leaky_status ClFail(cl_int code, const char* what) {
  return internal::Fail(LEAKY_ERROR_DEVICE, "OpenCL: %s failed (error %d)", what, code);
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

// The -D LEAKY_DTYPE code of the kernels' storage type; -1 for none.
inline int DtypeCode(leaky_dtype dtype) {
  switch (dtype) {
    case LEAKY_F32: return 0;
    case LEAKY_F64: return 1;
    case LEAKY_F16: return 2;
    case LEAKY_BF16: return 3;
  }
  return -1;
}

}  // namespace leaky::opencl

namespace leaky::opencl {
// A call's plan: the request given (null: leaky_cl_plan_request's for n
// elements over `streams` arrays) checked against the call, planned, and
// its tiles (streams x buffers x tile of `element` bytes) checked against
// the device's local memory.
leaky_status PlanLaunch(const char* function, leaky_cl_device* device, leaky_dtype dtype, size_t n,
                        uint32_t streams, size_t element, const leaky_plan_request* given,
                        leaky_tiling* tiling);
// Enqueues `kernel` as the article's launch: one work-group per core of
// the plan, 64 work-items each (fewer where the device allows fewer).
leaky_status EnqueueCores(leaky_cl_device* device, cl_kernel kernel, const leaky_tiling& tiling,
                          cl_event* done);
// The kernel's device time from its event's profiling info, into *profile
// (nothing when it is null).
void ReadProfile(cl_event done, leaky_cl_profile* profile);
}  // namespace leaky::opencl

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
  std::map<std::tuple<int, int, bool>, cl_program> family_programs;  // (dtype, op, backward)
  cl_program probe_program = nullptr;  // the library's kernel, for the probe beside a caller's

  ~leaky_cl_device() {
    for (auto& [key, program] : programs) clReleaseProgram(program);
    for (auto& [key, program] : family_programs) clReleaseProgram(program);
    if (probe_program != nullptr) clReleaseProgram(probe_program);
    if (queue != nullptr) clReleaseCommandQueue(queue);
    if (context != nullptr) clReleaseContext(context);
  }

  // `text` built for (dtype code, direction) with the -D defines every
  // kernel source is written against, then `extra`. A failure reports the
  // build log, naming `whose` kernel it was.
  leaky_status Build(const char* text, const char* whose, int dtype, bool backward,
                     const std::string& extra, cl_program* out);
  // The program of leaky_relu_tiles for (dtype code, direction), the
  // caller's kernel if one was given, built on first use.
  leaky_status Program(int dtype, bool backward, cl_program* out);
  // The program of family.cl's leaky_family_tiles for (dtype code, op
  // code, direction), built on first use (the library's kernel always: a
  // caller's source replaces LeakyReLU's kernel only).
  leaky_status FamilyProgram(int dtype, int op, bool backward, cl_program* out);
  // Host and kernel must agree on the layouts of leaky_tiling and
  // leaky_device_params (a probe kernel; leaky_cl_open runs it).
  leaky_status CheckLayout();
};

#endif  // LEAKY_DEVICE_OPENCL_DEVICE_H_

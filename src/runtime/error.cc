#include "runtime/error.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace leaky::internal {
namespace {
// A fixed buffer, not a std::string: reporting an error must not allocate.
// 4 KiB holds an OpenCL kernel's build log (leaky/opencl.h), whose first
// error line usually comes after a few hundred characters of warnings.
thread_local char last_error[4096] = "";
std::atomic<Step> failing_step{Step::kNone};  // FailStepForTesting's
}  // namespace

void FailStepForTesting(Step step) { failing_step.store(step, std::memory_order_relaxed); }

bool StepFailsForTesting(Step step) {
  return failing_step.load(std::memory_order_relaxed) == step;
}

leaky_status Fail(leaky_status status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::vsnprintf(last_error, sizeof(last_error), format, args);
  va_end(args);
  return status;
}

}  // namespace leaky::internal

extern "C" const char* leaky_last_error(void) { return leaky::internal::last_error; }

extern "C" const char* leaky_status_string(leaky_status s) {
  switch (s) {
    case LEAKY_OK: return "ok";
    case LEAKY_ERROR_NULL_POINTER: return "null pointer";
    case LEAKY_ERROR_INVALID_DTYPE: return "invalid dtype";
    case LEAKY_ERROR_INVALID_PARAMETER: return "invalid parameter";
    case LEAKY_ERROR_OVERLAP: return "overlapping input and output";
    case LEAKY_ERROR_INVALID_OPTIONS: return "invalid options";
    case LEAKY_ERROR_UNSUPPORTED: return "unsupported combination";
    case LEAKY_ERROR_SIZE: return "invalid size";
    case LEAKY_ERROR_INTERNAL: return "internal error";
    case LEAKY_ERROR_DEVICE: return "device error";
  }
  return "unknown status";
}

// The C entry points that are not ops: the version, the SIMD target, the
// pool's threads and the CPU plan request. (Each op's entry points are in
// its own file under ops/; the planner's leaky_plan_tiling in plan/plan.cc,
// the OpenCL backend's in device/opencl/.)
#include "kernels/kernels.h"
#include "leaky/leaky.h"
#include "leaky/tiling.h"
#include "plan/cpu_plan.h"
#include "runtime/error.h"
#include "runtime/operands.h"
#include "runtime/pool.h"

extern "C" const char* leaky_version(void) { return LEAKY_VERSION_STRING; }

extern "C" const char* leaky_simd_target(void) {
  return leaky::kernels::Dispatched().target_name;
}

extern "C" int leaky_pool_threads(void) {
  return static_cast<int>(leaky::internal::PoolThreads());
}

extern "C" leaky_status leaky_cpu_plan_request(leaky_dtype dtype, uint64_t n, uint32_t streams,
                                               const leaky_options* options,
                                               leaky_plan_request* request) {
  using namespace leaky::internal;
  static constexpr char kFunction[] = "leaky_cpu_plan_request";
  leaky_status status = LEAKY_OK;
  const size_t element_bytes = ElementBytes(kFunction, dtype, &status);
  if (element_bytes == 0) return status;
  if (request == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: request is null", kFunction);
  leaky_options resolved{0, -1, nullptr};
  LEAKY_RETURN_IF_ERROR(ResolveOptions(kFunction, options, &resolved));
  FillCpuRequest(n, element_bytes, streams, resolved, 0, request);
  return LEAKY_OK;
}

#include "plan/cpu_plan.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "runtime/cpu_facts.h"
#include "runtime/error.h"

namespace leaky::internal {
namespace {

// A second core pays only once a call's traffic outgrows what one core's L2
// serves: below that the caller alone beats two cores, which pay a worker's
// wake and each other's cache lines (measured in docs/design.md). Half the
// L2 per core, at least 256 KiB (the floor before).
uint64_t DefaultMinBytesPerCore() {
  return std::max<uint64_t>(uint64_t{256} << 10, Cpu().core_cache_bytes / 2);
}
std::atomic<uint64_t> min_bytes_per_core{0};  // 0: the default

// Granules of one cache line: cores never share a line, so no false sharing
// between their stores, and each core range starts on a line boundary.
constexpr uint32_t kCacheLineBytes = 64;

// Non-temporal stores skip the read-for-ownership of each output line but
// evict the result from cache: they pay once the bytes moved no longer stay
// in the last-level cache (measured crossover between 8 and 32 MiB, in
// docs/design.md). A constant, not sysconf's L3 size, which VMs misreport.
constexpr uint64_t kStreamThresholdBytes = uint64_t{16} << 20;

}  // namespace

void FillCpuRequest(size_t n, size_t element_bytes, uint32_t streams,
                    const leaky_options& options, uintptr_t output_address,
                    leaky_plan_request* request) {
  std::memset(request, 0, sizeof(*request));  // padding too: requests are compared bytewise
  request->total_length = n;
  request->element_bytes = static_cast<uint32_t>(element_bytes);
  request->streams = streams;
  request->max_cores = static_cast<uint32_t>(options.num_threads);
  request->align_bytes = kCacheLineBytes;
  // Half the per-core L2 for the tile: the rest holds the other streams'
  // prefetched lines and whatever the application keeps there.
  request->buffer_bytes = Cpu().core_cache_bytes / 2;
  request->buffer_count = 1;  // hardware prefetchers double-buffer for us
  request->address_offset = static_cast<uint32_t>(output_address % kCacheLineBytes);
  const uint64_t forced = min_bytes_per_core.load(std::memory_order_relaxed);
  request->min_bytes_per_core = forced != 0 ? forced : DefaultMinBytesPerCore();
  request->stream_threshold_bytes = kStreamThresholdBytes;
  request->stream_stores = options.stream_stores;
}

namespace {

// Callers repeat the same shape call after call (a training step, a
// benchmark loop): the last plan of this thread is reused when the request
// is identical, so a 4 Ki-element call does not pay the planner's
// divisions. One thread_local object: in a shared library each one costs a
// __tls_get_addr call.
struct LastPlan {
  leaky_plan_request request;
  leaky_tiling tiling;
  bool valid;
};
thread_local LastPlan last_plan{};

}  // namespace

leaky_status PlanForCpu(const char* function, size_t n, size_t element_bytes, uint32_t streams,
                        const leaky_options& options, const void* output, leaky_tiling* tiling) {
  leaky_plan_request request;
  FillCpuRequest(n, element_bytes, streams, options, reinterpret_cast<uintptr_t>(output), &request);
  if (StepFailsForTesting(Step::kPlan)) request.max_cores = 0;  // a request the planner refuses
  LastPlan& last = last_plan;
  if (last.valid && std::memcmp(&request, &last.request, sizeof(request)) == 0) {
    *tiling = last.tiling;
    return LEAKY_OK;
  }
  // The driver validated what the request is made of, so a refusal here is
  // this library's bug; it still reaches the caller, before any output
  // byte is written (a plan ignored here once ran on an unset tiling).
  const leaky_status status = leaky_plan_tiling(&request, tiling);
  if (status != LEAKY_OK) {
    const std::string reason = leaky_last_error();
    const char* planner = "leaky_plan_tiling: ";
    const size_t skip = reason.rfind(planner, 0) == 0 ? std::strlen(planner) : 0;
    return Fail(status, "%s: the call could not be planned: %s", function, reason.c_str() + skip);
  }
  last.request = request;
  last.tiling = *tiling;
  last.valid = true;
  return LEAKY_OK;
}

bool LastPlanForTesting(leaky_tiling* tiling) {
  if (!last_plan.valid) return false;
  *tiling = last_plan.tiling;
  return true;
}

void SetMinBytesPerCoreForTesting(uint64_t bytes) {
  min_bytes_per_core.store(bytes, std::memory_order_relaxed);
}

}  // namespace leaky::internal

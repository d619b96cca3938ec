// This library's planning policy on this CPU: what it asks the planner for
// (cache-line granules, a tile of half the per-core L2, when a second core
// and non-temporal stores pay), and a per-thread cache of the last plan.
#ifndef LEAKY_PLAN_CPU_PLAN_H_
#define LEAKY_PLAN_CPU_PLAN_H_

#include <cstddef>
#include <cstdint>

#include "leaky/leaky.h"
#include "leaky/tiling.h"

namespace leaky::internal {

// The request this library makes on this CPU (leaky_cpu_plan_request):
// `options` resolved, the output at `output_address`.
void FillCpuRequest(size_t n, size_t element_bytes, uint32_t streams,
                    const leaky_options& options, uintptr_t output_address,
                    leaky_plan_request* request);

// Plans an elementwise pass over `streams` arrays of n elements whose output
// starts at `output` into *tiling. `options` must be resolved (num_threads
// in [1, LEAKY_MAX_THREADS]). The planner's refusal comes back as its
// status, its message prefixed by `function` (the caller's entry point).
[[nodiscard]] leaky_status PlanForCpu(const char* function, size_t n, size_t element_bytes,
                                      uint32_t streams, const leaky_options& options,
                                      const void* output, leaky_tiling* tiling);

// The plan this thread made or reused last (false before its first).
// Tests read the store policy an op's call resolved to from it.
bool LastPlanForTesting(leaky_tiling* tiling);

// Tests lower this to exercise multi-core plans on small arrays.
void SetMinBytesPerCoreForTesting(uint64_t bytes);  // 0 restores the default

}  // namespace leaky::internal

#endif  // LEAKY_PLAN_CPU_PLAN_H_

// The persistent thread pool and what the planner needs to know of the CPU.
#ifndef LEAKY_RUNTIME_POOL_H_
#define LEAKY_RUNTIME_POOL_H_

#include <pthreadpool.h>

#include <cstddef>
#include <cstdint>

namespace leaky::internal {

// Created on first use and kept for the process lifetime; pthreadpool
// serialises concurrent parallelize calls, so any thread may use it.
// Null if creation failed.
pthreadpool_t Pool();

// pthreadpool_parallelize_* flags for the pool: how workers wait between
// calls (LEAKY_POOL_WAIT=yield, the default, or spin).
uint32_t PoolFlags();

struct CpuFacts {
  uint32_t cores;            // logical CPUs online: the default thread count
  uint64_t core_cache_bytes; // per-core budget the tiles are sized from (L2)
};
const CpuFacts& Cpu();

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_POOL_H_

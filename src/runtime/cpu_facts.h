// What the library knows about this CPU: the default thread count and the
// per-core cache the CPU plan sizes its tiles from.
#ifndef LEAKY_RUNTIME_CPU_FACTS_H_
#define LEAKY_RUNTIME_CPU_FACTS_H_

#include <cstdint>

namespace leaky::internal {

struct CpuFacts {
  uint32_t cores;            // logical CPUs online: the default thread count
  uint64_t core_cache_bytes; // per-core budget the tiles are sized from (L2)
};
const CpuFacts& Cpu();

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_CPU_FACTS_H_

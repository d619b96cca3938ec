#include "runtime/cpu_facts.h"

#include <unistd.h>

namespace leaky::internal {
namespace {

uint64_t SysconfOr(int name, uint64_t fallback) {
  const long value = sysconf(name);
  return value > 0 ? static_cast<uint64_t>(value) : fallback;
}

}  // namespace

const CpuFacts& Cpu() {
  static const CpuFacts facts = [] {
    CpuFacts f{};
    f.cores = static_cast<uint32_t>(SysconfOr(_SC_NPROCESSORS_ONLN, 1));
    f.core_cache_bytes = SysconfOr(_SC_LEVEL2_CACHE_SIZE, 1u << 20);
    return f;
  }();
  return facts;
}

}  // namespace leaky::internal

#include "runtime/pool.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace leaky::internal {
namespace {
std::atomic<bool> pool_started{false};
}  // namespace

pthreadpool_t Pool() {
  // A function-local static: thread-safe creation, and never destroyed, so a
  // call during another static's destruction still finds a live pool.
  static const pthreadpool_t pool = [] {
    pool_started.store(true, std::memory_order_release);
    return pthreadpool_create(Cpu().cores);
  }();
  return pool;
}

uint32_t PoolFlags() {
  // Workers sleep as soon as a call is done (docs/design.md has the
  // measurements); LEAKY_POOL_WAIT=spin keeps pthreadpool's default, which
  // spins a while for the next call before sleeping.
  static const uint32_t flags = [] {
    const char* wait = std::getenv("LEAKY_POOL_WAIT");
    return wait != nullptr && std::strcmp(wait, "spin") == 0 ? 0u
                                                              : uint32_t{PTHREADPOOL_FLAG_YIELD_WORKERS};
  }();
  return flags;
}

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

extern "C" int leaky_pool_threads(void) {
  using namespace leaky::internal;
  if (!pool_started.load(std::memory_order_acquire)) return 0;
  const pthreadpool_t pool = Pool();
  return pool != nullptr ? static_cast<int>(pthreadpool_get_threads_count(pool)) : 0;
}

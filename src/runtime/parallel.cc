#include "runtime/parallel.h"

#include "leaky/reference.hpp"
#include "runtime/pool.h"

#if defined(__SANITIZE_THREAD__)
// pthreadpool is not instrumented: tell ThreadSanitizer about the
// happens-before edges its atomics create between a task and the caller.
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#define LEAKY_TSAN_ACQUIRE(address) __tsan_acquire(address)
#define LEAKY_TSAN_RELEASE(address) __tsan_release(address)
#else
#define LEAKY_TSAN_ACQUIRE(address) ((void)(address))
#define LEAKY_TSAN_RELEASE(address) ((void)(address))
#endif

namespace leaky::internal {
namespace {

struct Call {
  Task task;
  void* context;
};

void RunGuarded(const Call& call, size_t index) {
  // Kernels need IEEE defaults on whichever thread runs them; the thread's
  // own state comes back when the task is done.
  const reference::ieee_environment ieee;
  call.task(call.context, index);
}

void PoolTask(void* context, size_t index) {
  LEAKY_TSAN_ACQUIRE(context);
  RunGuarded(*static_cast<const Call*>(context), index);
  LEAKY_TSAN_RELEASE(context);
}

}  // namespace

void ParallelFor(size_t count, int threads, Task task, void* context) {
  Call call{task, context};
  pthreadpool_t pool = threads > 1 && count > 1 ? Pool() : nullptr;
  if (pool == nullptr) {
    // One thread, or no pool could be made: the calling thread does it all.
    for (size_t i = 0; i < count; ++i) RunGuarded(call, i);
    return;
  }
  LEAKY_TSAN_RELEASE(&call);
  // Workers sleep as soon as the call is done instead of spinning for the
  // next one: between calls the application's own threads (PyTorch's, a
  // second process) need the cores (docs/design.md has the measurement).
  pthreadpool_parallelize_1d(pool, &PoolTask, &call, count, PTHREADPOOL_FLAG_YIELD_WORKERS);
  LEAKY_TSAN_ACQUIRE(&call);
}

}  // namespace leaky::internal

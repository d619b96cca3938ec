#include "runtime/parallel.h"

#include <pthreadpool.h>

#include <exception>

#include "leaky/reference.hpp"
#include "runtime/error.h"
#include "runtime/pool.h"

#if defined(__SANITIZE_THREAD__)
// A caller's executor (pthreadpool, its own threads) may not be
// instrumented: tell ThreadSanitizer about the happens-before edges it
// creates between a task and the caller.
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

struct TaskCall {
  Task task;
  void* context;
};

void RunGuarded(const TaskCall& call, size_t index) {
  // Kernels need IEEE defaults on whichever thread runs them; the thread's
  // own state comes back when the task is done.
  const reference::ieee_environment ieee;
  call.task(call.context, index);
}

void ThreadTask(void* context, size_t index) {
  RunGuarded(*static_cast<const TaskCall*>(context), index);
}

// A task on a caller's executor, which ThreadSanitizer may not see into.
void ExecutorTask(void* context, size_t index) {
  LEAKY_TSAN_ACQUIRE(context);
  RunGuarded(*static_cast<const TaskCall*>(context), index);
  LEAKY_TSAN_RELEASE(context);
}

}  // namespace

leaky_status ReadyThreads(const char* function, int threads, const leaky_executor* executor) {
  if (threads <= 1 || executor != nullptr) return LEAKY_OK;
  bool made = false;
  if (!StepFailsForTesting(Step::kThreads)) {
    try {
      made = Pool() != nullptr;
    } catch (const std::exception&) {  // the pool's memory (a thread that fails to start is
    }                                   // left out, not an error)
  }
  if (!made) return Fail(LEAKY_ERROR_INTERNAL, "%s: the thread pool could not be created", function);
  return LEAKY_OK;
}

void ParallelFor(size_t count, int threads, Task task, void* context,
                 const leaky_executor* executor) {
  TaskCall call{task, context};
  if (threads <= 1 || count <= 1) {
    for (size_t i = 0; i < count; ++i) RunGuarded(call, i);
    return;
  }
  if (executor != nullptr && executor->parallel_for != nullptr) {
    LEAKY_TSAN_RELEASE(&call);
    executor->parallel_for(executor->executor_context, count, &ExecutorTask, &call);
    LEAKY_TSAN_ACQUIRE(&call);
    return;
  }
  if (executor != nullptr && executor->pthreadpool != nullptr) {
    LEAKY_TSAN_RELEASE(&call);
    pthreadpool_parallelize_1d(static_cast<pthreadpool_t>(executor->pthreadpool), &ExecutorTask,
                               &call, count, 0);
    LEAKY_TSAN_ACQUIRE(&call);
    return;
  }
  Pool()->Run(count, static_cast<uint32_t>(threads), &ThreadTask, &call);
}

}  // namespace leaky::internal

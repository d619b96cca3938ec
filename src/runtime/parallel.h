// The one way work reaches threads: ParallelFor runs task(context, i) for
// every i in [0, count) on the caller's executor (leaky_options.executor) or
// the library's own pool, each task under IEEE floating-point defaults (no
// FTZ/DAZ, round to nearest) with the thread's own state restored
// afterwards. Tile loops and per-channel reductions both go through it, so
// the FP guard and the ThreadSanitizer annotations live in one place.
#ifndef LEAKY_RUNTIME_PARALLEL_H_
#define LEAKY_RUNTIME_PARALLEL_H_

#include <cstddef>

#include "leaky/leaky.h"

namespace leaky::internal {

using Task = void (*)(void* context, size_t index);

// Makes sure the threads a call with `threads` threads and `executor` will
// run on exist (the library's pool is made at its first use), so that the
// call's ParallelFor cannot fail; `function` names the caller's entry point
// in the error.
[[nodiscard]] leaky_status ReadyThreads(const char* function, int threads,
                                        const leaky_executor* executor);

// Returns when every task has run. With threads <= 1 or count <= 1 the
// calling thread runs them all, in order; otherwise `executor` (null: the
// library's pool, readied by ReadyThreads) does.
void ParallelFor(size_t count, int threads, Task task, void* context,
                 const leaky_executor* executor);

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_PARALLEL_H_

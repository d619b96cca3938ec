// The library's own thread pool and what the planner needs to know of the CPU.
#ifndef LEAKY_RUNTIME_POOL_H_
#define LEAKY_RUNTIME_POOL_H_

#include <cstddef>
#include <cstdint>
#include <optional>

namespace leaky::internal {

using PoolTask = void (*)(void* context, size_t index);

// What the pool's calls did, since it started.
struct PoolStats {
  uint64_t calls_shared = 0;  // calls where a worker ran at least one task
  uint64_t calls_alone = 0;   // calls the caller ran alone (no worker claimed a task in time)
  uint64_t backoffs = 0;      // spinners that found themselves descheduled and slept early
  uint64_t moves = 0;         // a worker found on its caller's core moved off it (by either)
  uint64_t tiles_stolen = 0;  // tiles a task took from another core's range (ops/driver.cc)
};

// Workers that, after a call, spin for the next one for a bounded time and
// then sleep in the kernel (LEAKY_POOL_SPIN_US, docs/design.md has the
// measurements behind the default). Run is safe from any thread: concurrent
// callers take turns, and a call from inside a task runs on its own thread.
class ThreadPool {
 public:
  ThreadPool(uint32_t threads, uint32_t spin_us);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Threads that run tasks: the workers and the calling thread.
  uint32_t threads() const;
  // Runs task(context, i) for every i in [0, count) on at most `threads`
  // threads (the caller among them); returns when all have run. Tasks go
  // to whichever thread claims them first: the caller does not wait for a
  // worker that has not started one (a sleeping or descheduled worker
  // leaves its share to the caller).
  void Run(size_t count, uint32_t threads, PoolTask task, void* context);
  PoolStats stats() const;

 private:
  struct State;
  State* state_;
};

// The process's pool: created on first use with one thread per core, never
// destroyed (a call during another static's destruction still finds it),
// and made afresh in a child after fork(). Never null: if a worker thread
// cannot start, the pool serves with the ones that did (at worst, the
// caller alone).
ThreadPool* Pool();

// A wait spins for its first kUnyieldingSpinNanos (at most half its spin
// time) without yielding its core, then yields it (sched_yield) between
// short spins until the spin time is over: the system call takes 1.2-1.6 us
// on this project's VM, twice the spin between two yields, and a waiter
// inside it sees neither the next call nor a finished task, while the gap
// between two calls of a loop is a few microseconds. Except within
// kQuietAfterGapNanos of the last time a spinner of the pool found itself
// descheduled (`last_gap`; kNoGap before any): another thread wants these
// cores, and every wait yields from its start. Short descheduling does not
// count (a gap is over 100 us): where the application pins a worker to its
// caller's CPU, a call may lose up to the unyielding time. Measured in
// docs/design.md ("Threads").
constexpr int64_t kUnyieldingSpinNanos = 10'000;
constexpr int64_t kQuietAfterGapNanos = 20'000'000;
constexpr int64_t kNoGap = INT64_MIN / 2;
int64_t UnyieldingSpinNanos(int64_t now, int64_t last_gap);

// How long workers and callers spin before sleeping: LEAKY_POOL_SPIN_US, or
// the default.
uint32_t PoolSpinMicros();
// LEAKY_POOL_SPIN_US's text to microseconds: null or empty gives the
// default, a decimal count up to 1000000 itself, anything else nothing
// (PoolSpinMicros then says so in one line on stderr and keeps the default:
// a malformed variable must not fail every call).
std::optional<uint32_t> ParseSpinMicros(const char* text);

// The process pool's threads, caller included; 0 before its first use.
size_t PoolThreads();
// The process pool's counters (zeros before its first use), with the tiles
// stolen by any call's tasks (on the pool or an executor) since the start.
PoolStats ProcessPoolStats();
// Adds to the process's count of stolen tiles.
void CountStolenTiles(uint64_t tiles);

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_POOL_H_

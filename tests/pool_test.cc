// The library's own thread pool: every task runs exactly once for any count,
// thread cap and spin time; a second thread really takes part; concurrent
// callers and calls from inside a task are safe; workers sleep once the spin
// time is over; a child process after fork() gets a
// working pool; LEAKY_POOL_SPIN_US parses as documented; waits stop
// spinning unyielding after a spinner was descheduled.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <dirent.h>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu_facts.h"
#include "runtime/pool.h"

namespace leaky::internal {
namespace {

struct Counts {
  std::vector<std::atomic<int>> runs;
  explicit Counts(size_t n) : runs(n) {}
  static void Task(void* context, size_t index) {
    static_cast<Counts*>(context)->runs[index].fetch_add(1, std::memory_order_relaxed);
  }
  void ExpectEachOnce() const {
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << "task " << i;
  }
};

TEST(ThreadPool, EveryTaskRunsExactlyOnce) {
  for (uint32_t spin : {0u, 50u, 2000u}) {
    ThreadPool pool(3, spin);
    ASSERT_EQ(pool.threads(), 3u);
    uint64_t pool_calls = 0;  // calls with a task for a worker: threads > 1, count > 1
    for (uint32_t threads : {0u, 1u, 2u, 3u, 8u}) {
      for (size_t count : {0, 1, 2, 3, 7, 64, 1000}) {
        Counts counts(count);
        pool.Run(count, threads, &Counts::Task, &counts);
        counts.ExpectEachOnce();
        pool_calls += threads > 1 && count > 1 ? 1 : 0;
      }
    }
    // Every such call is counted once, as shared or as the caller's alone.
    const PoolStats stats = pool.stats();
    EXPECT_EQ(stats.calls_shared + stats.calls_alone, pool_calls) << "spin " << spin;
  }
}

// Many short calls of varying size, more threads asked for than the pool
// has: a worker that wakes late must not claim a task index of the call it
// saw against the next call's count (that lost a task's completion and hung
// the next caller; found by this loop).
TEST(ThreadPool, ManyShortCallsRunEachTaskOnce) {
  ThreadPool pool(2, 50);
  for (int call = 0; call < 200000; ++call) {
    Counts counts(2 + call % 3);
    pool.Run(counts.runs.size(), 4, &Counts::Task, &counts);
    for (const auto& run : counts.runs) ASSERT_EQ(run.load(), 1) << "call " << call;
  }
}

// Task 0 waits for task 1 to start: the caller cannot run both, so a worker
// must have taken one. Bounded, so a pool that never helps fails the test.
TEST(ThreadPool, AWorkerTakesPart) {
  struct Rendezvous {
    std::atomic<bool> second_started{false};
    std::atomic<bool> met{false};
    static void Task(void* context, size_t index) {
      auto* self = static_cast<Rendezvous*>(context);
      if (index == 1) {
        self->second_started = true;
        return;
      }
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!self->second_started && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      self->met = self->second_started.load();
    }
  };
  for (uint32_t spin : {0u, 50u}) {
    ThreadPool pool(2, spin);
    for (int round = 0; round < 20; ++round) {
      Rendezvous r;
      pool.Run(2, 2, &Rendezvous::Task, &r);
      ASSERT_TRUE(r.met) << "spin " << spin << ", round " << round;
    }
    // The counters saw it: a worker ran a task of every call.
    const PoolStats stats = pool.stats();
    EXPECT_EQ(stats.calls_shared, 20u) << "spin " << spin;
    EXPECT_EQ(stats.calls_alone, 0u) << "spin " << spin;
  }
}

TEST(ThreadPool, ConcurrentCallersAndNestedCalls) {
  ThreadPool pool(3, 20);
  struct Nested {
    ThreadPool* pool;
    std::vector<Counts>* inner;
    static void Task(void* context, size_t index) {
      auto* self = static_cast<Nested*>(context);
      Counts& counts = (*self->inner)[index];
      self->pool->Run(counts.runs.size(), 3, &Counts::Task, &counts);  // runs inline
    }
  };
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 200; ++round) {
        std::vector<Counts> inner;
        inner.reserve(5);
        for (int i = 0; i < 5; ++i) inner.emplace_back(17);
        Nested nested{&pool, &inner};
        pool.Run(inner.size(), 3, &Nested::Task, &nested);
        for (const Counts& counts : inner)
          for (const auto& runs : counts.runs) failures += runs.load() != 1;
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(failures.load(), 0);
}

std::set<std::string> PoolWorkerTids() {
  std::set<std::string> tids;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return tids;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + entry->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name == "leaky-pool") tids.insert(entry->d_name);
  }
  closedir(dir);
  return tids;
}

// 'R' (running or runnable: spinning) or 'S' (asleep in the kernel).
char ThreadState(const std::string& tid) {
  std::ifstream stat("/proc/self/task/" + tid + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() ? line[paren + 2] : '?';
}

// Whether it spins meanwhile depends on the machine's load (a descheduled
// spinner stops early), so only the end is asserted.
TEST(ThreadPool, WorkersSleepAfterTheSpin) {
  const std::set<std::string> before = PoolWorkerTids();
  ThreadPool pool(2, 300000);  // 300 ms: long enough to see from here
  std::set<std::string> ours;
  for (const std::string& tid : PoolWorkerTids())
    if (!before.count(tid)) ours.insert(tid);
  ASSERT_EQ(ours.size(), 1u);
  const std::string worker = *ours.begin();
  Counts counts(2);
  pool.Run(2, 2, &Counts::Task, &counts);
  counts.ExpectEachOnce();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (ThreadState(worker) != 'S' && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(ThreadState(worker), 'S') << "the worker never went to sleep";
  // Woken from sleep, it still serves.
  Counts again(64);
  pool.Run(64, 2, &Counts::Task, &again);
  again.ExpectEachOnce();
}

// The CPU a thread of this process last ran on (/proc's "processor").
int LastCpu(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string line;
  std::getline(stat, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 39 && fields >> field; ++i) {
    if (i == 39) return std::stoi(field);
  }
  return -1;
}

// This thread's CPUs, restored at the end of a test that pins it.
struct PinnedCaller {
  cpu_set_t saved;
  PinnedCaller() { pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved); }
  ~PinnedCaller() { pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved); }
  static bool PinTo(int cpu) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof(one), &one) == 0;
  }
};

pid_t NewWorker(const std::set<std::string>& before) {
  std::set<std::string> ours;
  for (const std::string& tid : PoolWorkerTids())
    if (!before.count(tid)) ours.insert(tid);
  return ours.size() == 1 ? static_cast<pid_t>(std::stol(*ours.begin())) : -1;
}

// A worker on its caller's core, where a kernel that packs wakeups onto busy
// CPUs leaves one, moves off it: the caller goes to the CPU the worker last
// ran on, and within a few calls the worker may run on every CPU it had but
// that one, and the pool still serves.
TEST(ThreadPool, AWorkerOnTheCallersCoreMovesOff) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this process may use one CPU only";
  const std::set<std::string> before = PoolWorkerTids();
  ThreadPool pool(2, 50);
  const pid_t worker = NewWorker(before);
  ASSERT_GT(worker, 0);
  PinnedCaller restore;
  int caller_cpu = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (pool.stats().moves == 0 && std::chrono::steady_clock::now() < deadline) {
    caller_cpu = LastCpu(worker);
    if (caller_cpu < 0 || !PinnedCaller::PinTo(caller_cpu)) caller_cpu = -1;
    Counts counts(64);
    pool.Run(64, 2, &Counts::Task, &counts);
    counts.ExpectEachOnce();
    // The worker may handle this call's wake, and move, after Run returned:
    // wait until it sleeps again, so a move is read with the CPU it was
    // made off (read before, it was read with the next call's CPU, which
    // a loaded machine made differ in 15 of 100 runs).
    while (ThreadState(std::to_string(worker)) != 'S' &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  ASSERT_GE(pool.stats().moves, 1u) << "the worker never moved off the caller's CPU";
  ASSERT_GE(caller_cpu, 0);
  cpu_set_t now, expected = allowed;
  CPU_CLR(caller_cpu, &expected);
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(worker, sizeof(now), &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &expected))
      << "the worker's CPUs are not its own minus the caller's CPU " << caller_cpu << " ("
      << CPU_COUNT(&now) << " CPUs, expected " << CPU_COUNT(&expected) << ")";
  Counts again(64);
  pool.Run(64, 2, &Counts::Task, &again);
  again.ExpectEachOnce();
}

// A worker the application pinned stays pinned: the move narrows the
// worker's own set as others left it, never the set it started with.
TEST(ThreadPool, AWorkerPinnedByTheApplicationStaysPinned) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
  if (CPU_COUNT(&allowed) < 2) GTEST_SKIP() << "this process may use one CPU only";
  int first = 0;
  while (!CPU_ISSET(first, &allowed)) ++first;
  const std::set<std::string> before = PoolWorkerTids();
  ThreadPool pool(2, 50);
  const pid_t worker = NewWorker(before);
  ASSERT_GT(worker, 0);
  PinnedCaller restore;
  ASSERT_TRUE(PinnedCaller::PinTo(first));
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(worker, sizeof(one), &one), 0);
  for (int call = 0; call < 100; ++call) {
    Counts counts(64);
    pool.Run(64, 2, &Counts::Task, &counts);
    counts.ExpectEachOnce();
    if (call % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(pool.stats().moves, 0u);
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(worker, sizeof(now), &now), 0);
  EXPECT_TRUE(CPU_EQUAL(&now, &one)) << "the pool moved a worker the application had pinned";
}

TEST(ThreadPool, ForkedChildGetsAWorkingPool) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not support threads started after a multi-threaded fork";
#else
  Counts counts(64);
  Pool()->Run(64, 2, &Counts::Task, &counts);
  counts.ExpectEachOnce();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a child stuck on the parent's dead workers dies of SIGALRM
    Counts in_child(64);
    Pool()->Run(64, 2, &Counts::Task, &in_child);
    for (const auto& runs : in_child.runs)
      if (runs.load() != 1) _exit(3);
    _exit(Pool()->threads() == Cpu().cores ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "child ended by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

TEST(ThreadPool, SpinVariableParses) {
  const uint32_t fallback = *ParseSpinMicros(nullptr);
  EXPECT_EQ(*ParseSpinMicros(""), fallback);
  EXPECT_EQ(*ParseSpinMicros("0"), 0u);
  EXPECT_EQ(*ParseSpinMicros("75"), 75u);
  EXPECT_EQ(*ParseSpinMicros("1000000"), 1000000u);
  for (const char* bad : {"-5", "1000001", "12us", " 5", "x", "99999999999999999999"})
    EXPECT_FALSE(ParseSpinMicros(bad).has_value()) << bad;
}

// A wait starts unyielding only while no spinner has found itself
// descheduled for kQuietAfterGapNanos: right after a gap, and until that
// time has passed, every wait yields from its start.
TEST(ThreadPool, UnyieldingSpinDependsOnTheLastGap) {
  static_assert(kUnyieldingSpinNanos > 0);
  const int64_t now = int64_t{1} << 50;  // a steady clock's nanoseconds
  EXPECT_EQ(UnyieldingSpinNanos(now, kNoGap), kUnyieldingSpinNanos);
  EXPECT_EQ(UnyieldingSpinNanos(now, now), 0);
  EXPECT_EQ(UnyieldingSpinNanos(now, now + 1), 0);  // another thread's later gap
  EXPECT_EQ(UnyieldingSpinNanos(now, now - kQuietAfterGapNanos + 1), 0);
  EXPECT_EQ(UnyieldingSpinNanos(now, now - kQuietAfterGapNanos), kUnyieldingSpinNanos);
  EXPECT_EQ(UnyieldingSpinNanos(0, kNoGap), kUnyieldingSpinNanos);  // a clock near its start
}

}  // namespace
}  // namespace leaky::internal

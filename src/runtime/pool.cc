#include "runtime/pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#endif

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cpu_facts.h"

namespace leaky::internal {
namespace {

// Spin before sleeping, in microseconds; docs/design.md ("Threads") has the
// table this default was chosen from.
constexpr uint32_t kDefaultSpinMicros = 50;

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Sleeps while *word == expected (a spurious return is allowed).
void FutexWait(std::atomic<uint32_t>& word, uint32_t expected) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr,
          nullptr, 0);
#else
  word.wait(expected, std::memory_order_acquire);
#endif
}

void FutexWake(std::atomic<uint32_t>& word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
#else
  word.notify_one();
#endif
}

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How long waiters spin before sleeping, and when spinning stops early. A
// spinner that finds a gap between two of its clock reads was descheduled:
// another thread wanted its core (another process, or more runnable
// threads than cores), and spinning on only takes time from it. That one
// wait then sleeps at once; the next wait spins again. (Earlier in 0.3 a
// gap made every waiter of the pool sleep at once for 20 ms, so every call
// of those 20 ms had to wake a sleeping worker, and a late one left its
// share to the caller; docs/design.md, "Threads", has what changing it
// measured.) The time of the last gap also turns off the unyielding start
// of each wait (UnyieldingSpinNanos) for a while.
class SpinPolicy {
 public:
  explicit SpinPolicy(uint32_t spin_us) : spin_nanos_(int64_t{spin_us} * 1000) {}

  int64_t Budget() const { return spin_nanos_; }
  void Descheduled(int64_t now) {
    backoffs_.fetch_add(1, std::memory_order_relaxed);
    last_gap_.store(now, std::memory_order_relaxed);
  }
  uint64_t backoffs() const { return backoffs_.load(std::memory_order_relaxed); }
  int64_t Unyielding(int64_t now) const {
    return UnyieldingSpinNanos(now, last_gap_.load(std::memory_order_relaxed));
  }

  static constexpr int64_t kGapNanos = 100'000;

 private:
  int64_t spin_nanos_;
  std::atomic<uint64_t> backoffs_{0};
  std::atomic<int64_t> last_gap_{kNoGap};
};

// A futex word and the flag its one waiter raises before sleeping: the
// waker makes a system call only when somebody sleeps. Both sides use
// sequentially consistent order, so either the waiter sees the new value
// or the waker sees the flag.
struct Signal {
  std::atomic<uint32_t> word{0};
  std::atomic<uint32_t> sleeping{0};

  void Wake() {
    if (sleeping.load(std::memory_order_seq_cst) != 0) FutexWake(word);
  }

  // Returns word's value once it differs from `old`: spins while the policy
  // allows, then sleeps.
  uint32_t AwaitChange(uint32_t old, SpinPolicy& policy) {
    uint32_t now = word.load(std::memory_order_acquire);
    if (now != old) return now;
    const int64_t start = NowNanos();
    const int64_t budget = policy.Budget();
    // At most half the budget: a short spin time still yields.
    const int64_t unyielding = budget > 0 ? std::min(policy.Unyielding(start), budget / 2) : 0;
    for (int64_t last = start; budget > 0;) {
      for (int i = 0; i < 32; ++i) {
        CpuRelax();
        now = word.load(std::memory_order_acquire);
        if (now != old) return now;
      }
      // After the unyielding start, lets a runnable thread of this core
      // (another process's) have it.
      if (last - start >= unyielding) sched_yield();
      const int64_t time = NowNanos();
      if (time - last > SpinPolicy::kGapNanos) {
        policy.Descheduled(time);
        break;
      }
      if (time - start >= budget) break;
      last = time;
    }
    for (;;) {
      sleeping.store(1, std::memory_order_seq_cst);
      now = word.load(std::memory_order_seq_cst);
      if (now == old) FutexWait(word, old);
      sleeping.store(0, std::memory_order_relaxed);
      now = word.load(std::memory_order_acquire);
      if (now != old) return now;
    }
  }
};

// A worker on the core its caller runs on can only run when the caller
// stops, and the caller does not stop until the call is done: the call runs
// on one core. Kernels that pack wakeups onto busy CPUs do that to a pool
// (this VM's: a worker woken after a 20 ms pause landed on the caller's
// vCPU and stayed there, and 3053 of 4040 calls of 1 Mi ran on the caller
// alone), and a spinner that yields keeps the load balancer from moving
// it. So such a worker's CPU set is narrowed to its base set minus the
// caller's CPU, and the kernel moves it at once: by the worker when it
// wakes there, and by the caller when it publishes a call on the CPU a
// worker last woke on (a worker starved behind its caller cannot run to
// see it). The base set is the worker's own set as anybody but the pool
// last left it (at first the one it inherited from the pool's creator), so
// an application or administrator narrowing the threads' CPUs later is
// followed, not undone. Only the pool's own threads are touched; with one
// CPU in the base set nothing changes, and a refused move (a sandbox that
// forbids it) turns the rule off for the pool.
struct Placement {
  std::mutex mutex;  // the worker's and its caller's moves, one at a time
#if defined(__linux__)
  cpu_set_t base;    // what a move narrows
  cpu_set_t set{};   // what the pool last set (none yet: empty, which no thread's set is)
#endif
};

struct alignas(64) Worker {
  Signal wake;  // word: jobs handed to this worker so far
  std::thread thread;
  std::atomic<int> cpu{-1};  // where it last woke (-1: unknown or moved since)
  Placement placement;
};

class CoreSharing {
 public:
  CoreSharing() {
#if defined(__linux__)
    cpu_set_t mine;
    CPU_ZERO(&mine);
    enabled_ = sched_getaffinity(0, sizeof(mine), &mine) == 0 && CPU_COUNT(&mine) > 1;
    owner_ = getpid();
#endif
  }
  bool enabled() const { return enabled_.load(std::memory_order_relaxed); }
  static int Here() {
#if defined(__linux__)
    return sched_getcpu();
#else
    return -1;
#endif
  }
  // Narrows the worker's CPUs to its base set minus `cpu`; true when done.
  bool MoveOff(Worker& worker, int cpu) {
#if defined(__linux__)
    if (!enabled() || cpu < 0 || cpu >= CPU_SETSIZE) return false;
    // In a child after fork() the workers are gone and their handles name
    // nobody (glibc's would then narrow the caller itself).
    if (getpid() != owner_) return false;
    Placement& p = worker.placement;
    std::unique_lock<std::mutex> lock(p.mutex, std::try_to_lock);
    if (!lock.owns_lock()) return false;  // the other side is moving it
    const pthread_t thread = worker.thread.native_handle();
    cpu_set_t now;
    CPU_ZERO(&now);
    if (pthread_getaffinity_np(thread, sizeof(now), &now) != 0) return Refused();
    if (!CPU_EQUAL(&now, &p.set)) p.base = now;
    cpu_set_t next = p.base;
    CPU_CLR(cpu, &next);
    if (CPU_COUNT(&next) == 0 || CPU_EQUAL(&next, &now)) return false;
    if (pthread_setaffinity_np(thread, sizeof(next), &next) != 0) return Refused();
    p.set = next;
    return true;
#else
    (void)worker;
    (void)cpu;
    return false;
#endif
  }

 private:
  bool Refused() {
    enabled_.store(false, std::memory_order_relaxed);
    return false;
  }
  std::atomic<bool> enabled_{false};
  pid_t owner_ = 0;
};

thread_local bool in_pool_task = false;

}  // namespace

struct ThreadPool::State {
  explicit State(uint32_t spin_us) : spin(spin_us) {}
  SpinPolicy spin;
  std::mutex call_mutex;  // one call at a time
  // The current call's job: written by its caller before the call's epoch
  // is published in `claim`, read by a thread only after it claimed a task
  // of that epoch (so the job cannot change under it: the caller returns
  // only when every claimed task is done).
  PoolTask task = nullptr;
  void* context = nullptr;
  // (epoch << 32) | the call's task count: read before a claim, and tagged,
  // because the next call's count is written before its epoch is published
  // in `claim` (a count read without its epoch let a late worker claim a
  // task index past the end of the call it saw).
  alignas(64) std::atomic<uint64_t> job{0};
  // (epoch << 32) | next unclaimed index. A thread claims index i of the
  // current call by compare-and-swap, which fails if the call is over: a
  // worker that wakes late never runs a task of a finished call, and the
  // caller never waits for a worker that has not started one.
  alignas(64) std::atomic<uint64_t> claim{0};
  alignas(64) Signal unfinished;  // word: tasks of the current call not yet done
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Worker>> workers;
  // Counters (relaxed; read by PoolStats): a worker ran a task of the call,
  // or the caller ran all of them.
  std::atomic<uint64_t> calls_shared{0}, calls_alone{0}, moves{0};
  CoreSharing cores;
  std::atomic<int> caller_cpu{-1};  // where the current call's caller published it

  // A worker found on the caller's CPU `cpu` (by itself or by the caller):
  // moved off it if it can be, and asked once either way.
  void MoveOffCaller(Worker& worker, int cpu) {
    if (cores.MoveOff(worker, cpu)) moves.fetch_add(1, std::memory_order_relaxed);
    worker.cpu.store(-1, std::memory_order_relaxed);
  }

  // Runs tasks of the current call until none is left unclaimed; returns
  // how many this thread ran.
  size_t RunTasks() {
    size_t ran = 0;
    for (uint64_t c = claim.load(std::memory_order_acquire);;) {
      const uint64_t j = job.load(std::memory_order_acquire);
      // A newer job than c's call: c's call is over (its caller published
      // the next one), and this thread is woken again for the next.
      if ((j >> 32) != (c >> 32)) return ran;
      if ((c & 0xffffffffu) >= (j & 0xffffffffu)) return ran;
      const uint64_t index = c & 0xffffffffu;
      if (!claim.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
        continue;  // c now holds the current value (another claim, or another call)
      }
      task(context, index);
      ++ran;
      if (unfinished.word.fetch_sub(1, std::memory_order_seq_cst) == 1) unfinished.Wake();
      c = claim.load(std::memory_order_acquire);
    }
  }

  void WorkerLoop(Worker& self) {
    in_pool_task = true;
    uint32_t seen = 0;
    for (;;) {
      seen = self.wake.AwaitChange(seen, spin);
      if (stop.load(std::memory_order_acquire)) return;
      if (cores.enabled()) {
        const int here = CoreSharing::Here();
        if (here == caller_cpu.load(std::memory_order_relaxed)) {
          MoveOffCaller(self, here);
        } else if (self.cpu.load(std::memory_order_relaxed) != here) {
          self.cpu.store(here, std::memory_order_relaxed);  // only when it changed: the caller reads it
        }
      }
      RunTasks();
    }
  }
};

ThreadPool::ThreadPool(uint32_t threads, uint32_t spin_us) : state_(new State(spin_us)) {
  // Workers inherit a mask that blocks every signal: signals go to the
  // application's own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  for (uint32_t i = 1; i < threads; ++i) {
    auto worker = std::make_unique<Worker>();
    try {
      worker->thread = std::thread(&State::WorkerLoop, state_, std::ref(*worker));
    } catch (const std::system_error&) {
      break;  // fewer threads than asked: the ones that started still serve
    }
    pthread_setname_np(worker->thread.native_handle(), "leaky-pool");
    state_->workers.push_back(std::move(worker));
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

ThreadPool::~ThreadPool() {
  state_->stop.store(true, std::memory_order_release);
  for (auto& worker : state_->workers) {
    worker->wake.word.fetch_add(1, std::memory_order_seq_cst);
    worker->wake.Wake();
  }
  for (auto& worker : state_->workers) worker->thread.join();
  delete state_;
}

uint32_t ThreadPool::threads() const { return static_cast<uint32_t>(state_->workers.size()) + 1; }

void ThreadPool::Run(size_t count, uint32_t threads, PoolTask task, void* context) {
  const size_t helpers =
      std::min<size_t>({state_->workers.size(), threads > 0 ? threads - 1u : 0u,
                        count > 0 ? count - 1 : 0});
  // (Task indices and the unfinished count are 32-bit words.)
  if (helpers == 0 || in_pool_task || count > UINT32_MAX) {
    for (size_t i = 0; i < count; ++i) task(context, i);
    return;
  }
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.call_mutex);
  // A new epoch: no claim of the previous call can succeed from here on.
  const uint64_t epoch = (s.claim.load(std::memory_order_relaxed) >> 32) + 1;
  s.task = task;
  s.context = context;
  s.job.store(epoch << 32 | count, std::memory_order_relaxed);
  s.unfinished.word.store(static_cast<uint32_t>(count), std::memory_order_relaxed);
  if (s.cores.enabled()) {
    const int here = CoreSharing::Here();
    s.caller_cpu.store(here, std::memory_order_relaxed);
    for (size_t w = 0; w < helpers; ++w) {
      Worker& worker = *s.workers[w];
      if (worker.cpu.load(std::memory_order_relaxed) == here) s.MoveOffCaller(worker, here);
    }
  }
  s.claim.store(epoch << 32, std::memory_order_release);
  for (size_t w = 0; w < helpers; ++w) {
    Worker& worker = *s.workers[w];
    worker.wake.word.fetch_add(1, std::memory_order_seq_cst);
    worker.wake.Wake();
  }
  in_pool_task = true;  // a nested call from a task of ours runs inline
  const size_t ran = s.RunTasks();
  in_pool_task = false;
  // Only tasks a worker has claimed are left: it is running them.
  for (uint32_t left; (left = s.unfinished.word.load(std::memory_order_acquire)) != 0;)
    s.unfinished.AwaitChange(left, s.spin);
  (ran == count ? s.calls_alone : s.calls_shared).fetch_add(1, std::memory_order_relaxed);
}

PoolStats ThreadPool::stats() const {
  return {state_->calls_shared.load(std::memory_order_relaxed),
          state_->calls_alone.load(std::memory_order_relaxed),
          state_->spin.backoffs(), state_->moves.load(std::memory_order_relaxed)};
}

namespace {

std::atomic<ThreadPool*> process_pool{nullptr};
std::atomic<uint64_t> tiles_stolen{0};

void ForgetPoolInChild() {
  // The workers did not survive fork(): the child makes its own pool on
  // first use (the parent's stays allocated; its threads are gone).
  process_pool.store(nullptr, std::memory_order_relaxed);
}

// LEAKY_POOL_STATS=1: one line of the process pool's counters on stderr at
// exit, for measuring the pool under load (bench/pool_noise.py).
void PrintPoolStats() {
  const PoolStats s = ProcessPoolStats();
  std::fprintf(stderr, "leaky pool: %llu calls shared, %llu calls the caller ran alone, %llu "
               "back-offs, %llu moves off the caller's core, %llu tiles stolen\n",
               static_cast<unsigned long long>(s.calls_shared),
               static_cast<unsigned long long>(s.calls_alone),
               static_cast<unsigned long long>(s.backoffs), static_cast<unsigned long long>(s.moves),
               static_cast<unsigned long long>(s.tiles_stolen));
}

}  // namespace

int64_t UnyieldingSpinNanos(int64_t now, int64_t last_gap) {
  return now - last_gap >= kQuietAfterGapNanos ? kUnyieldingSpinNanos : 0;
}

std::optional<uint32_t> ParseSpinMicros(const char* text) {
  if (text == nullptr || *text == '\0') return kDefaultSpinMicros;
  if (*text < '0' || *text > '9') return std::nullopt;
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  if (*end != '\0' || value > 1000000) return std::nullopt;
  return static_cast<uint32_t>(value);
}

uint32_t PoolSpinMicros() {
  static const uint32_t spin = [] {
    const char* text = std::getenv("LEAKY_POOL_SPIN_US");
    const std::optional<uint32_t> parsed = ParseSpinMicros(text);
    if (parsed) return *parsed;
    std::fprintf(stderr,
                 "leaky: LEAKY_POOL_SPIN_US=%s is not a whole number of microseconds from 0 to "
                 "1000000; using %u\n",
                 text, kDefaultSpinMicros);
    return kDefaultSpinMicros;
  }();
  return spin;
}

ThreadPool* Pool() {
  ThreadPool* pool = process_pool.load(std::memory_order_acquire);
  if (pool != nullptr) return pool;
  static std::once_flag atfork;
  std::call_once(atfork, [] {
    pthread_atfork(nullptr, nullptr, &ForgetPoolInChild);
    const char* stats = std::getenv("LEAKY_POOL_STATS");
    if (stats != nullptr && std::string(stats) == "1") std::atexit(&PrintPoolStats);
  });
  auto made = std::make_unique<ThreadPool>(Cpu().cores, PoolSpinMicros());
  if (process_pool.compare_exchange_strong(pool, made.get(), std::memory_order_acq_rel))
    return made.release();
  return pool;  // another thread's pool won; ours stops its workers here
}

size_t PoolThreads() {
  const ThreadPool* pool = process_pool.load(std::memory_order_acquire);
  return pool != nullptr ? pool->threads() : 0;
}

PoolStats ProcessPoolStats() {
  const ThreadPool* pool = process_pool.load(std::memory_order_acquire);
  PoolStats stats = pool != nullptr ? pool->stats() : PoolStats{};
  stats.tiles_stolen = tiles_stolen.load(std::memory_order_relaxed);
  return stats;
}

void CountStolenTiles(uint64_t tiles) { tiles_stolen.fetch_add(tiles, std::memory_order_relaxed); }

}  // namespace leaky::internal

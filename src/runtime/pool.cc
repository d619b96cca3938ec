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

// How long waiters spin before sleeping, and the back-off when spinning
// does not pay. A spinner that finds a gap between two of its clock reads
// was descheduled: another thread wanted its core (another process, or
// more runnable threads than cores), and a spinning thread only takes time
// from it. Then every waiter of the pool sleeps at once for kQuietNanos.
class SpinPolicy {
 public:
  explicit SpinPolicy(uint32_t spin_us) : spin_nanos_(int64_t{spin_us} * 1000) {}

  int64_t Budget(int64_t now) const {
    return now < quiet_until_.load(std::memory_order_relaxed) ? 0 : spin_nanos_;
  }
  void Descheduled(int64_t now) {
    quiet_until_.store(now + kQuietNanos, std::memory_order_relaxed);
  }

  static constexpr int64_t kGapNanos = 100'000;
  static constexpr int64_t kQuietNanos = 20'000'000;

 private:
  int64_t spin_nanos_;
  std::atomic<int64_t> quiet_until_{0};
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
    const int64_t budget = policy.Budget(start);
    for (int64_t last = start; budget > 0;) {
      for (int i = 0; i < 32; ++i) {
        CpuRelax();
        now = word.load(std::memory_order_acquire);
        if (now != old) return now;
      }
      // Lets a runnable thread of this core (another process's) have it.
      sched_yield();
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

struct alignas(64) Worker {
  Signal wake;  // word: jobs handed to this worker so far
  std::thread thread;
};

thread_local bool in_pool_task = false;

}  // namespace

struct ThreadPool::State {
  explicit State(uint32_t spin_us) : spin(spin_us) {}
  SpinPolicy spin;
  std::mutex call_mutex;  // one call at a time
  // The current job; written before the workers' wake words are bumped.
  PoolTask task = nullptr;
  void* context = nullptr;
  size_t count = 0;
  alignas(64) std::atomic<size_t> next{0};
  alignas(64) Signal pending;  // word: helpers still inside the job
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Worker>> workers;

  void RunTasks() {
    for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) task(context, i);
  }

  void WorkerLoop(Worker& self) {
    in_pool_task = true;
    uint32_t seen = 0;
    for (;;) {
      seen = self.wake.AwaitChange(seen, spin);
      if (stop.load(std::memory_order_acquire)) return;
      RunTasks();
      if (pending.word.fetch_sub(1, std::memory_order_seq_cst) == 1) pending.Wake();
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
  if (helpers == 0 || in_pool_task) {
    for (size_t i = 0; i < count; ++i) task(context, i);
    return;
  }
  State& s = *state_;
  std::lock_guard<std::mutex> lock(s.call_mutex);
  s.task = task;
  s.context = context;
  s.count = count;
  s.next.store(0, std::memory_order_relaxed);
  s.pending.word.store(static_cast<uint32_t>(helpers), std::memory_order_relaxed);
  for (size_t w = 0; w < helpers; ++w) {
    Worker& worker = *s.workers[w];
    worker.wake.word.fetch_add(1, std::memory_order_seq_cst);
    worker.wake.Wake();
  }
  in_pool_task = true;  // a nested call from a task of ours runs inline
  s.RunTasks();
  in_pool_task = false;
  for (uint32_t left; (left = s.pending.word.load(std::memory_order_acquire)) != 0;)
    s.pending.AwaitChange(left, s.spin);
}

namespace {

std::atomic<ThreadPool*> process_pool{nullptr};

void ForgetPoolInChild() {
  // The workers did not survive fork(): the child makes its own pool on
  // first use (the parent's stays allocated; its threads are gone).
  process_pool.store(nullptr, std::memory_order_relaxed);
}

}  // namespace

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
  std::call_once(atfork, [] { pthread_atfork(nullptr, nullptr, &ForgetPoolInChild); });
  auto made = std::make_unique<ThreadPool>(Cpu().cores, PoolSpinMicros());
  if (process_pool.compare_exchange_strong(pool, made.get(), std::memory_order_acq_rel))
    return made.release();
  return pool;  // another thread's pool won; ours stops its workers here
}

size_t PoolThreads() {
  const ThreadPool* pool = process_pool.load(std::memory_order_acquire);
  return pool != nullptr ? pool->threads() : 0;
}

}  // namespace leaky::internal

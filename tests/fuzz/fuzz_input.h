// What the C ABI fuzz targets share: a reader of the fuzzer's bytes, the
// caller executors an options struct may carry, and the report of a bug.
#ifndef LEAKY_TESTS_FUZZ_FUZZ_INPUT_H_
#define LEAKY_TESTS_FUZZ_FUZZ_INPUT_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "leaky/eight_bit.h"
#include "leaky/leaky.h"

namespace leaky::fuzz {

// Reads the fuzzer's bytes front to back; zeros once they run out.
class Reader {
 public:
  Reader(const uint8_t* data, size_t size) : data_(data), left_(size) {}
  uint8_t Byte() {
    if (left_ == 0) return 0;
    --left_;
    return *data_++;
  }
  uint64_t Bits(int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{Byte()} << (8 * i);
    return v;
  }
  template <class T, size_t N>
  T Pick(const T (&choices)[N]) {
    return choices[Byte() % N];
  }
  double Double() {
    const uint64_t bits = Bits(8);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  const uint8_t* rest() const { return data_; }
  size_t left() const { return left_; }

 private:
  const uint8_t* data_;
  size_t left_;
};

[[noreturn]] inline void Bug(const char* target, const char* op, const char* what,
                             const std::string& detail) {
  std::fprintf(stderr, "%s: %s: %s %s\n", target, op, what, detail.c_str());
  std::abort();
}

// Executors the caller may pass: each runs every task at least once.
inline void InOrder(void*, size_t count, leaky_task task, void* context) {
  for (size_t i = 0; i < count; ++i) task(context, i);
}
inline void Reversed(void*, size_t count, leaky_task task, void* context) {
  for (size_t i = count; i-- > 0;) task(context, i);
}
inline void Twice(void*, size_t count, leaky_task task, void* context) {
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < count; ++i) task(context, i);
  }
}

// Leaves a refusal of an entry point no target fuzzes as this thread's
// last error, so that a refusal which sets no message of its own shows as
// a message not starting with its entry point.
inline void SetForeignLastError() {
  if (leaky_q8_bias_act_multipliers(1, nullptr, std::numeric_limits<double>::quiet_NaN(),
                                    LEAKY_ACT_LRELU, 0.2, 1.0, nullptr, nullptr) == LEAKY_OK) {
    Bug("fuzz_input", "leaky_q8_bias_act_multipliers", "accepted a NaN gain", "");
  }
}

// Thread count, store policy and executor from the input, as the C ABI
// allows them or not; clears *valid when a choice is one the call must
// refuse. `executor` must outlive the options.
inline leaky_options ReadOptions(Reader& r, leaky_executor* executor, bool* valid) {
  leaky_options options{};
  const int thread_choices[] = {0, 1, 2, 3, 7, 64, LEAKY_MAX_THREADS, LEAKY_MAX_THREADS + 1,
                                -1, 0x7fffffff, 1 << 20, 2};
  options.num_threads = r.Pick(thread_choices);
  if (options.num_threads < 0 || options.num_threads > LEAKY_MAX_THREADS) *valid = false;
  const int stream_choices[] = {-1, 0, 1, -1, 2, -7};
  options.stream_stores = r.Pick(stream_choices);
  if (options.stream_stores > 1 || options.stream_stores < -1) *valid = false;
  const uint8_t executor_kind = r.Byte() % 6;
  const int max_thread_choices[] = {1, 2, 3, 16, 0, LEAKY_MAX_THREADS + 1};
  *executor = {nullptr, nullptr, nullptr, r.Pick(max_thread_choices)};
  if (executor_kind == 1) executor->parallel_for = &InOrder;
  if (executor_kind == 2) executor->parallel_for = &Reversed;
  if (executor_kind == 3) executor->parallel_for = &Twice;
  if (executor_kind >= 1 && executor_kind <= 4) {
    options.executor = executor;
    if (executor_kind == 4 || executor->max_threads < 1 ||
        executor->max_threads > LEAKY_MAX_THREADS) {
      *valid = false;  // 4: neither parallel_for nor a pthreadpool
    }
  }
  return options;
}

}  // namespace leaky::fuzz

#endif  // LEAKY_TESTS_FUZZ_FUZZ_INPUT_H_

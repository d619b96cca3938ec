// Caller-owned threads (leaky_options.executor): results are bit-identical
// to the library's own pool for every op family, thread count and task
// order (an executor that runs tasks in reverse order on three threads, and
// a caller's pthreadpool); the FP guard runs inside every task on the
// executor's threads, which keep their own FTZ/DAZ state; a malformed
// executor is refused before anything runs.
#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "plan/cpu_plan.h"
#include "runtime/pool.h"
#include "test_util.h"

namespace leaky::test {
namespace {

// Runs the tasks in reverse order, spread over three threads of its own,
// with FTZ/DAZ set on those threads (a caller's threads may have any state);
// checks that each task leaves the thread's state as it found it.
struct ReverseExecutor {
  std::atomic<int> tasks_run{0};
  std::atomic<int> state_changed{0};
  static void ParallelFor(void* context, size_t count, leaky_task task, void* task_context) {
    auto* self = static_cast<ReverseExecutor*>(context);
    std::vector<std::thread> threads;
    for (size_t t = 0; t < 3; ++t) {
      threads.emplace_back([=] {
        SetFpControl(FpControl() | kFlushBits);
        for (size_t i = count; i-- > 0;) {
          if (i % 3 != t) continue;
          const uint64_t before = FpControl();
          task(task_context, i);
          if (FpControl() != before) self->state_changed++;
          self->tasks_run++;
        }
      });
    }
    for (auto& thread : threads) thread.join();
  }
};

// Every op family on the same inputs with the given options; the outputs
// concatenated as bytes.
std::vector<uint8_t> RunEveryOp(const leaky_options& options) {
  const size_t n = (size_t{1} << 18) + 13;
  const size_t outer = 37, channels = 16, inner = 451;  // n2 = 266,992
  const size_t n2 = outer * channels * inner;
  auto x = RandomWithSpecials<float>(n2, 1);
  // Subnormal inputs whose outputs stay subnormal: FTZ/DAZ would flush them.
  for (size_t i = 0; i < n2; i += 97) x[i] = -1e-39f;
  const auto dy = RandomWithSpecials<float>(n2, 2);
  const auto b = RandomWithSpecials<float>(channels, 3);
  std::vector<float> w(channels, 0.25f);
  std::vector<float> out(10 * n2), small(2 * channels);
  std::vector<uint8_t> mask((n2 + 7) / 8);
  float* o = out.data();
  const leaky_rrelu_params rrelu{0.1, 0.3, 1, 77, 5};
  const leaky_bias_act_params act{LEAKY_ACT_LRELU, 0.2, 1.4, -1.0};
  const leaky_dropout_params dropout{0.3, 9, 11};
  EXPECT_EQ(leaky_relu_forward(LEAKY_F32, n, x.data(), o, 0.2, &options), LEAKY_OK);
  EXPECT_EQ(leaky_relu_backward(LEAKY_F32, n, dy.data(), x.data(), 0, o + n2, 0.2, &options),
            LEAKY_OK);
  EXPECT_EQ(leaky_plain_relu_forward(LEAKY_F32, n, x.data(), o + 2 * n2, &options), LEAKY_OK);
  EXPECT_EQ(leaky_elu_forward(LEAKY_F32, n, x.data(), o + 3 * n2, 1.0, 1.0, 1.0, &options),
            LEAKY_OK);
  EXPECT_EQ(leaky_prelu_backward(LEAKY_F32, outer, channels, inner, dy.data(), x.data(), w.data(),
                                 o + 4 * n2, small.data(), &options),
            LEAKY_OK);
  EXPECT_EQ(leaky_rrelu_forward(LEAKY_F32, n2, x.data(), o + 5 * n2, o + 6 * n2, &rrelu, &options),
            LEAKY_OK);
  EXPECT_EQ(leaky_bias_act_dropout_forward(LEAKY_F32, outer, channels, inner, x.data(), b.data(),
                                           o + 7 * n2, mask.data(), &act, &dropout, &options),
            LEAKY_OK);
  EXPECT_EQ(leaky_bias_act_backward(LEAKY_F32, outer, channels, inner, dy.data(), x.data(),
                                    b.data(), o + 8 * n2, small.data() + channels, &act, &options),
            LEAKY_OK);
  std::vector<uint8_t> bytes(out.size() * sizeof(float) + small.size() * sizeof(float) +
                             mask.size());
  std::memcpy(bytes.data(), out.data(), out.size() * sizeof(float));
  std::memcpy(bytes.data() + out.size() * sizeof(float), small.data(),
              small.size() * sizeof(float));
  std::memcpy(bytes.data() + (out.size() + small.size()) * sizeof(float), mask.data(),
              mask.size());
  return bytes;
}

TEST(Executor, ResultsAreTheSameForEveryExecutorAndTaskOrder) {
  internal::SetMinBytesPerCoreForTesting(1);  // split every call
  const std::vector<uint8_t> expected = RunEveryOp(leaky_options{1, -1, nullptr});
  for (int threads : {2, 3, 4}) {
    ASSERT_EQ(RunEveryOp(leaky_options{threads, -1, nullptr}), expected) << threads;
    ReverseExecutor reverse;
    const leaky_executor executor{&ReverseExecutor::ParallelFor, &reverse, nullptr, 3};
    ASSERT_EQ(RunEveryOp(leaky_options{threads, -1, &executor}), expected) << threads;
    EXPECT_GT(reverse.tasks_run.load(), 0) << "the executor was never used";
    EXPECT_EQ(reverse.state_changed.load(), 0) << "a task changed its thread's MXCSR";
    pthreadpool_t pool = pthreadpool_create(3);
    const leaky_executor on_pool{nullptr, nullptr, pool, 3};
    ASSERT_EQ(RunEveryOp(leaky_options{threads, -1, &on_pool}), expected) << threads;
    pthreadpool_destroy(pool);
  }
  // num_threads 0 takes the executor's max_threads.
  ReverseExecutor reverse;
  const leaky_executor executor{&ReverseExecutor::ParallelFor, &reverse, nullptr, 4};
  ASSERT_EQ(RunEveryOp(leaky_options{0, -1, &executor}), expected);
  EXPECT_GT(reverse.tasks_run.load(), 0);
  internal::SetMinBytesPerCoreForTesting(0);
}

// Runs the tasks one after another, in index order, on the calling thread:
// a caller's pool whose other threads are all busy. Task 0 then finds every
// other core's range unclaimed and must take it tile by tile from the back
// (ops/driver.cc); the later tasks find nothing left.
struct InOrderExecutor {
  static void ParallelFor(void*, size_t count, leaky_task task, void* task_context) {
    for (size_t i = 0; i < count; ++i) task(task_context, i);
  }
};

TEST(Executor, TheFirstTaskTakesTheTilesOfTasksThatHaveNotStarted) {
  internal::SetMinBytesPerCoreForTesting(1);  // split every call
  const size_t n = (size_t{1} << 18) + 13;
  const auto x = RandomWithSpecials<float>(n, 4);
  std::vector<float> expected(n);
  for (size_t i = 0; i < n; ++i) expected[i] = reference::leaky_relu_forward(x[i], 0.2);
  const leaky_executor in_order{&InOrderExecutor::ParallelFor, nullptr, nullptr, 3};
  const leaky_options options{3, 0, &in_order};  // no streaming stores: the plan below
  for (bool in_place : {false, true}) {
    std::vector<float> y = in_place ? x : std::vector<float>(n, 7.0f);
    // The driver's plan for this call (x and y, four bytes each; the
    // output's address sets the grid's lead).
    leaky_tiling plan;
    ASSERT_EQ(internal::PlanForCpu("test", n, sizeof(float), 2, options, y.data(), &plan), LEAKY_OK);
    ASSERT_EQ(plan.cores_used, 3u);
    uint64_t others = 0;  // tiles of cores 1 and 2
    for (uint32_t core = 1; core < 3; ++core) others += leaky_tiling_tile_count(&plan, core);
    ASSERT_GT(others, 2u);
    const uint64_t before = internal::ProcessPoolStats().tiles_stolen;
    ASSERT_EQ(leaky_relu_forward(LEAKY_F32, n, in_place ? y.data() : x.data(), y.data(), 0.2,
                                 &options),
              LEAKY_OK);
    // Each element once: a tile run twice in place would scale by 0.04, one
    // left out would keep x (in place) or 7 (out of place).
    EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1) << in_place;
    EXPECT_EQ(internal::ProcessPoolStats().tiles_stolen - before, others) << in_place;
  }
  internal::SetMinBytesPerCoreForTesting(0);
}

TEST(Executor, AMalformedExecutorIsRefused) {
  std::vector<float> x(8, -1.0f), y(8, 7.0f);
  const leaky_executor nothing{nullptr, nullptr, nullptr, 2};
  const leaky_options no_target{2, -1, &nothing};
  EXPECT_EQ(leaky_relu_forward(LEAKY_F32, 8, x.data(), y.data(), 0.1, &no_target),
            LEAKY_ERROR_INVALID_OPTIONS);
  EXPECT_NE(std::strstr(leaky_last_error(), "neither parallel_for nor pthreadpool"), nullptr)
      << leaky_last_error();
  ReverseExecutor reverse;
  const leaky_executor zero{&ReverseExecutor::ParallelFor, &reverse, nullptr, 0};
  const leaky_options zero_threads{0, -1, &zero};
  EXPECT_EQ(leaky_relu_forward(LEAKY_F32, 8, x.data(), y.data(), 0.1, &zero_threads),
            LEAKY_ERROR_INVALID_OPTIONS);
  EXPECT_NE(std::strstr(leaky_last_error(), "max_threads 0"), nullptr) << leaky_last_error();
  for (float v : y) EXPECT_EQ(v, 7.0f);  // outputs untouched
}

}  // namespace
}  // namespace leaky::test

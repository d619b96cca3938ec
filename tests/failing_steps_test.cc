// Every entry point either returns LEAKY_OK with the exact result or an
// error with every byte it was given untouched: for thread counts outside
// the plan's range (65537 once returned LEAKY_OK with garbage and left the
// next call to crash), and when each internal step that can fail after the
// operand checks (the plan, the thread pool) fails in turn.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "leaky/eight_bit.h"
#include "leaky/leaky.h"
#include "plan/cpu_plan.h"
#include "runtime/error.h"

namespace leaky::test {
namespace {

constexpr size_t kOuter = 4, kChannels = 8, kInner = 256;
constexpr size_t kN = kOuter * kChannels * kInner;

// Every operand of a call lives in one arena of doubles filled with a
// pattern (finite, both signs, zeros), so "untouched" is one comparison.
struct Arena {
  std::vector<double> words = std::vector<double>(8 * kN);
  Arena() {
    for (size_t i = 0; i < words.size(); ++i) {
      words[i] = (i % 7 == 0) ? 0.0 : (i % 2 ? -1.0 : 1.0) * static_cast<double>(i % 97) / 8;
    }
  }
  // The k-th of eight regions of kN doubles (room for kN elements of any type).
  void* at(int k) { return words.data() + k * kN; }
  float* f32(int k) { return static_cast<float*>(at(k)); }
};

using Call = std::function<leaky_status(const leaky_options*, Arena&)>;

struct EntryPoint {
  const char* name;
  Call call;
};

std::vector<EntryPoint> EntryPoints() {
  static const leaky_bias_act_params act{LEAKY_ACT_LRELU, 0.2, 1.4142135623730951, 256.0};
  static const leaky_rrelu_params train{0.125, 1.0 / 3, 1, 42, 0};
  static const leaky_dropout_params drop{0.25, 7, 0};
  static const leaky_q8_params qu8 = leaky_q8_params_init(LEAKY_QU8);
  static const leaky_q8_params fp8 = leaky_q8_params_init(LEAKY_FP8_E4M3);
  static const leaky_q8_bias_act_params q8act = leaky_q8_bias_act_params_init(LEAKY_QU8);
  // One multiplier per channel: the parameters may say per_channel.
  static const double positive[kChannels] = {0.01, 0.02, 0.01, 0.03, 0.01, 0.02, 0.01, 0.05};
  static const double negative[kChannels] = {0.002, 0.004, 0.002, 0.006, 0.002, 0.004, 0.002, 0.01};
  static const float weights[kChannels] = {0.25f, -0.5f, 0.0f, 1.0f, 0.125f, 2.0f, -1.0f, 0.3f};
  auto u8 = [](Arena& a, int k) { return static_cast<uint8_t*>(a.at(k)); };
  auto i32 = [](Arena& a, int k) { return static_cast<int32_t*>(a.at(k)); };
  return {
      {"leaky_relu_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_relu_forward(LEAKY_F32, kN, a.at(0), a.at(1), 0.2, o);
       }},
      {"leaky_relu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_relu_backward(LEAKY_BF16, kN, a.at(0), a.at(1), 0, a.at(2), 0.2, o);
       }},
      {"leaky_plain_relu_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_plain_relu_forward(LEAKY_F16, kN, a.at(0), a.at(1), o);
       }},
      {"leaky_plain_relu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_plain_relu_backward(LEAKY_F64, kN, a.at(0), a.at(1), a.at(2), o);
       }},
      {"leaky_elu_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_elu_forward(LEAKY_F32, kN, a.at(0), a.at(1), 1.0, 1.0, 1.0, o);
       }},
      {"leaky_elu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_elu_backward(LEAKY_F32, kN, a.at(0), a.at(1), 0, a.at(2), 1.0, 1.0, 1.0, o);
       }},
      {"leaky_prelu_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_prelu_forward(LEAKY_F32, kOuter, kChannels, kInner, a.at(0), a.at(1),
                                    a.at(2), o);
       }},
      {"leaky_prelu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_prelu_backward(LEAKY_F32, kOuter, kChannels, kInner, a.at(0), a.at(1),
                                     a.at(2), a.at(3), a.at(4), o);
       }},
      {"leaky_rrelu_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_rrelu_forward(LEAKY_F32, kN, a.at(0), a.at(1), a.at(2), &train, o);
       }},
      {"leaky_rrelu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_rrelu_backward(LEAKY_F32, kN, a.at(0), a.at(1), a.at(2), &train, o);
       }},
      {"leaky_bias_act_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_bias_act_forward(LEAKY_F16, kOuter, kChannels, kInner, a.at(0), a.at(1),
                                       a.at(2), &act, o);
       }},
      {"leaky_bias_act_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_bias_act_backward(LEAKY_F32, kOuter, kChannels, kInner, a.at(0), a.at(1),
                                        a.at(2), a.at(3), a.at(4), &act, o);
       }},
      {"leaky_bias_act_dropout_forward",
       [u8](const leaky_options* o, Arena& a) {
         return leaky_bias_act_dropout_forward(LEAKY_F32, kOuter, kChannels, kInner, a.at(0),
                                               a.at(1), a.at(2), u8(a, 3), &act, &drop, o);
       }},
      {"leaky_bias_act_dropout_backward",
       [u8](const leaky_options* o, Arena& a) {
         return leaky_bias_act_dropout_backward(LEAKY_F32, kOuter, kChannels, kInner, a.at(0),
                                                a.at(1), a.at(2), u8(a, 3), a.at(4), a.at(5),
                                                &act, 0.25, o);
       }},
      {"leaky_q8_leaky_relu_forward",
       [](const leaky_options* o, Arena& a) {
         return leaky_q8_leaky_relu_forward(&qu8, kN, a.at(0), a.at(1), 0.2, o);
       }},
      {"leaky_q8_leaky_relu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_q8_leaky_relu_backward(&fp8, kN, a.at(0), a.at(1), 0, a.at(2), 0.2, o);
       }},
      {"leaky_q8_prelu_backward",
       [](const leaky_options* o, Arena& a) {
         return leaky_q8_prelu_backward(&fp8, kOuter, kChannels, kInner, a.at(0), a.at(1),
                                        weights, a.at(2), a.f32(3), o);
       }},
      {"leaky_q8_bias_act_forward",
       [i32](const leaky_options* o, Arena& a) {
         return leaky_q8_bias_act_forward(&q8act, kOuter, kChannels, kInner, i32(a, 0), i32(a, 1),
                                          positive, negative, a.at(2), o);
       }},
  };
}

// The error names the entry point and the arena is unchanged.
void ExpectRefused(const EntryPoint& e, const leaky_options& options, leaky_status expected,
                   const char* needle) {
  Arena arena;
  const Arena before = arena;
  const leaky_status got = e.call(&options, arena);
  EXPECT_EQ(got, expected) << e.name << ": " << leaky_status_string(got) << ": "
                           << leaky_last_error();
  const std::string message = leaky_last_error();
  EXPECT_EQ(message.rfind(e.name, 0), 0u) << e.name << ": '" << message << "'";
  EXPECT_NE(message.find(needle), std::string::npos) << e.name << ": '" << message << "'";
  EXPECT_EQ(std::memcmp(arena.words.data(), before.words.data(), arena.words.size() * 8), 0)
      << e.name << ": a byte was written despite the error";
}

// Splits calls of a few KiB over cores, so the pool is used.
struct SmallCallsSplit {
  SmallCallsSplit() { internal::SetMinBytesPerCoreForTesting(1024); }
  ~SmallCallsSplit() {
    internal::SetMinBytesPerCoreForTesting(0);
    internal::FailStepForTesting(internal::Step::kNone);
  }
};

void InOrder(void*, size_t count, leaky_task task, void* context) {
  for (size_t i = 0; i < count; ++i) task(context, i);
}

TEST(FailingSteps, ThreadCountsOutsideThePlansRangeAreRefused) {
  const leaky_executor too_wide{&InOrder, nullptr, nullptr, LEAKY_MAX_THREADS + 1};
  for (const EntryPoint& e : EntryPoints()) {
    for (int threads : {LEAKY_MAX_THREADS + 1, 1 << 20, INT32_MAX, -1}) {
      ExpectRefused(e, {threads, -1, nullptr}, LEAKY_ERROR_INVALID_OPTIONS, "num_threads");
    }
    ExpectRefused(e, {0, -1, &too_wide}, LEAKY_ERROR_INVALID_OPTIONS, "max_threads");
  }
}

// The largest count allowed runs, and gives the one-thread call's bytes.
TEST(FailingSteps, TheLargestThreadCountGivesTheOneThreadResult) {
  SmallCallsSplit split;
  for (const EntryPoint& e : EntryPoints()) {
    Arena one, many;
    const leaky_options single{1, -1, nullptr}, widest{LEAKY_MAX_THREADS, -1, nullptr};
    ASSERT_EQ(e.call(&single, one), LEAKY_OK) << e.name << ": " << leaky_last_error();
    ASSERT_EQ(e.call(&widest, many), LEAKY_OK) << e.name << ": " << leaky_last_error();
    EXPECT_EQ(std::memcmp(one.words.data(), many.words.data(), one.words.size() * 8), 0) << e.name;
    EXPECT_NE(std::memcmp(one.words.data(), Arena().words.data(), one.words.size() * 8), 0)
        << e.name << ": the call wrote nothing";
  }
}

TEST(FailingSteps, AFailedPlanReachesTheCallerBeforeAnyWrite) {
  SmallCallsSplit split;
  internal::FailStepForTesting(internal::Step::kPlan);
  for (const EntryPoint& e : EntryPoints()) {
    for (int threads : {1, 2}) {
      ExpectRefused(e, {threads, -1, nullptr}, LEAKY_ERROR_INVALID_OPTIONS, "could not be planned");
    }
  }
}

TEST(FailingSteps, AThreadPoolThatCannotStartReachesTheCallerBeforeAnyWrite) {
  SmallCallsSplit split;
  internal::FailStepForTesting(internal::Step::kThreads);
  for (const EntryPoint& e : EntryPoints()) {
    ExpectRefused(e, {2, -1, nullptr}, LEAKY_ERROR_INTERNAL, "thread pool");
  }
  // A caller's executor needs no pool.
  internal::FailStepForTesting(internal::Step::kThreads);
  const leaky_executor mine{&InOrder, nullptr, nullptr, 2};
  for (const EntryPoint& e : EntryPoints()) {
    Arena arena;
    const leaky_options options{2, -1, &mine};
    EXPECT_EQ(e.call(&options, arena), LEAKY_OK) << e.name << ": " << leaky_last_error();
  }
}

}  // namespace
}  // namespace leaky::test

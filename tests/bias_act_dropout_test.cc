// bias_act with dropout beyond the per-kernel sweeps
// (indexed_kernels_test.cc): the mask the same for every thread count, and
// keeping 1 - p of the elements.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test {
namespace {

TEST(BiasActDropout, MaskIsTheSameForEveryThreadCountAndKeepsOneMinusP) {
  const size_t outer = 64, channels = 8, inner = 4099, n = outer * channels * inner;
  const auto x = RandomWithSpecials<float>(n, 12), b = RandomWithSpecials<float>(channels, 13);
  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, std::sqrt(2.0), -1.0};
  const leaky_dropout_params dropout{0.3, 99, 0};
  std::vector<uint8_t> first_mask;
  std::vector<float> first_y;
  for (int threads : {1, 2, 3, 4}) {
    const leaky_options options{threads, -1};
    std::vector<float> y(n);
    std::vector<uint8_t> mask((n + 7) / 8);
    ASSERT_EQ(leaky_bias_act_dropout_forward(LEAKY_F32, outer, channels, inner, x.data(), b.data(),
                                             y.data(), mask.data(), &params, &dropout, &options),
              LEAKY_OK);
    if (threads == 1) {
      first_mask = mask;
      first_y = y;
    }
    EXPECT_EQ(mask, first_mask) << threads;
    EXPECT_EQ(std::memcmp(y.data(), first_y.data(), n * sizeof(float)), 0) << threads;
  }
  size_t kept = 0;
  for (uint8_t byte : first_mask) kept += static_cast<size_t>(std::popcount(byte));
  const double expected = 0.7 * static_cast<double>(n);
  EXPECT_NEAR(static_cast<double>(kept), expected, 5 * std::sqrt(expected * 0.3));
}

// The highest threshold that keeps anything, 65535 (p = 65535/65536):
// only the 16-bit halves 0xFFFF are kept, about one element in 65536, so
// a compare that is off by one at the top (> for >=, a signed 16-bit
// compare, a threshold cut to 16 bits) keeps none or all. Half a million
// elements from an odd offset, every target, bit by bit against the stream.
TEST(BiasActDropout, TheTopThresholdKeepsOnlyTheAllOnesHalves) {
  const size_t n = size_t{1} << 19;
  const std::vector<float> x(n, 1.0f);
  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, 1.0, -1.0};
  const leaky_dropout_params dropout{65535.0 / 65536.0, 2024, 1000003};
  size_t expected = 0;
  for (size_t i = 0; i < n; ++i) expected += DropoutKept(dropout, i);
  ASSERT_GE(expected, 2u) << "the stream keeps too few elements here to test anything";
  ForEachTarget([&](const std::string&) {
    const leaky_options options{2, -1};
    std::vector<float> y(n);
    std::vector<uint8_t> mask((n + 7) / 8);
    ASSERT_EQ(leaky_bias_act_dropout_forward(LEAKY_F32, 1, 1, n, x.data(), nullptr, y.data(),
                                             mask.data(), &params, &dropout, &options),
              LEAKY_OK);
    size_t kept = 0, wrong = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool bit = (mask[i / 8] >> (i % 8)) & 1;
      kept += bit;
      wrong += bit != DropoutKept(dropout, i);
    }
    EXPECT_EQ(wrong, 0u) << kept << " kept, " << expected << " expected";
  });
}

// An output that is not 64-byte aligned (a std::vector's 16 bytes, a
// NumPy array's) shifts the plan's tiles to memory lines, so tiles and the
// chunks inside them start between mask bytes: the bytes they share are
// written in two steps, by two threads at tile edges (atomically) and by
// one at chunk edges. Every bit against the stream, bytes around the mask
// untouched.
TEST(BiasActDropout, MaskBitsWhereTilesStartBetweenMaskBytes) {
  const size_t outer = 2, channels = 3, inner = 70001, n = outer * channels * inner;
  const auto x = RandomWithSpecials<float>(n, 21), b = RandomWithSpecials<float>(channels, 22);
  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, std::sqrt(2.0), -1.0};
  const leaky_dropout_params dropout{0.4, 5, 77};
  std::vector<float> storage(n + 64);
  for (size_t misalign : {0, 1, 3, 4, 12}) {
    float* y = storage.data();
    while (reinterpret_cast<uintptr_t>(y) % 64 != 0) ++y;
    y += misalign;
    for (int threads : {1, 2, 3}) {
      const leaky_options options{threads, -1};
      std::vector<uint8_t> mask((n + 7) / 8 + 2, 0xA5);
      ASSERT_EQ(leaky_bias_act_dropout_forward(LEAKY_F32, outer, channels, inner, x.data(),
                                               b.data(), y, mask.data() + 1, &params, &dropout,
                                               &options),
                LEAKY_OK);
      EXPECT_EQ(mask.front(), 0xA5) << misalign << " " << threads;
      EXPECT_EQ(mask.back(), 0xA5) << misalign << " " << threads;
      size_t wrong = 0, first_wrong = n;
      for (size_t i = 0; i < n; ++i) {
        const bool bit = (mask[1 + i / 8] >> (i % 8)) & 1;
        if (bit != DropoutKept(dropout, i) && wrong++ == 0) first_wrong = i;
      }
      EXPECT_EQ(wrong, 0u) << "output misaligned by " << misalign << " floats, " << threads
                           << " thread(s): first wrong bit " << first_wrong;
    }
  }
}

}  // namespace
}  // namespace leaky::test

// RReLU beyond the per-kernel sweeps (indexed_kernels_test.cc): the random
// slopes and noise the same for every thread count and split, and the
// evaluation mode (LeakyReLU with the mean slope).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test {
namespace {

TEST(Rrelu, SameForEveryThreadCountAndSplit) {
  const size_t n = (size_t{1} << 20) + 13;
  const auto x = RandomWithSpecials<float>(n, 9);
  const leaky_rrelu_params p{0.1, 0.4, 1, 2024, 5};
  std::vector<float> first_y, first_noise;
  for (int threads : {1, 2, 3, 4}) {
    const leaky_options options{threads, -1};
    std::vector<float> y(n), noise(n);
    ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, n, x.data(), y.data(), noise.data(), &p, &options),
              LEAKY_OK);
    if (threads == 1) {
      first_y = y;
      first_noise = noise;
    }
    EXPECT_EQ(std::memcmp(y.data(), first_y.data(), n * sizeof(float)), 0) << threads;
    EXPECT_EQ(std::memcmp(noise.data(), first_noise.data(), n * sizeof(float)), 0) << threads;
  }
  // Two calls that continue the stream (offset + first part) give the same.
  const size_t split = 100003;
  std::vector<float> y(n), noise(n);
  leaky_rrelu_params second = p;
  second.offset = p.offset + split;
  ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, split, x.data(), y.data(), noise.data(), &p, nullptr),
            LEAKY_OK);
  ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, n - split, x.data() + split, y.data() + split,
                                noise.data() + split, &second, nullptr),
            LEAKY_OK);
  EXPECT_EQ(std::memcmp(y.data(), first_y.data(), n * sizeof(float)), 0);
  // The slopes of negative inputs are spread over [lower, upper].
  double sum = 0.0, low = 1.0, high = 0.0;
  size_t negatives = 0;
  for (size_t i = 0; i < n; ++i) {
    if (x[i] <= 0) {
      ++negatives;
      sum += first_noise[i];
      low = std::min(low, static_cast<double>(first_noise[i]));
      high = std::max(high, static_cast<double>(first_noise[i]));
    } else {
      ASSERT_EQ(first_noise[i], 1.0f);
    }
  }
  EXPECT_GE(low, 0.1 - 1e-7);
  EXPECT_LE(high, 0.4 + 1e-7);
  EXPECT_LT(low, 0.1001);
  EXPECT_GT(high, 0.3999);
  // Mean of U(0.1, 0.4): 0.25, sd 0.0866; 5 sigma of the mean of ~5e5 draws.
  EXPECT_NEAR(sum / static_cast<double>(negatives), 0.25,
              5 * 0.0866 / std::sqrt(static_cast<double>(negatives)));
}

TEST(Rrelu, EvaluationIsLeakyReluWithTheMeanSlope) {
  const size_t n = 1000;
  const auto x = RandomWithSpecials<float>(n, 10), dy = RandomWithSpecials<float>(n, 11);
  const leaky_rrelu_params p{0.125, 1.0 / 3.0, 0, 1, 0};
  std::vector<float> y(n), expected(n), dx(n), expected_dx(n);
  std::vector<float> noise(n, 5.0f);
  ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, n, x.data(), y.data(), noise.data(), &p, nullptr),
            LEAKY_OK);
  ASSERT_EQ(
      leaky_relu_forward(LEAKY_F32, n, x.data(), expected.data(), (0.125 + 1.0 / 3.0) / 2, nullptr),
      LEAKY_OK);
  ASSERT_EQ(leaky_rrelu_backward(LEAKY_F32, n, dy.data(), x.data(), dx.data(), &p, nullptr),
            LEAKY_OK);
  ASSERT_EQ(leaky_relu_backward(LEAKY_F32, n, dy.data(), x.data(), 0, expected_dx.data(),
                                (0.125 + 1.0 / 3.0) / 2, nullptr),
            LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  EXPECT_EQ(FirstMismatch(dx.data(), expected_dx.data(), n), -1);
  EXPECT_EQ(noise, std::vector<float>(n, 5.0f));  // not written in evaluation
}

}  // namespace
}  // namespace leaky::test

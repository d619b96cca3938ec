// PReLU beyond the per-kernel sweeps (indexed_kernels_test.cc): the weight
// gradient the same for every thread count.
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

TEST(Prelu, WeightGradientIsTheSameForAnyThreadCount) {
  const size_t outer = 32, channels = 16, inner = 2053, n = outer * channels * inner;
  const auto x = RandomWithSpecials<float>(n, 14), dy = RandomWithSpecials<float>(n, 15);
  const std::vector<float> w(channels, 0.25f);
  std::vector<float> dx(n), first(channels), dw(channels);
  for (int threads : {1, 2, 3, 4}) {
    const leaky_options options{threads, -1};
    ASSERT_EQ(leaky_prelu_backward(LEAKY_F32, outer, channels, inner, dy.data(), x.data(), w.data(),
                                   dx.data(), dw.data(), &options),
              LEAKY_OK);
    if (threads == 1) first = dw;
    EXPECT_EQ(std::memcmp(first.data(), dw.data(), channels * sizeof(float)), 0) << threads;
  }
}

}  // namespace
}  // namespace leaky::test

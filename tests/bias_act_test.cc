// bias_act beyond the per-kernel sweeps (indexed_kernels_test.cc): db
// identical for every thread count; errors leave every output untouched.
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

struct Layout {
  size_t outer, channels, inner;
};

template <class T>
std::vector<T> Random(size_t n, uint32_t seed) {
  return RandomWithSpecials<T>(n, seed);
}

TEST(BiasAct, BiasGradientIsTheSameForAnyThreadCount) {
  const Layout l{64, 8, 4099};
  const size_t n = l.outer * l.channels * l.inner;
  const auto x = Random<float>(n, 5), dy = Random<float>(n, 6), b = Random<float>(l.channels, 7);
  const leaky_bias_act_params p{LEAKY_ACT_LRELU, 0.2, std::sqrt(2.0), -1.0};
  std::vector<float> dx(n), first(l.channels), db(l.channels);
  for (int threads : {1, 2, 3, 4}) {
    const leaky_options options{threads, -1};
    ASSERT_EQ(leaky_bias_act_backward(LEAKY_F32, l.outer, l.channels, l.inner, dy.data(), x.data(),
                                      b.data(), dx.data(), db.data(), &p, &options),
              LEAKY_OK);
    if (threads == 1) first = db;
    EXPECT_EQ(std::memcmp(first.data(), db.data(), db.size() * sizeof(float)), 0) << threads;
  }
}

TEST(BiasAct, ErrorsLeaveOutputsUntouched) {
  std::vector<float> buffer(4000, 3.0f);
  const std::vector<float> snapshot = buffer;
  float* x = buffer.data();
  float* y = x + 1000;
  float* b = x + 2000;
  float* db = x + 3000;
  const leaky_bias_act_params good{LEAKY_ACT_LRELU, 0.2, 1.4, -1.0};
  auto expect = [&](leaky_status got, leaky_status want, const char* needle) {
    EXPECT_EQ(got, want) << leaky_last_error();
    EXPECT_NE(std::strstr(leaky_last_error(), needle), nullptr) << leaky_last_error();
    EXPECT_EQ(buffer, snapshot);
  };
  leaky_bias_act_params bad = good;
  const int invalid_activation = 7;  // as a C caller could store it
  std::memcpy(&bad.activation, &invalid_activation, sizeof(int));
  expect(leaky_bias_act_forward(LEAKY_F32, 10, 10, 10, x, b, y, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "activation 7");
  bad = good;
  bad.alpha = NAN;
  expect(leaky_bias_act_forward(LEAKY_F32, 10, 10, 10, x, b, y, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "alpha");
  bad = good;
  bad.clamp = INFINITY;
  expect(leaky_bias_act_forward(LEAKY_F32, 10, 10, 10, x, b, y, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "clamp");
  expect(leaky_bias_act_forward(LEAKY_F32, 10, 10, 10, x, b, y, nullptr, nullptr),
         LEAKY_ERROR_NULL_POINTER, "params");
  expect(leaky_bias_act_forward(LEAKY_F32, SIZE_MAX / 2, 4, 4, x, b, y, &good, nullptr),
         LEAKY_ERROR_SIZE, "overflows");
  expect(leaky_bias_act_forward(LEAKY_F32, 10, 10, 10, x, y + 995, y, &good, nullptr),
         LEAKY_ERROR_OVERLAP, "bias");
  expect(leaky_bias_act_backward(LEAKY_F32, 10, 10, 10, x, x, b, y, y + 990, &good, nullptr),
         LEAKY_ERROR_OVERLAP, "db overlaps dx");
  expect(leaky_bias_act_backward(LEAKY_F32, 10, 10, 10, x, nullptr, b, y, db, &good, nullptr),
         LEAKY_ERROR_NULL_POINTER, "x is null");
}

}  // namespace
}  // namespace leaky::test

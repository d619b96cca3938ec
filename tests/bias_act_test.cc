// bias_act forward and backward on every SIMD target: bit-exact against the
// scalar reference for [outer, channels, inner] layouts (including
// channels-last, inner = 1), every activation, with and without clamp and
// bias, 1..4 threads on multi-core plans; db identical for every thread
// count; errors leave every output untouched.
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
constexpr Layout kLayouts[] = {{1, 1, 1000}, {3, 5, 7},  {2, 16, 1},  {4, 3, 33},
                               {1, 64, 1},   {5, 1, 129}, {2, 7, 300}, {37, 3, 1}};

template <class T>
std::vector<T> Random(size_t n, uint32_t seed) {
  return RandomWithSpecials<T>(n, seed);
}

template <class T>
void CheckLayout(const Layout& l, const leaky_bias_act_params& p, bool with_bias, int threads) {
  const size_t n = l.outer * l.channels * l.inner;
  const auto x = Random<T>(n, 1), dy = Random<T>(n, 2), bias = Random<T>(l.channels, 3);
  const T* b = with_bias ? bias.data() : nullptr;
  std::vector<T> y(n), dx(n), db(l.channels);
  const leaky_options options{threads, -1};
  ASSERT_EQ(leaky_bias_act_forward(dtype_of<T>(), l.outer, l.channels, l.inner, x.data(), b,
                                   y.data(), &p, &options),
            LEAKY_OK)
      << leaky_last_error();
  ASSERT_EQ(leaky_bias_act_backward(dtype_of<T>(), l.outer, l.channels, l.inner, dy.data(),
                                    x.data(), b, dx.data(), db.data(), &p, &options),
            LEAKY_OK)
      << leaky_last_error();
  const reference::ieee_environment ieee;
  std::vector<double> sums(l.channels, 0.0);
  for (size_t o = 0; o < l.outer; ++o) {
    for (size_t c = 0; c < l.channels; ++c) {
      for (size_t i = 0; i < l.inner; ++i) {
        const size_t k = (o * l.channels + c) * l.inner + i;
        const T bc = b != nullptr ? b[c] : T(-0.0f);
        const T ey = reference::bias_act_forward(x[k], bc, p);
        const T edx = reference::bias_act_backward(dy[k], x[k], bc, p);
        ASSERT_TRUE(SameOrBothNan(y[k], ey))
            << "y[" << k << "] " << Hex(y[k]) << " expected " << Hex(ey) << " act "
            << p.activation << " clamp " << p.clamp << " threads " << threads;
        ASSERT_TRUE(SameOrBothNan(dx[k], edx))
            << "dx[" << k << "] " << Hex(dx[k]) << " expected " << Hex(edx) << " act "
            << p.activation << " clamp " << p.clamp;
        sums[c] += static_cast<double>(static_cast<reference::compute_t<T>>(dx[k]));
      }
    }
  }
  for (size_t c = 0; c < l.channels; ++c) {
    const T expected = T(static_cast<reference::compute_t<T>>(sums[c]));
    ASSERT_TRUE(SameOrBothNan(db[c], expected)) << "db[" << c << "] " << Hex(db[c]);
  }
}

template <class T>
void SweepAll() {
  internal::SetMinBytesPerCoreForTesting(1);  // split even small tensors
  ForEachTarget([](const std::string&) {
    for (const Layout& l : kLayouts) {
      for (leaky_activation act : {LEAKY_ACT_LINEAR, LEAKY_ACT_RELU, LEAKY_ACT_LRELU}) {
        for (double clamp : {-1.0, 0.5, 256.0}) {
          for (double gain : {1.0, std::sqrt(2.0)}) {
            const leaky_bias_act_params p{act, 0.2, gain, clamp};
            for (bool with_bias : {true, false}) {
              for (int threads : {1, 2, 4}) {
                CheckLayout<T>(l, p, with_bias, threads);
                if (::testing::Test::HasFatalFailure()) return;
              }
            }
          }
        }
      }
    }
  });
  internal::SetMinBytesPerCoreForTesting(0);
}

TEST(BiasAct, Float32) { SweepAll<float>(); }
TEST(BiasAct, Float64) { SweepAll<double>(); }
TEST(BiasAct, Float16) { SweepAll<float16>(); }
TEST(BiasAct, BFloat16) { SweepAll<bfloat16>(); }

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

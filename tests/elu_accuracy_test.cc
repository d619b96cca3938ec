// ELU's error against the reference (reference.hpp), on every SIMD target
// this CPU runs: every f16 and bf16 input, a dense sweep of f32 (every 61st
// float of the negative side, where expm1/exp matter, plus the positive side)
// and random f64. Prints the measured maxima and asserts the header's bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "test_util.h"

namespace leaky::test {
namespace {

// Distance in units in the last place: the difference of the values' ranks
// on the ordered line of floats (+0 and -0 share a rank). NaN must meet NaN.
template <class T>
int64_t Rank(T v) {
  int64_t magnitude, negative;
  if constexpr (sizeof(T) == 2) {
    magnitude = v.bits & 0x7fff;
    negative = v.bits >> 15;
  } else if constexpr (sizeof(T) == 4) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    magnitude = b & 0x7fffffffu;
    negative = b >> 31;
  } else {
    const uint64_t b = std::bit_cast<uint64_t>(v);
    magnitude = static_cast<int64_t>(b & 0x7fffffffffffffffull);
    negative = static_cast<int64_t>(b >> 63);
  }
  return negative ? -magnitude : magnitude;
}

template <class T>
int64_t UlpDistance(T a, T b) {
  if (IsNan(a) || IsNan(b)) return IsNan(a) && IsNan(b) ? 0 : INT64_MAX;
  return std::llabs(Rank(a) - Rank(b));
}

struct Coefficients {
  double alpha, scale, input_scale;
};
// Plain ELU (the error of expm1/exp alone) and SELU-like coefficients.
constexpr Coefficients kPlain{1.0, 1.0, 1.0};
constexpr Coefficients kSelu{1.6732632423543772, 1.0507009873554805, 0.75};
// A negative input_scale sends x <= 0 to expm1 of a positive argument:
// the kernels take Highway's general expm1 there.
constexpr Coefficients kNegativeInputScale{1.0, 1.0, -0.5};

template <class T>
int64_t MaxForwardError(const std::vector<T>& x, Coefficients c) {
  std::vector<T> y(x.size());
  const leaky_options one_thread{1, 0};
  EXPECT_EQ(leaky_elu_forward(dtype_of<T>(), x.size(), x.data(), y.data(), c.alpha, c.scale,
                              c.input_scale, &one_thread),
            LEAKY_OK);
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T expected = reference::elu_forward(x[i], c.alpha, c.scale, c.input_scale);
    worst = std::max(worst, UlpDistance(y[i], expected));
  }
  return worst;
}

template <class T>
int64_t MaxBackwardError(const std::vector<T>& x, const std::vector<T>& dy, Coefficients c) {
  std::vector<T> dx(x.size());
  const leaky_options one_thread{1, 0};
  EXPECT_EQ(leaky_elu_backward(dtype_of<T>(), x.size(), dy.data(), x.data(), 0, dx.data(),
                               c.alpha, c.scale, c.input_scale, &one_thread),
            LEAKY_OK);
  int64_t worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const T expected = reference::elu_backward(dy[i], x[i], c.alpha, c.scale, c.input_scale);
    worst = std::max(worst, UlpDistance(dx[i], expected));
  }
  return worst;
}

template <class T>
void CheckAllHalfPatterns(const char* name) {
  std::vector<T> x(65536), dy(65536);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  for (uint32_t b = 0; b < 65536; ++b) {
    x[b].bits = static_cast<uint16_t>(b);
    dy[b] = T(uniform(rng));
  }
  ForEachTarget([&](const std::string& target) {
    for (const Coefficients c : {kPlain, kSelu, kNegativeInputScale}) {
      const int64_t forward = MaxForwardError(x, c);
      const int64_t backward = MaxBackwardError(x, dy, c);
      std::printf("[ measured ] %s %s alpha=%g input_scale=%g: forward max %lld ulp, backward max %lld ulp\n",
                  name, target.c_str(), c.alpha, c.input_scale, static_cast<long long>(forward),
                  static_cast<long long>(backward));
      EXPECT_LE(forward, reference::kEluForwardMaxUlpHalf) << target;
      EXPECT_LE(backward, reference::kEluBackwardMaxUlpHalf) << target;
    }
  });
}

TEST(EluAccuracy, EveryFloat16) { CheckAllHalfPatterns<float16>("f16"); }
TEST(EluAccuracy, EveryBFloat16) { CheckAllHalfPatterns<bfloat16>("bf16"); }

TEST(EluAccuracy, DenseFloat32) {
  // Every 61st float from -0 down to past expm1's saturation at -104, then
  // specials and a sample of the positive side. Under QEMU
  // (LEAKY_TEST_QUICK_SWEEP, tests/arm64/run.sh) every 671st (61 x 11): on
  // a Zen 3 host without AVX-512 the dense sweep ran over 15 minutes on
  // 256-bit SVE (37 s on NEON), near the test's 30-minute timeout.
  const uint64_t step = std::getenv("LEAKY_TEST_QUICK_SWEEP") != nullptr ? 61 * 11 : 61;
  std::vector<float> x;
  for (uint64_t b = 0x80000000u; b < 0xC3000000u; b += step) {
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  }
  for (uint64_t b = 0; b < 0x7f800000u; b += 4099) {
    x.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  }
  for (float s : SpecialFloats()) x.push_back(s);
  std::vector<float> dy(x.size());
  std::mt19937 rng(8);
  std::uniform_real_distribution<float> uniform(-3.0f, 3.0f);
  for (float& g : dy) g = uniform(rng);
  ForEachTarget([&](const std::string& target) {
    for (const Coefficients c : {kPlain, kSelu, kNegativeInputScale}) {
      const int64_t forward = MaxForwardError(x, c);
      const int64_t backward = MaxBackwardError(x, dy, c);
      std::printf("[ measured ] f32 %s alpha=%g input_scale=%g: forward max %lld ulp, backward max %lld ulp "
                  "(%zu inputs)\n",
                  target.c_str(), c.alpha, c.input_scale, static_cast<long long>(forward),
                  static_cast<long long>(backward), x.size());
      EXPECT_LE(forward, reference::kEluForwardMaxUlpF32) << target;
      EXPECT_LE(backward, reference::kEluBackwardMaxUlpF32) << target;
    }
  });
}

// input_scale 0 sends -inf to expm1(NaN): NaN must come out (the f32
// kernel's clamps would otherwise turn it into a number), and +-0 and
// finite inputs give expm1(0) = 0 times the coefficient.
// The backward too (exp(NaN) was 0, so dx was 0: c_abi_fuzz found it with
// input_scale -0), in f32 and f64.
TEST(EluAccuracy, ZeroInputScaleSpecials) {
  const std::vector<float> x = {-INFINITY, -1.0f, -0.0f, 0.0f, NAN, INFINITY, -1e-40f, -3e38f};
  const std::vector<float> dy(x.size(), 1.25f);
  const std::vector<double> x64(x.begin(), x.end()), dy64(dy.begin(), dy.end());
  ForEachTarget([&](const std::string& target) {
    for (double input_scale : {0.0, -0.0}) {
      const Coefficients c{1.5, 2.0, input_scale};
      EXPECT_EQ(MaxForwardError(x, c), 0) << target << " " << input_scale;
      EXPECT_EQ(MaxBackwardError(x, dy, c), 0) << target << " " << input_scale;
      EXPECT_EQ(MaxForwardError(x64, c), 0) << target << " " << input_scale;
      EXPECT_EQ(MaxBackwardError(x64, dy64, c), 0) << target << " " << input_scale;
    }
  });
}

TEST(EluAccuracy, RandomFloat64) {
  std::vector<double> x, dy;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<double> wide(-760.0, 40.0);
  std::uniform_real_distribution<double> exponent(-60.0, 0.0);
  std::uniform_real_distribution<double> uniform(-3.0, 3.0);
  for (int i = 0; i < 1000000; ++i) {
    x.push_back(i % 2 == 0 ? wide(rng) : -std::exp2(exponent(rng)));
    dy.push_back(uniform(rng));
  }
  for (double s : SpecialDoubles()) {
    x.push_back(s);
    dy.push_back(1.25);
  }
  ForEachTarget([&](const std::string& target) {
    for (const Coefficients c : {kPlain, kSelu, kNegativeInputScale}) {
      const int64_t forward = MaxForwardError(x, c);
      const int64_t backward = MaxBackwardError(x, dy, c);
      std::printf("[ measured ] f64 %s alpha=%g input_scale=%g: forward max %lld ulp, backward max %lld ulp\n",
                  target.c_str(), c.alpha, c.input_scale, static_cast<long long>(forward),
                  static_cast<long long>(backward));
      EXPECT_LE(forward, c.input_scale < 0 ? reference::kEluForwardMaxUlpF64NegativeInputScale
                                           : reference::kEluForwardMaxUlpF64)
          << target;
      EXPECT_LE(backward, reference::kEluBackwardMaxUlpF64) << target;
    }
  });
}

}  // namespace
}  // namespace leaky::test

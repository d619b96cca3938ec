// f32 and f64: 10^7 random bit patterns plus every special value, forward and
// backward, every slope, every SIMD target, bit-exact; and the same with FTZ
// and DAZ set on the calling thread.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "leaky/reference.hpp"
#include "test_util.h"

namespace leaky::test {
namespace {

constexpr size_t kRandomCount = 10'000'000;

template <class T>
std::vector<T> Inputs(uint64_t seed) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  std::vector<T> values;
  values.reserve(kRandomCount + 200);
  if constexpr (sizeof(T) == 4) {
    values = SpecialFloats();
  } else {
    values = SpecialDoubles();
  }
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<Bits> raw;
  // Half raw bit patterns (every exponent, NaN payloads, subnormals), half
  // values near zero, where the slope multiply produces subnormals.
  std::uniform_real_distribution<double> small(-1e-36, 1e-36);
  while (values.size() < kRandomCount) {
    values.push_back(std::bit_cast<T>(raw(rng)));
    values.push_back(static_cast<T>(small(rng)));
  }
  return values;
}

template <class T>
void CheckRandom(bool flush_denormals) {
  const std::vector<T> x = Inputs<T>(7);
  const std::vector<T> saved = Inputs<T>(8);
  std::vector<T> expected_forward(x.size()), expected_backward(x.size()), y(x.size()),
      dx(x.size());
  for (double slope : kSlopes) {
    SCOPED_TRACE("slope " + std::to_string(slope));
    {
      const reference::ieee_environment ieee;
      for (size_t i = 0; i < x.size(); ++i) {
        expected_forward[i] = reference::leaky_relu_forward(x[i], slope);
        expected_backward[i] = reference::leaky_relu_backward(x[i], saved[i], slope);
      }
    }
    ForEachTarget([&](const std::string&) {
      {
        std::unique_ptr<FlushDenormals> flush;
        if (flush_denormals) flush = std::make_unique<FlushDenormals>();
        leaky_relu_forward<T>(x, y, slope);
        leaky_relu_backward<T>(x, saved, false, dx, slope);
      }
      long bad = FirstMismatch(y.data(), expected_forward.data(), y.size());
      ASSERT_EQ(bad, -1) << "forward x=" << Hex(x[bad]) << " got " << Hex(y[bad]) << " expected "
                         << Hex(expected_forward[bad]);
      bad = FirstMismatch(dx.data(), expected_backward.data(), dx.size());
      ASSERT_EQ(bad, -1) << "backward dy=" << Hex(x[bad]) << " saved=" << Hex(saved[bad])
                         << " got " << Hex(dx[bad]) << " expected " << Hex(expected_backward[bad]);
    });
  }
}

TEST(RandomWide, Float32) { CheckRandom<float>(false); }
TEST(RandomWide, Float64) { CheckRandom<double>(false); }
TEST(RandomWide, Float32UnderFtzDaz) { CheckRandom<float>(true); }
TEST(RandomWide, Float64UnderFtzDaz) { CheckRandom<double>(true); }

TEST(RandomWide, SubnormalsSurviveFtzDaz) {
  const std::vector<float> x = {-std::numeric_limits<float>::denorm_min(), -1e-39f, -1.2e-38f};
  std::vector<float> y(x.size());
  {
    FlushDenormals flush;
    leaky_relu_forward<float>(x, y, 0.5);
  }
  EXPECT_EQ(Bits(y[0]), 0x80000000u);  // -denorm_min * 0.5 ties to even: -0
  EXPECT_EQ(y[1], -1e-39f * 0.5f);
  EXPECT_NE(y[1], 0.0f);
  EXPECT_NE(y[2], 0.0f);
}

// The caller's FTZ/DAZ state is restored after the call.
TEST(RandomWide, CallerEnvironmentRestored) {
  std::vector<float> x(1 << 20, -1.0f), y(x.size());
  FlushDenormals flush;
  leaky_relu_forward<float>(x, y, 0.1);
  volatile float tiny = 1e-38f;
  EXPECT_EQ(tiny * 1e-3f, 0.0f) << "FTZ should still be on for the caller";
}

}  // namespace
}  // namespace leaky::test

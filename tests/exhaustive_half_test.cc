// Every f16 and every bf16 bit pattern, forward and backward, for every slope
// of the core issue, on every SIMD target, bit-exact against the scalar
// reference; then again with FTZ and DAZ set on the calling thread.
#include <gtest/gtest.h>

#include <vector>

#include "leaky/reference.hpp"
#include "test_util.h"

namespace leaky::test {
namespace {

template <class T>
std::vector<T> AllPatterns() {
  std::vector<T> values(65536);
  for (uint32_t i = 0; i < 65536; ++i) values[i] = T::from_bits(static_cast<uint16_t>(i));
  return values;
}

// A bijective shuffle, so every dy meets saved values of every sign/class.
template <class T>
std::vector<T> ShuffledPatterns() {
  std::vector<T> values(65536);
  for (uint32_t i = 0; i < 65536; ++i) {
    values[i] = T::from_bits(static_cast<uint16_t>(i * 40503u + 12345u));
  }
  return values;
}

template <class T>
void CheckAllPatterns(bool flush_denormals) {
  const std::vector<T> x = AllPatterns<T>();
  const std::vector<T> saved = ShuffledPatterns<T>();
  for (double slope : kSlopes) {
    SCOPED_TRACE("slope " + std::to_string(slope));
    std::vector<T> expected_forward(x.size()), expected_backward(x.size());
    {
      const reference::ieee_environment ieee;
      for (size_t i = 0; i < x.size(); ++i) {
        expected_forward[i] = reference::leaky_relu_forward(x[i], slope);
        expected_backward[i] = reference::leaky_relu_backward(x[i], saved[i], slope);
      }
    }
    ForEachTarget([&](const std::string&) {
      for (int threads : {1, 2}) {
        const options opts{threads, -1};
        std::vector<T> y(x.size()), dx(x.size());
        {
          std::unique_ptr<FlushDenormals> flush;
          if (flush_denormals) flush = std::make_unique<FlushDenormals>();
          leaky_relu_forward<T>(x, y, slope, opts);
          leaky_relu_backward<T>(x, saved, false, dx, slope, opts);
        }
        long bad = FirstMismatch(y.data(), expected_forward.data(), y.size());
        ASSERT_EQ(bad, -1) << "forward x=" << Hex(x[bad]) << " got " << Hex(y[bad])
                           << " expected " << Hex(expected_forward[bad]);
        bad = FirstMismatch(dx.data(), expected_backward.data(), dx.size());
        ASSERT_EQ(bad, -1) << "backward dy=" << Hex(x[bad]) << " saved=" << Hex(saved[bad])
                           << " got " << Hex(dx[bad]) << " expected "
                           << Hex(expected_backward[bad]);
        // Backward from the result computes the same formula; it must be
        // accepted (slope >= 0) and agree, or be refused (slope < 0).
        std::vector<T> dx_result(x.size(), T::from_bits(0x1234));
        if (slope >= 0) {
          leaky_relu_backward<T>(x, saved, true, dx_result, slope, opts);
          ASSERT_EQ(FirstMismatch(dx_result.data(), expected_backward.data(), x.size()), -1);
        } else {
          EXPECT_THROW(leaky_relu_backward<T>(x, saved, true, dx_result, slope, opts), error);
          EXPECT_EQ(dx_result[7].bits, 0x1234);
        }
      }
    });
  }
}

TEST(ExhaustiveHalf, Float16) { CheckAllPatterns<float16>(false); }
TEST(ExhaustiveHalf, BFloat16) { CheckAllPatterns<bfloat16>(false); }
TEST(ExhaustiveHalf, Float16UnderFtzDaz) { CheckAllPatterns<float16>(true); }
TEST(ExhaustiveHalf, BFloat16UnderFtzDaz) { CheckAllPatterns<bfloat16>(true); }

// The trap the library exists to avoid: tiny negative f16 inputs whose
// product with the slope is an f16 subnormal must not become zero.
TEST(ExhaustiveHalf, SubnormalProductsSurviveFtz) {
  const std::vector<float16> x = {float16::from_bits(0x8400), float16::from_bits(0x8010),
                                  float16::from_bits(0x9000)};
  std::vector<float16> y(x.size());
  {
    FlushDenormals flush;
    leaky_relu_forward<float16>(x, y, 0.2);
  }
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NE(y[i].bits & 0x7fff, 0) << "input " << Hex(x[i]) << " flushed to zero";
  }
  EXPECT_EQ(y[0].bits, 0x80cd);  // -2^-14 * 0.2 rounds to the subnormal 0x80cd
}

}  // namespace
}  // namespace leaky::test

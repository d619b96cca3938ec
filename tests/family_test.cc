// PReLU, RReLU and bias_act with dropout beyond the per-kernel sweeps
// (indexed_kernels_test.cc): Philox against Random123's known answers;
// random streams, masks and reductions the same for every thread count and
// split; RReLU's evaluation mode; errors leave every output untouched; the
// C++ API.
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

using reference::compute_t;

TEST(Philox, RandomKnownAnswers) {
  // Random123's tests/kat_vectors, the three "philox4x32 10" lines.
  using Words = std::array<uint32_t, 4>;
  EXPECT_EQ(reference::philox4x32_10({0, 0, 0, 0}, {0, 0}),
            (Words{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(reference::philox4x32_10({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
                                     {0xffffffff, 0xffffffff}),
            (Words{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(reference::philox4x32_10({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
                                     {0xa4093822, 0x299f31d0}),
            (Words{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

TEST(Philox, HalfWordLayout) {
  const uint64_t seed = 77;
  for (uint64_t s : {0ull, 63ull, 64ull, 127ull, 128ull, 300ull}) {
    const uint32_t word = reference::stream_word(seed, (s / 128) * 64 + s % 64);
    EXPECT_EQ(reference::stream_half_word(seed, s), (s % 128) < 64 ? word & 0xFFFF : word >> 16);
  }
  // The two halves of one word are two different positions' bits.
  EXPECT_NE(reference::stream_half_word(seed, 5), reference::stream_half_word(seed, 69));
}

TEST(Philox, StreamLayout) {
  // Word 64 g + 16 w + j is word w of counter 16 g + j.
  const uint64_t seed = 0x0123456789abcdefull;
  for (uint64_t s : {0ull, 1ull, 17ull, 63ull, 64ull, 1000ull, (1ull << 34) + 5}) {
    const uint64_t counter = (s / 64) * 16 + s % 16;
    const auto words = reference::philox4x32_10(
        {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0},
        {0x89abcdefu, 0x01234567u});
    EXPECT_EQ(reference::stream_word(seed, s), words[(s % 64) / 16]) << s;
  }
}

template <class T>
std::vector<T> Random(size_t n, uint32_t seed) {
  return RandomWithSpecials<T>(n, seed);
}

TEST(Rrelu, SameForEveryThreadCountAndSplit) {
  const size_t n = (size_t{1} << 20) + 13;
  const auto x = Random<float>(n, 9);
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
  const auto x = Random<float>(n, 10), dy = Random<float>(n, 11);
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

TEST(BiasActDropout, MaskIsTheSameForEveryThreadCountAndKeepsOneMinusP) {
  const size_t outer = 64, channels = 8, inner = 4099, n = outer * channels * inner;
  const auto x = Random<float>(n, 12), b = Random<float>(channels, 13);
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

TEST(Prelu, WeightGradientIsTheSameForAnyThreadCount) {
  const size_t outer = 32, channels = 16, inner = 2053, n = outer * channels * inner;
  const auto x = Random<float>(n, 14), dy = Random<float>(n, 15);
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

TEST(Family, ErrorsLeaveOutputsUntouched) {
  std::vector<float> buffer(5000, 3.0f);
  const std::vector<float> snapshot = buffer;
  float* x = buffer.data();
  float* y = x + 1000;
  float* w = x + 2000;
  float* noise = x + 3000;
  auto* mask = reinterpret_cast<uint8_t*>(x + 4000);
  auto expect = [&](leaky_status got, leaky_status want, const char* needle) {
    EXPECT_EQ(got, want) << leaky_last_error();
    EXPECT_NE(std::strstr(leaky_last_error(), needle), nullptr) << leaky_last_error();
    EXPECT_EQ(buffer, snapshot);
  };
  const leaky_rrelu_params good{0.1, 0.3, 1, 0, 0};
  leaky_rrelu_params bad = good;
  bad.lower = 0.5;
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, noise, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "greater than upper");
  bad = good;
  bad.upper = NAN;
  expect(leaky_rrelu_backward(LEAKY_F32, 1000, x, x, y, &bad, nullptr),
         LEAKY_ERROR_INVALID_PARAMETER, "upper");
  bad = good;
  bad.offset = UINT64_MAX - 10;
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, noise, &bad, nullptr), LEAKY_ERROR_SIZE,
         "2^64");
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, y + 10, &good, nullptr), LEAKY_ERROR_OVERLAP,
         "noise");
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, x, y, noise, nullptr, nullptr),
         LEAKY_ERROR_NULL_POINTER, "params");
  // Evaluation delegates to LeakyReLU, but a bad buffer is still reported
  // under RReLU's name.
  leaky_rrelu_params eval = good;
  eval.training = 0;
  expect(leaky_rrelu_forward(LEAKY_F32, 1000, nullptr, y, nullptr, &eval, nullptr),
         LEAKY_ERROR_NULL_POINTER, "leaky_rrelu_forward");
  expect(leaky_rrelu_backward(LEAKY_F32, 1000, x, x, x + 500, &eval, nullptr), LEAKY_ERROR_OVERLAP,
         "leaky_rrelu_backward");

  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, 1.4, -1.0};
  for (double p : {-0.1, 1.0, std::nan("")}) {
    const leaky_dropout_params dropout{p, 0, 0};
    expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y, mask, &params, &dropout,
                                          nullptr),
           LEAKY_ERROR_INVALID_PARAMETER, "not in [0, 1)");
    expect(leaky_bias_act_dropout_backward(LEAKY_F32, 10, 10, 10, x, x, w, mask, y, nullptr,
                                           &params, p, nullptr),
           LEAKY_ERROR_INVALID_PARAMETER, "not in [0, 1)");
  }
  const leaky_dropout_params dropout{0.5, 0, 0};
  expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y,
                                        reinterpret_cast<uint8_t*>(y + 990), &params, &dropout,
                                        nullptr),
         LEAKY_ERROR_OVERLAP, "mask");
  expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y, nullptr, &params, &dropout,
                                        nullptr),
         LEAKY_ERROR_NULL_POINTER, "mask is null");
  expect(leaky_bias_act_dropout_forward(LEAKY_F32, 10, 10, 10, x, w, y, mask, &params, nullptr,
                                        nullptr),
         LEAKY_ERROR_NULL_POINTER, "dropout is null");
  expect(leaky_bias_act_dropout_backward(LEAKY_F32, 10, 10, 10, x, x, w, nullptr, y, nullptr,
                                         &params, 0.5, nullptr),
         LEAKY_ERROR_NULL_POINTER, "mask is null");

  expect(leaky_prelu_forward(LEAKY_F32, 10, 10, 10, x, nullptr, y, nullptr),
         LEAKY_ERROR_NULL_POINTER, "weight is null");
  expect(leaky_prelu_forward(LEAKY_F32, 10, 10, 10, x, y + 5, y, nullptr), LEAKY_ERROR_OVERLAP,
         "weight");
  expect(leaky_prelu_backward(LEAKY_F32, 10, 10, 10, x, x, w, y, y + 990, nullptr),
         LEAKY_ERROR_OVERLAP, "dweight overlaps dx");
  expect(leaky_prelu_backward(LEAKY_F32, SIZE_MAX / 2, 4, 4, x, x, w, y, nullptr, nullptr),
         LEAKY_ERROR_SIZE, "overflows");
  expect(leaky_prelu_forward(static_cast<leaky_dtype>(9), 10, 10, 10, x, w, y, nullptr),
         LEAKY_ERROR_INVALID_DTYPE, "dtype");
}

}  // namespace
}  // namespace leaky::test

namespace leaky::test {
namespace {

TEST(Family, CppApiMatchesTheCApiAndChecksSizes) {
  const size_t n = 600;
  const auto x = Random<float>(n, 20), dy = Random<float>(n, 21);
  const std::vector<float> w{0.25f, -0.5f, 1.5f};
  std::vector<float> y(n), expected(n), dx(n), dw(3), noise(n);
  leaky::prelu_forward<float>(x, w, y, 10, 3, 20);
  ASSERT_EQ(leaky_prelu_forward(LEAKY_F32, 10, 3, 20, x.data(), w.data(), expected.data(), nullptr),
            LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  EXPECT_THROW(leaky::prelu_forward<float>(x, std::span<const float>(w).first(2), y, 10, 3, 20),
               leaky::error);
  leaky::prelu_backward<float>(dy, x, w, dx, dw, 10, 3, 20);
  const leaky_rrelu_params p{0.1, 0.3, 1, 5, 0};
  leaky::rrelu_forward<float>(x, y, noise, p);
  ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, n, x.data(), expected.data(), nullptr, &p, nullptr),
            LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  leaky::rrelu_backward<float>(dy, x, dx, p);
  std::vector<uint8_t> mask(leaky::dropout_mask_bytes(n)), expected_mask(mask.size());
  const leaky_bias_act_params params{LEAKY_ACT_LRELU, 0.2, 1.0, -1.0};
  const leaky_dropout_params dropout{0.25, 3, 0};
  leaky::bias_act_dropout_forward<float>(x, w, y, mask, 10, 3, 20, params, dropout);
  ASSERT_EQ(
      leaky_bias_act_dropout_forward(LEAKY_F32, 10, 3, 20, x.data(), w.data(), expected.data(),
                                     expected_mask.data(), &params, &dropout, nullptr),
      LEAKY_OK);
  EXPECT_EQ(FirstMismatch(y.data(), expected.data(), n), -1);
  EXPECT_EQ(mask, expected_mask);
  EXPECT_THROW(leaky::bias_act_dropout_forward<float>(x, w, y, std::span<uint8_t>(mask).first(3),
                                                      10, 3, 20, params, dropout),
               leaky::error);
  leaky::bias_act_dropout_backward<float>(dy, x, w, mask, dx, dw, 10, 3, 20, params, 0.25);
}

}  // namespace
}  // namespace leaky::test

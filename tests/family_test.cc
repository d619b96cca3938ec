// PReLU, RReLU and bias_act with dropout on every SIMD target: bit-exact
// against the scalar references (leaky/reference.hpp) for every n from 0 to
// 2,048 (LEAKY_TEST_QUICK_SWEEP=1: to 300) with sentinels after every
// output, 1..4 threads on multi-core plans, stream offsets that cross group
// and counter-word boundaries; random streams, masks and reductions the same
// for every thread count; Philox against Random123's known answers; errors
// leave every output untouched.
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

// An output of n elements followed by sentinels that must survive.
template <class T>
struct Guarded {
  static constexpr size_t kGuard = 19;
  std::vector<T> storage;
  size_t n;
  explicit Guarded(size_t count) : storage(count + kGuard), n(count) {
    for (size_t i = 0; i < storage.size(); ++i) storage[i] = static_cast<T>(777.0f);
  }
  T* data() { return storage.data(); }
  bool GuardIntact() const {
    for (size_t i = n; i < storage.size(); ++i) {
      if (!SameOrBothNan(storage[i], static_cast<T>(777.0f))) return false;
    }
    return true;
  }
};

size_t MaxSweep() {
  const char* quick = std::getenv("LEAKY_TEST_QUICK_SWEEP");
  return quick != nullptr && std::string(quick) == "1" ? 300 : 2048;
}

// Stream offsets: misaligned within a group, and one whose counters cross
// 2^32 (the counter's high word) inside the call.
uint64_t OffsetFor(size_t n) {
  if (n % 7 == 3) return (uint64_t{1} << 34) - 37;
  return (n * 37) % 131;
}

struct Layout {
  size_t outer, channels, inner;
};

std::vector<Layout> LayoutsFor(size_t n) {
  std::vector<Layout> layouts{{1, 1, n}};
  if (n % 6 == 0 && n > 0) {
    layouts.push_back({n / 6, 3, 2});
    layouts.push_back({n / 3, 3, 1});  // channels-last
  }
  return layouts;
}

// Runs body(n, layout, options) for every n of the sweep and its layouts on
// every target, with multi-core plans even for small n.
template <class Body>
void Sweep(bool with_layouts, Body body) {
  internal::SetMinBytesPerCoreForTesting(1);
  ForEachTarget([&](const std::string&) {
    for (size_t n = 0; n <= MaxSweep(); ++n) {
      const std::vector<Layout> layouts =
          with_layouts ? LayoutsFor(n) : std::vector<Layout>{{1, 1, n}};
      for (const Layout& l : layouts) {
        const int threads = static_cast<int>(n % 4) + 1;
        body(n, l, leaky_options{threads, n % 5 == 0 ? 1 : -1});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
  internal::SetMinBytesPerCoreForTesting(0);
}

template <class T>
void SweepRrelu() {
  Sweep(false, [](size_t n, const Layout&, const leaky_options& options) {
    const leaky_rrelu_params p{0.125, 1.0 / 3.0, 1, 42 + n, OffsetFor(n)};
    const auto x = Random<T>(n, 1), dy = Random<T>(n, 2);
    Guarded<T> y(n), noise(n), dx(n);
    ASSERT_EQ(leaky_rrelu_forward(dtype_of<T>(), n, x.data(), y.data(), noise.data(), &p, &options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_EQ(leaky_rrelu_backward(dtype_of<T>(), n, dy.data(), x.data(), dx.data(), &p, &options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact() && noise.GuardIntact() && dx.GuardIntact()) << "n " << n;
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t word = reference::stream_word(p.seed, p.offset + i);
      T expected_noise;
      const T ey = reference::rrelu_forward(x[i], word, p.lower, p.upper, &expected_noise);
      const T edx = reference::rrelu_backward(dy[i], x[i], word, p.lower, p.upper);
      ASSERT_TRUE(SameOrBothNan(y.data()[i], ey))
          << "n " << n << " y[" << i << "] " << Hex(y.data()[i]) << " expected " << Hex(ey);
      ASSERT_TRUE(SameOrBothNan(noise.data()[i], expected_noise)) << "n " << n << " noise " << i;
      ASSERT_TRUE(SameOrBothNan(dx.data()[i], edx)) << "n " << n << " dx " << i;
    }
  });
}

TEST(Rrelu, Float32) { SweepRrelu<float>(); }
TEST(Rrelu, Float64) { SweepRrelu<double>(); }
TEST(Rrelu, Float16) { SweepRrelu<float16>(); }
TEST(Rrelu, BFloat16) { SweepRrelu<bfloat16>(); }

template <class T>
void SweepDropout() {
  Sweep(true, [](size_t n, const Layout& l, const leaky_options& options) {
    const leaky_bias_act_params params{n % 3 == 0 ? LEAKY_ACT_RELU : LEAKY_ACT_LRELU, 0.2,
                                       std::sqrt(2.0), n % 2 == 0 ? 4.0 : -1.0};
    const double p = n % 4 == 1 ? 0.0 : 0.3;
    const leaky_dropout_params dropout{p, 7 + n, OffsetFor(n)};
    const auto x = Random<T>(n, 3), dy = Random<T>(n, 4), bias = Random<T>(l.channels, 5);
    Guarded<T> y(n), dx(n);
    std::vector<uint8_t> mask((n + 7) / 8 + 3, 0xA5);
    ASSERT_EQ(leaky_bias_act_dropout_forward(dtype_of<T>(), l.outer, l.channels, l.inner, x.data(),
                                             bias.data(), y.data(), mask.data(), &params, &dropout,
                                             &options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_EQ(leaky_bias_act_dropout_backward(dtype_of<T>(), l.outer, l.channels, l.inner,
                                              dy.data(), x.data(), bias.data(), mask.data(),
                                              dx.data(), nullptr, &params, p, &options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact() && dx.GuardIntact()) << "n " << n;
    // Bits past n in the last byte are the caller's: untouched.
    for (size_t i = n; i < ((n + 7) / 8) * 8; ++i) {
      ASSERT_EQ((mask[i / 8] >> (i % 8)) & 1, (0xA5 >> (i % 8)) & 1) << "n " << n;
    }
    for (size_t b = (n + 7) / 8; b < mask.size(); ++b) ASSERT_EQ(mask[b], 0xA5);
    const reference::ieee_environment ieee;
    const uint32_t threshold = reference::dropout_threshold(p);
    for (size_t i = 0; i < n; ++i) {
      const size_t c = (i / l.inner) % l.channels;
      const bool kept = reference::stream_half_word(dropout.seed, dropout.offset + i) >= threshold;
      ASSERT_EQ(((mask[i / 8] >> (i % 8)) & 1) != 0, kept) << "n " << n << " mask bit " << i;
      const T ey = reference::bias_act_dropout_forward(x[i], bias[c], params, kept, p);
      const T edx = reference::bias_act_dropout_backward(dy[i], x[i], bias[c], params, kept, p);
      ASSERT_TRUE(SameOrBothNan(y.data()[i], ey))
          << "n " << n << " y[" << i << "] " << Hex(y.data()[i]) << " expected " << Hex(ey);
      ASSERT_TRUE(SameOrBothNan(dx.data()[i], edx)) << "n " << n << " dx " << i;
    }
  });
}

TEST(BiasActDropout, Float32) { SweepDropout<float>(); }
TEST(BiasActDropout, Float64) { SweepDropout<double>(); }
TEST(BiasActDropout, Float16) { SweepDropout<float16>(); }
TEST(BiasActDropout, BFloat16) { SweepDropout<bfloat16>(); }

template <class T>
void SweepPrelu() {
  Sweep(true, [](size_t n, const Layout& l, const leaky_options& options) {
    const auto x = Random<T>(n, 6), dy = Random<T>(n, 7);
    auto weight = Random<T>(l.channels, 8);
    for (auto& w : weight)
      if (IsNan(w)) w = static_cast<T>(0.25f);
    Guarded<T> y(n), dx(n), dweight(l.channels);
    ASSERT_EQ(leaky_prelu_forward(dtype_of<T>(), l.outer, l.channels, l.inner, x.data(),
                                  weight.data(), y.data(), &options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_EQ(leaky_prelu_backward(dtype_of<T>(), l.outer, l.channels, l.inner, dy.data(), x.data(),
                                   weight.data(), dx.data(), dweight.data(), &options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact() && dx.GuardIntact() && dweight.GuardIntact()) << "n " << n;
    const reference::ieee_environment ieee;
    std::vector<double> sums(l.channels, 0.0);
    for (size_t i = 0; i < n; ++i) {
      const size_t c = (i / l.inner) % l.channels;
      ASSERT_TRUE(SameOrBothNan(y.data()[i], reference::prelu_forward(x[i], weight[c])))
          << "n " << n << " y " << i;
      ASSERT_TRUE(SameOrBothNan(dx.data()[i], reference::prelu_backward(dy[i], x[i], weight[c])))
          << "n " << n << " dx " << i;
    }
    // The sum in (outer, inner) order per channel, as documented.
    for (size_t o = 0; o < l.outer; ++o) {
      for (size_t c = 0; c < l.channels; ++c) {
        for (size_t i = 0; i < l.inner; ++i) {
          const size_t k = (o * l.channels + c) * l.inner + i;
          sums[c] += static_cast<double>(reference::prelu_weight_term(dy[k], x[k]));
        }
      }
    }
    for (size_t c = 0; c < l.channels && n > 0; ++c) {
      const T expected = T(static_cast<compute_t<T>>(sums[c]));
      ASSERT_TRUE(SameOrBothNan(dweight.data()[c], expected)) << "n " << n << " dweight " << c;
    }
  });
}

TEST(Prelu, Float32) { SweepPrelu<float>(); }
TEST(Prelu, Float64) { SweepPrelu<double>(); }
TEST(Prelu, Float16) { SweepPrelu<float16>(); }
TEST(Prelu, BFloat16) { SweepPrelu<bfloat16>(); }

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

// The conv epilogue (leaky_q8_bias_act_forward, eight_bit.h) against an exact
// reference in rationals (eight_bit_reference.h: the integer k times the
// multiplier's exact value, rounded half to even, no floating point): random
// and adversarial accumulators (0, +-1, INT32_MIN/MAX with biases that push
// k beyond int32, products exactly on a .5 tie, products within one ulp of
// a tie, huge and subnormal multipliers), per channel and per tensor,
// inner > 1 and channels-last, qu8 and qs8, clamps, for every SIMD target,
// 1 and 2 threads, at a misaligned output with sentinels, with and without
// non-temporal stores; the multiplier helper; and bad input, which must
// leave y untouched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "eight_bit_reference.h"
#include "leaky/eight_bit.h"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test::eight_bit {
namespace {

constexpr int kMaxPrinted = 20;
constexpr size_t kGuard = 64;   // sentinel bytes each side of y
constexpr uint8_t kSentinel = 0xA5;

struct Case {
  std::string name;
  leaky_q8_bias_act_params params;
  size_t outer = 1, channels = 1, inner = 1;
  std::vector<int32_t> acc;
  std::vector<int32_t> bias;  // empty: no bias
  std::vector<double> positive, negative;
  size_t n() const { return outer * channels * inner; }
};

// The exact result of element i: no floating-point operation on the way.
std::vector<uint8_t> Reference(const Case& c) {
  std::vector<Rational> positive, negative;
  for (double m : c.positive) positive.push_back(Exact(m));
  for (double m : c.negative) negative.push_back(Exact(m));
  std::vector<uint8_t> y(c.n());
  for (size_t i = 0; i < c.n(); ++i) {
    const size_t channel = (i / c.inner) % c.channels;
    const int64_t k = int64_t{c.acc[i]} + (c.bias.empty() ? 0 : c.bias[channel]);
    const size_t m = c.params.per_channel ? channel : 0;
    y[i] = EpilogueByte(k, k >= 0 ? positive[m] : negative[m], c.params.output_zero_point,
                        c.params.output_min, c.params.output_max);
  }
  return y;
}

std::string Describe(const Case& c, size_t i) {
  const size_t channel = (i / c.inner) % c.channels;
  const size_t m = c.params.per_channel ? channel : 0;
  char buffer[400];
  std::snprintf(buffer, sizeof(buffer),
                "%s [%zu, %zu, %zu] %s zp %d clamp [%d, %d] %s: element %zu acc %d bias %d "
                "positive %a negative %a",
                c.name.c_str(), c.outer, c.channels, c.inner,
                c.params.type == LEAKY_QU8 ? "qu8" : "qs8", c.params.output_zero_point,
                c.params.output_min, c.params.output_max,
                c.params.per_channel ? "per channel" : "per tensor", i, c.acc[i],
                c.bias.empty() ? 0 : c.bias[channel], c.positive[m], c.negative[m]);
  return buffer;
}

// Runs a case on every target, 1 and 2 threads, streaming off and on, and
// counts the mismatching outputs (all; the first kMaxPrinted printed).
size_t RunCase(const Case& c) {
  const std::vector<uint8_t> expected = Reference(c);
  const size_t n = c.n();
  size_t mismatches = 0, printed = 0;
  ForEachTarget([&](const std::string& target) {
    for (int threads : {1, 2}) {
      for (int stream : {0, 1}) {
        // One byte past a line: the streamed path has a head to align.
        std::vector<uint8_t> buffer(n + 2 * kGuard + 1, kSentinel);
        uint8_t* y = buffer.data() + kGuard + 1;
        const leaky_options options{threads, stream, nullptr};
        const leaky_status status = leaky_q8_bias_act_forward(
            &c.params, c.outer, c.channels, c.inner, c.acc.data(),
            c.bias.empty() ? nullptr : c.bias.data(), c.positive.data(), c.negative.data(), y,
            &options);
        ASSERT_EQ(status, LEAKY_OK) << leaky_last_error();
        for (size_t i = 0; i < n; ++i) {
          if (y[i] == expected[i]) continue;
          ++mismatches;
          if (++printed <= kMaxPrinted) {
            ADD_FAILURE() << Describe(c, i) << ": expected " << int{expected[i]} << " got "
                          << int{y[i]} << " (" << target << ", " << threads << " threads, stream "
                          << stream << ")";
          }
        }
        for (size_t g = 0; g < kGuard + 1; ++g) {
          ASSERT_EQ(buffer[g], kSentinel) << c.name << ": wrote before y";
        }
        for (size_t g = 0; g < kGuard; ++g) {
          ASSERT_EQ(y[n + g], kSentinel) << c.name << ": wrote past y";
        }
      }
    }
  });
  if (mismatches > 0) ADD_FAILURE() << c.name << ": " << mismatches << " mismatching outputs";
  std::cout << "[ compared ] " << c.name << ": " << n << " outputs x " << TargetsUnderTest().size()
            << " targets x 2 thread counts x 2 store policies, " << mismatches << " mismatches\n";
  return mismatches;
}

class EightBitEpilogue : public ::testing::Test {
 protected:
  // Small calls split over both threads, so the thread ranges are tested.
  void SetUp() override { leaky::internal::SetMinBytesPerCoreForTesting(256); }
  void TearDown() override { leaky::internal::SetMinBytesPerCoreForTesting(0); }
};

leaky_q8_bias_act_params Params(leaky_type8 type, int32_t zero_point, int per_channel) {
  leaky_q8_bias_act_params p = leaky_q8_bias_act_params_init(type);
  p.output_zero_point = zero_point;
  p.per_channel = per_channel;
  return p;
}

// Multipliers for `count` channels around `center` (a power of two), signs
// mixed when asked.
void RandomMultipliers(std::mt19937_64& rng, size_t count, double center, bool negatives,
                       Case* c) {
  std::uniform_real_distribution<double> spread(0.5, 2.0), slope(0.0, 0.5);
  for (size_t k = 0; k < count; ++k) {
    const double positive = center * spread(rng) * (negatives && k % 3 == 2 ? -1 : 1);
    c->positive.push_back(positive);
    c->negative.push_back(positive * slope(rng));
  }
}

struct Layout {
  size_t outer, channels, inner;
};
constexpr Layout kLayouts[] = {
    {3, 5, 67},    // rows of one channel, shorter and longer than vectors
    {2, 7, 300},   // rows long enough to stream
    {1, 1, 1000},  // one channel
    {9, 33, 1},    // channels-last, runs shorter than a line
    {5, 130, 1},   // channels-last, runs of several vectors
    {4, 3, 1},     // channels-last, runs shorter than a vector
    // Channels-last calls of many rows run their rows as one stream from
    // per-channel tables (q8_bias_act-inl.h, ChannelsLast: 8 rows and 128
    // elements a kernel call at least), at 2 threads too (each half holds
    // enough rows; the second half starts where the split falls, and with
    // stores streamed behind a head of 63 elements, y being one byte past a
    // line):
    {200, 3, 1},   // a line spans many rows
    {40, 130, 1},  // rows end inside lines
    {20, 512, 1},  // the widest rows run so (kernels::kQ8TableChannels)
    {20, 513, 1},  // one channel more: row by row again
    {300, 2, 1},   // channels dividing a line: the table position
    {40, 16, 1},   //   returns to the same entry every line (or block)
    {20, 64, 1},
};

TEST_F(EightBitEpilogue, RandomAccumulators) {
  std::mt19937_64 rng(26);
  size_t failures = 0;
  int index = 0;
  for (const Layout& layout : kLayouts) {
    for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
      for (int per_channel : {0, 1}) {
        ++index;
        Case c;
        c.params = Params(type, type == LEAKY_QU8 ? (index % 2 ? 0 : 131) : (index % 2 ? -3 : 0),
                          per_channel);
        if (index % 3 == 0) {  // a clamp inside the range (ReLU6-like)
          c.params.output_min = c.params.output_zero_point;
          c.params.output_max = c.params.output_zero_point + (type == LEAKY_QU8 ? 100 : 90);
        }
        c.outer = layout.outer;
        c.channels = layout.channels;
        c.inner = layout.inner;
        c.name = "random " + std::to_string(index);
        // Accumulator magnitudes of every size: 2^8 .. 2^31.
        std::uniform_int_distribution<int> bits(8, 31);
        std::uniform_int_distribution<int64_t> any(INT32_MIN, INT32_MAX);
        for (size_t i = 0; i < c.n(); ++i) {
          const int b = bits(rng);
          c.acc.push_back(static_cast<int32_t>(any(rng) >> (31 - b)));
        }
        if (index % 4 != 1) {
          for (size_t k = 0; k < c.channels; ++k) {
            c.bias.push_back(static_cast<int32_t>(any(rng) >> (index % 5 == 0 ? 0 : 12)));
          }
        }
        // Outputs spread over the range: multipliers near 2^-b for the
        // accumulators' typical 2^b; and a few far off.
        const double center = std::ldexp(1.0, -(index % 24) - 4);
        RandomMultipliers(rng, per_channel ? c.channels : 1, center, index % 2 == 0, &c);
        failures += RunCase(c);
      }
    }
  }
  EXPECT_EQ(failures, 0u);
}

// Products on and next to rounding ties, the cases plain double rounding gets
// wrong: M = 2^-j with k an odd multiple of 2^(j-1) is exactly t + 1/2; M one
// ulp above or below 2^-j puts k * M a hair off the tie, where the rounded
// product p may land exactly on it; M = (2q + 1) / 2^m with large k does the
// same with more significant bits.
TEST_F(EightBitEpilogue, Ties) {
  std::mt19937_64 rng(27);
  std::vector<double> multipliers;
  for (int j = 1; j <= 40; ++j) {
    const double m = std::ldexp(1.0, -j);
    multipliers.insert(multipliers.end(), {m, std::nextafter(m, 0.0), std::nextafter(m, 1.0)});
  }
  for (int m = 10; m <= 50; m += 5) {
    for (uint64_t q : {1ull, 3ull, 5ull, 0x1FFFFFull, 0xFFFFFFFFFull}) {
      const double v = std::ldexp(static_cast<double>(2 * q + 1), -m);
      multipliers.insert(multipliers.end(), {v, std::nextafter(v, 0.0), std::nextafter(v, 1.0)});
    }
  }
  size_t failures = 0;
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    for (const Layout& layout : {Layout{1, 1, 4099}, Layout{1, 4099, 1}, Layout{24, 257, 1}}) {
      Case c;
      c.params = Params(type, type == LEAKY_QU8 ? 128 : 0, 1);
      c.outer = layout.outer;
      c.channels = layout.channels;
      c.inner = layout.inner;
      c.name = std::string("ties ") + (layout.inner == 1 ? "channels-last" : "rows") +
               (layout.outer > 1 ? " (rows as one stream)" : "");
      const size_t n = c.n();
      std::uniform_int_distribution<size_t> pick(0, multipliers.size() - 1);
      std::uniform_int_distribution<int> sign(0, 1);
      std::vector<double> m_of(n);
      for (size_t i = 0; i < n; ++i) m_of[i] = multipliers[pick(rng)] * (sign(rng) ? -1 : 1);
      if (layout.inner == 1) {
        const size_t channels = c.channels;
        c.positive.assign(m_of.begin(), m_of.begin() + static_cast<std::ptrdiff_t>(channels));
        for (size_t i = 0; i < channels; ++i) c.negative.push_back(m_of[(i * 7 + 3) % channels]);
      } else {
        c.params.per_channel = 0;
        c.positive = {std::ldexp(1.0, -9) * (1 + 0x1p-52)};
        c.negative = {-std::ldexp(3.0, -12)};
      }
      std::uniform_int_distribution<int64_t> odd(-130, 130);
      for (size_t i = 0; i < n; ++i) {
        const size_t channel = i % c.channels;
        const double m = c.params.per_channel ? (c.positive[channel]) : c.positive[0];
        // k near a tie of k * m: (2 t + 1) / (2 m), an odd multiple of 1/(2m).
        const double target = static_cast<double>(2 * odd(rng) + 1) / 2.0;
        const double k = std::nearbyint(target / std::fabs(m));
        int64_t kk = std::fabs(k) < 2e9 ? static_cast<int64_t>(k) : static_cast<int64_t>(odd(rng));
        kk += static_cast<int64_t>(i % 3) - 1;  // on the tie and one either side
        kk = std::clamp<int64_t>(kk, INT32_MIN, INT32_MAX);
        c.acc.push_back(static_cast<int32_t>(kk));
      }
      failures += RunCase(c);
    }
  }
  // Within an ulp of a tie: M = RN(T / k) for a tie T = t + 1/2 and a large
  // k, so k * M = T + k * (M - T / k), off the tie by at most about half an
  // ulp of T: the rounded product often is T itself while the exact one is
  // not (the double-rounding trap); per element (channels-last) and per row.
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    for (const Layout& layout : {Layout{1, 4099, 1}, Layout{3, 701, 8}}) {
      Case c;
      c.params = Params(type, type == LEAKY_QU8 ? 128 : 0, 1);
      c.outer = layout.outer;
      c.channels = layout.channels;
      c.inner = layout.inner;
      c.name = std::string("near ties ") + (layout.inner == 1 ? "channels-last" : "rows");
      std::uniform_int_distribution<int64_t> half_integer(-127, 126), large(1 << 12, INT32_MAX);
      std::vector<int64_t> k_of(c.channels);
      for (size_t ch = 0; ch < c.channels; ++ch) {
        const double tie = static_cast<double>(half_integer(rng)) + 0.5;
        k_of[ch] = large(rng);
        const double m = tie / static_cast<double>(k_of[ch]);
        c.positive.push_back(m);
        c.negative.push_back(-m);
      }
      for (size_t i = 0; i < c.n(); ++i) {
        const size_t ch = (i / c.inner) % c.channels;
        const int64_t k = (i % 2 ? -1 : 1) * k_of[ch];
        c.acc.push_back(static_cast<int32_t>(k));
      }
      failures += RunCase(c);
    }
  }
  // k beyond int32 with the bias: INT32_MAX + INT32_MAX is odd times 1.
  {
    Case c;
    c.params = Params(LEAKY_QS8, 0, 0);
    c.name = "ties beyond int32";
    c.outer = 1;
    c.channels = 1;
    c.inner = 512;
    c.bias = {INT32_MAX};
    for (size_t i = 0; i < c.inner; ++i) c.acc.push_back(INT32_MAX - static_cast<int32_t>(i));
    // k * 2^-33 is within 1/2 + 2^-33 * small of a tie; k * (2^-33 (1 +- ulp))
    const double m = std::ldexp(1.0, -33);
    for (double v : {m, std::nextafter(m, 0.0), std::nextafter(m, 1.0)}) {
      c.positive = {v};
      c.negative = {v};
      failures += RunCase(c);
    }
  }
  EXPECT_EQ(failures, 0u);
}

// The fast path's boundary (q8_bias_act-inl.h, FastBlock: the f32 product
// answers when every lane is more than 2^-12 from a tie, the exact path
// otherwise). Products P = t + 1/2 + offset for offsets 0 (on the tie),
// +-2^-40 and +-2^-24 (the f32 product lands on the tie), +-2^-16, at the
// bound (2^-12 and 2^-12 +- 2^-20) and beyond it (2^-11), each side:
// per channel as k = +-2^j with M = P / k exact (k exact in f32, M not) and
// as a large k with M = RN(P / k) (the f32 product's error at its largest),
// in rows and channels-last, with a bias; and per tensor, M = 2^-j (1 + e)
// on every tie k = (2t + 1) 2^(j-1) and its neighbours, which sweeps the
// offsets (t + 1/2) e across the bound.
TEST_F(EightBitEpilogue, FastPathBoundary) {
  std::mt19937_64 rng(29);
  const double offsets[] = {0,       0x1p-40,           0x1p-24, 0x1p-16, 0x1p-12 - 0x1p-20,
                            0x1p-12, 0x1p-12 + 0x1p-20, 0x1p-11};
  struct Probe {
    int64_t k;
    double m;  // k * m = the probe's P, exactly or within 2^-53 relative
  };
  std::vector<Probe> positive_k, negative_k;
  std::uniform_int_distribution<int> tie_below(-130, 129), shift(0, 30), sign(0, 1);
  std::uniform_int_distribution<int64_t> large(int64_t{1} << 24, INT32_MAX);
  for (double offset : offsets) {
    for (double side : {1.0, -1.0}) {
      for (int repeat = 0; repeat < 8; ++repeat) {
        const double product = tie_below(rng) + 0.5 + side * offset;  // exact in double
        for (int64_t k : {int64_t{1} << shift(rng), large(rng)}) {
          const int64_t signed_k = sign(rng) ? -k : k;
          (signed_k > 0 ? positive_k : negative_k)
              .push_back({signed_k, product / static_cast<double>(signed_k)});
        }
      }
    }
  }
  const size_t channels = std::min(positive_k.size(), negative_k.size());
  std::uniform_int_distribution<int32_t> small_bias(-1000, 1000);
  size_t failures = 0;
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    for (const Layout& layout : {Layout{1, channels, 37}, Layout{37, channels, 1}}) {
      Case c;
      c.params = Params(type, type == LEAKY_QU8 ? 128 : 0, 1);
      c.outer = layout.outer;
      c.channels = layout.channels;
      c.inner = layout.inner;
      c.name = std::string("fast path boundary per channel ") +
               (layout.inner == 1 ? "channels-last" : "rows");
      for (size_t ch = 0; ch < channels; ++ch) {
        c.positive.push_back(positive_k[ch].m);
        c.negative.push_back(negative_k[ch].m);
        const int32_t b = small_bias(rng);
        // A bias that would push a k beyond int32 is dropped to 0.
        const bool fits = std::llabs(positive_k[ch].k) < INT32_MAX - 1000 &&
                          std::llabs(negative_k[ch].k) < INT32_MAX - 1000;
        c.bias.push_back(fits ? b : 0);
      }
      for (size_t i = 0; i < c.n(); ++i) {
        const size_t ch = (i / c.inner) % c.channels;
        const Probe& probe = i % 2 ? negative_k[ch] : positive_k[ch];
        c.acc.push_back(static_cast<int32_t>(probe.k - c.bias[ch]));
      }
      failures += RunCase(c);
    }
  }
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    for (int j : {9, 14, 20}) {
      for (double e : {0.0, 0x1p-30, -0x1p-30, 0x1p-20, -0x1p-20, 0x1p-19, -0x1p-19, 0x1p-18,
                       -0x1p-18, 0x1p-13, -0x1p-13}) {
        for (const Layout& layout : {Layout{1, 1, 0}, Layout{0, 41, 1}}) {
          Case c;
          c.params = Params(type, type == LEAKY_QU8 ? 128 : 0, 0);
          c.positive = {std::ldexp(1.0 + e, -j)};
          c.negative = {c.positive[0]};
          std::vector<int32_t> acc;
          for (int64_t t = -131; t <= 130; ++t) {
            const int64_t k = (2 * t + 1) << (j - 1);
            for (int64_t d : {0, -1, 1}) acc.push_back(static_cast<int32_t>(k + d));
          }
          c.outer = layout.inner == 1 ? acc.size() / layout.channels : 1;
          c.channels = layout.channels;
          c.inner = layout.inner == 1 ? 1 : acc.size();
          acc.resize(c.n());
          c.acc = acc;
          char name[96];
          std::snprintf(name, sizeof(name), "fast path boundary per tensor 2^-%d (1 %+a) %s", j, e,
                        layout.inner == 1 ? "channels-last" : "rows");
          c.name = name;
          failures += RunCase(c);
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u);
}

// The folded fast path (q8_bias_act-inl.h, AVX-512: the bias and the zero
// point folded into one FMA per lane where |bias * M| <= 256 for both
// multipliers): rows long enough for whole lines, a vector tail and a scalar
// tail; biases whose |bias * M| is at, just inside and just beyond the limit,
// INT32_MIN and INT32_MAX with tiny multipliers; accumulators that cancel
// the bias (acc = -bias + d, |acc| up to 2^31 while k is small, where fl(acc)
// errs most against k * M), accumulators aimed at the output's rounding ties
// (exact ties where M is a power of two) and the int32 extremes; slopes of
// either sign; every zero point edge, the type's range and an inner clamp;
// and each case again under the other rounding modes (the path must not
// depend on the caller's).
TEST_F(EightBitEpilogue, FoldedPath) {
  std::mt19937_64 rng(30);
  const double bias_products[] = {0,     1.5,    -100.25, 255.5,     -255.99, 256,
                                  -256,  256.01, -257,    300,       1000,    -0x1p40};
  const double slopes[] = {0.1, 0.0, 1.0, -0.5, 3.0, 0.2};
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<int> shift_of(2, 30), spread(-20, 20), tie(-400, 400);
  std::uniform_int_distribution<int64_t> any(INT32_MIN, INT32_MAX);
  const int32_t extremes[] = {INT32_MIN, INT32_MAX, INT32_MIN + 1, INT32_MAX - 1, 0, 1, -1};
  size_t failures = 0;
  int index = 0;
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    const std::vector<int32_t> zero_points =
        type == LEAKY_QU8 ? std::vector<int32_t>{0, 100, 255} : std::vector<int32_t>{-128, 0, 127};
    for (int32_t zero_point : zero_points) {
      for (int inner_clamp : {0, 1}) {
        Case c;
        c.params = Params(type, zero_point, 1);
        if (inner_clamp) {
          c.params.output_min = std::max(c.params.output_min, zero_point - 40);
          c.params.output_max = std::min(c.params.output_max, zero_point + 60);
        }
        c.name = "folded " + std::to_string(++index);
        c.outer = 2;
        c.channels = std::size(bias_products) * 4;
        c.inner = 203;
        for (size_t ch = 0; ch < c.channels; ++ch) {
          const int shift = ch % 4 == 0 ? 24 + static_cast<int>(ch % 7) : shift_of(rng);
          // A power of two every third channel: exact ties.
          const double magnitude = std::ldexp(ch % 3 == 0 ? 1.0 : 1.0 + unit(rng), -shift);
          const double positive = ch % 5 == 4 ? -magnitude : magnitude;
          c.positive.push_back(positive);
          c.negative.push_back(positive * slopes[ch % std::size(slopes)]);
          const double b = bias_products[ch / 4] / magnitude;
          c.bias.push_back(ch % 11 == 10  ? INT32_MIN
                           : ch % 13 == 12 ? INT32_MAX
                                           : static_cast<int32_t>(std::clamp(
                                                 std::nearbyint(b), double{INT32_MIN}, double{INT32_MAX})));
        }
        for (size_t o = 0; o < c.outer; ++o) {
          for (size_t ch = 0; ch < c.channels; ++ch) {
            const int64_t bias = c.bias[ch];
            for (size_t i = 0; i < c.inner; ++i) {
              int64_t acc;
              if (i < std::size(extremes)) {
                acc = extremes[i];
              } else if (i % 4 == 0) {
                acc = -bias + spread(rng);  // k = acc + bias small
              } else {
                // k aimed at y = t + 1/2 (t + 1/2 - zp over the multiplier of
                // k's sign), and its neighbours.
                const double target = tie(rng) + 0.5 - zero_point;
                double k = std::nearbyint(target / c.positive[ch]);
                if (k <= 0 && c.negative[ch] != 0) k = std::nearbyint(target / c.negative[ch]);
                acc = static_cast<int64_t>(std::clamp(k, -0x1p40, 0x1p40)) - bias +
                      static_cast<int64_t>(i % 3) - 1;
              }
              if (acc < INT32_MIN || acc > INT32_MAX) acc = any(rng);
              c.acc.push_back(static_cast<int32_t>(acc));
            }
          }
        }
        // The same values channels-last (rows as one stream from
        // per-channel tables): element (o, ch, i) moves to row o * inner + i;
        // once with every channel (one beyond the folded limit sends the
        // whole call to the general path) and once with only the channels
        // within it (the folded path, from the tables).
        std::vector<size_t> all, within;
        for (size_t ch = 0; ch < c.channels; ++ch) {
          all.push_back(ch);
          const double m = std::max(std::fabs(c.positive[ch]), std::fabs(c.negative[ch]));
          if (std::fabs(static_cast<double>(c.bias[ch])) * m <= 256) within.push_back(ch);
        }
        const auto channels_last = [&](const std::vector<size_t>& kept, const char* name) {
          Case last = c;
          last.name += name;
          last.outer = c.outer * c.inner;
          last.channels = kept.size();
          last.inner = 1;
          last.acc.clear();
          last.bias.clear();
          last.positive.clear();
          last.negative.clear();
          for (size_t ch : kept) {
            last.bias.push_back(c.bias[ch]);
            last.positive.push_back(c.positive[ch]);
            last.negative.push_back(c.negative[ch]);
          }
          for (size_t o = 0; o < c.outer; ++o) {
            for (size_t i = 0; i < c.inner; ++i) {
              for (size_t ch : kept) last.acc.push_back(c.acc[(o * c.channels + ch) * c.inner + i]);
            }
          }
          return last;
        };
        ASSERT_GE(within.size(), c.channels / 2);
        // Every channel channels-last runs the general path, which the rows'
        // channels beyond the folded limit run under every mode below:
        // nearest only (QEMU time).
        failures += RunCase(channels_last(all, " channels-last"));
        for (const Case& layout_case :
             {c, channels_last(within, " channels-last, channels within the folded limit")}) {
          failures += RunCase(layout_case);
          for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
            ASSERT_EQ(std::fesetround(mode), 0);
            Case moded = layout_case;
            moded.name += mode == FE_UPWARD     ? " (rounding up)"
                          : mode == FE_DOWNWARD ? " (rounding down)"
                                                : " (rounding toward zero)";
            failures += RunCase(moded);
            std::fesetround(FE_TONEAREST);
          }
        }
      }
    }
  }
  EXPECT_EQ(failures, 0u);
}

// 0, +-1, INT32_MIN/MAX, biases that push k to +-2^32, multipliers 0, -0,
// subnormal, huge, DBL_MAX and negative; every zero point and clamp edge.
TEST_F(EightBitEpilogue, Extremes) {
  const std::vector<int32_t> accs = {0, 1, -1, 2, -2, 127, 128, -128, 255, 256,
                                     INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1};
  const std::vector<int32_t> biases = {0, 1, -1, INT32_MAX, INT32_MIN, 1000};
  const std::vector<double> multipliers = {
      0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.25, std::ldexp(1.0, -31), std::ldexp(1.0, -32),
      std::ldexp(1.0, -33), 4.9e-324, -4.9e-324, DBL_MIN, 1e-300, 1e300, -1e300, DBL_MAX,
      -DBL_MAX, 3.0, 1.0 / 3.0, 0.1, 127.5, -127.5};
  size_t failures = 0;
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    const std::vector<int32_t> zero_points =
        type == LEAKY_QU8 ? std::vector<int32_t>{0, 1, 128, 255} : std::vector<int32_t>{-128, 0, 127};
    for (int32_t zero_point : zero_points) {
      Case c;
      c.params = Params(type, zero_point, 1);
      if (zero_point == 1) {
        c.params.output_min = 3;
        c.params.output_max = 3;
      }
      c.name = "extremes";
      c.outer = 2;
      c.channels = biases.size() * multipliers.size();
      c.inner = accs.size();
      for (size_t o = 0; o < c.outer; ++o) {
        for (size_t ch = 0; ch < c.channels; ++ch) {
          c.acc.insert(c.acc.end(), accs.begin(), accs.end());
        }
      }
      for (size_t b = 0; b < biases.size(); ++b) {
        for (size_t m = 0; m < multipliers.size(); ++m) {
          c.bias.push_back(biases[b]);
          c.positive.push_back(multipliers[m]);
          c.negative.push_back(multipliers[(m * 5 + 1) % multipliers.size()]);
        }
      }
      failures += RunCase(c);
      // The same values channels-last: each element its own channel.
      Case last = c;
      last.name = "extremes channels-last";
      last.outer = c.inner * c.outer;
      last.inner = 1;
      last.acc.clear();
      for (size_t o = 0; o < last.outer; ++o) {
        for (size_t ch = 0; ch < last.channels; ++ch) last.acc.push_back(accs[(o + ch) % accs.size()]);
      }
      failures += RunCase(last);
    }
  }
  EXPECT_EQ(failures, 0u);
}

// Non-temporal stores on a long call through the plan's own policy, and
// every output offset from a line: one case of a million elements.
TEST_F(EightBitEpilogue, LongCall) {
  Case c;
  c.params = Params(LEAKY_QU8, 3, 0);
  c.name = "long";
  c.outer = 1;
  c.channels = 1;
  c.inner = (1 << 20) + 37;
  std::mt19937_64 rng(28);
  std::uniform_int_distribution<int32_t> any(-(1 << 20), 1 << 20);
  for (size_t i = 0; i < c.n(); ++i) c.acc.push_back(any(rng));
  c.bias = {-77};
  c.positive = {std::ldexp(1.0, -13)};  // many exact ties
  c.negative = {std::ldexp(3.0, -16)};
  EXPECT_EQ(RunCase(c), 0u);
}

TEST_F(EightBitEpilogue, Multipliers) {
  const double scales[] = {0.5, 0.01, 3.0};
  double positive[3], negative[3];
  ASSERT_EQ(leaky_q8_bias_act_multipliers(3, scales, 2.0, LEAKY_ACT_LRELU, 0.2, 0.25, positive,
                                          negative),
            LEAKY_OK);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(positive[c], scales[c] * 8.0);
    EXPECT_EQ(negative[c], static_cast<double>(static_cast<long double>(scales[c]) * 2 *
                                             static_cast<long double>(0.2) / 0.25L)) << c;
  }
  ASSERT_EQ(leaky_q8_bias_act_multipliers(3, scales, 1.0, LEAKY_ACT_RELU, 0.2, 1.0, positive,
                                          negative),
            LEAKY_OK);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(positive[c], scales[c]);
    EXPECT_EQ(negative[c], 0.0);
  }
  ASSERT_EQ(leaky_q8_bias_act_multipliers(3, scales, -1.0, LEAKY_ACT_LINEAR, 0.2, 1.0, positive,
                                          negative),
            LEAKY_OK);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(negative[c], positive[c]);
  // Bad input leaves the outputs as they were.
  const double bad[] = {0.5, -1.0, 3.0};
  positive[0] = 42;
  EXPECT_EQ(leaky_q8_bias_act_multipliers(3, bad, 1.0, LEAKY_ACT_LINEAR, 0, 1.0, positive,
                                          negative),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(leaky_q8_bias_act_multipliers(3, scales, NAN, LEAKY_ACT_LINEAR, 0, 1.0, positive,
                                          negative),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(leaky_q8_bias_act_multipliers(3, scales, 1.0, LEAKY_ACT_LINEAR, 0, 0.0, positive,
                                          negative),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(leaky_q8_bias_act_multipliers(3, scales, 1e300, LEAKY_ACT_LINEAR, 0, 1e-300,
                                          positive, negative),
            LEAKY_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(leaky_q8_bias_act_multipliers(3, nullptr, 1.0, LEAKY_ACT_LINEAR, 0, 1.0, positive,
                                          negative),
            LEAKY_ERROR_NULL_POINTER);
  EXPECT_EQ(positive[0], 42);
}

TEST_F(EightBitEpilogue, BadInput) {
  constexpr size_t kChannels = 4, kInner = 8, kN = kChannels * kInner;
  std::vector<int32_t> acc(kN, 1000), bias(kChannels, 1);
  std::vector<double> positive(kChannels, 0.01), negative(kChannels, 0.001);
  std::vector<uint8_t> y(kN, kSentinel);
  const leaky_q8_bias_act_params good = Params(LEAKY_QU8, 0, 1);
  auto call = [&](const leaky_q8_bias_act_params* p, const int32_t* a, const double* pos,
                  const double* neg, void* out, const leaky_options* opts = nullptr) {
    return leaky_q8_bias_act_forward(p, 1, kChannels, kInner, a, bias.data(), pos, neg, out, opts);
  };
  struct Expect {
    const char* name;
    leaky_status status;
    leaky_status got;
  };
  std::vector<Expect> expects;
  auto with = [&](auto change) {
    leaky_q8_bias_act_params p = good;
    change(p);
    return call(&p, acc.data(), positive.data(), negative.data(), y.data());
  };
  expects.push_back({"null params", LEAKY_ERROR_NULL_POINTER,
                     call(nullptr, acc.data(), positive.data(), negative.data(), y.data())});
  expects.push_back({"null acc", LEAKY_ERROR_NULL_POINTER,
                     call(&good, nullptr, positive.data(), negative.data(), y.data())});
  expects.push_back({"null y", LEAKY_ERROR_NULL_POINTER,
                     call(&good, acc.data(), positive.data(), negative.data(), nullptr)});
  expects.push_back({"null positive", LEAKY_ERROR_NULL_POINTER,
                     call(&good, acc.data(), nullptr, negative.data(), y.data())});
  expects.push_back({"null negative", LEAKY_ERROR_NULL_POINTER,
                     call(&good, acc.data(), positive.data(), nullptr, y.data())});
  expects.push_back({"fp8 type", LEAKY_ERROR_INVALID_DTYPE,
                     with([](auto& p) { p.type = LEAKY_FP8_E4M3; })});
  expects.push_back({"type 9", LEAKY_ERROR_INVALID_DTYPE,
                     with([](auto& p) { p.type = static_cast<leaky_type8>(9); })});
  expects.push_back({"zero point 256", LEAKY_ERROR_INVALID_PARAMETER,
                     with([](auto& p) { p.output_zero_point = 256; })});
  expects.push_back({"qs8 zero point 128", LEAKY_ERROR_INVALID_PARAMETER, with([](auto& p) {
                       p.type = LEAKY_QS8;
                       p.output_zero_point = 128;
                       p.output_min = -128;
                       p.output_max = 127;
                     })});
  expects.push_back({"qs8 clamp of qu8", LEAKY_ERROR_INVALID_PARAMETER,
                     with([](auto& p) { p.type = LEAKY_QS8; })});
  expects.push_back({"min > max", LEAKY_ERROR_INVALID_PARAMETER, with([](auto& p) {
                       p.output_min = 10;
                       p.output_max = 9;
                     })});
  expects.push_back({"per_channel 2", LEAKY_ERROR_INVALID_PARAMETER,
                     with([](auto& p) { p.per_channel = 2; })});
  for (double bad_value : {NAN, INFINITY, -INFINITY}) {
    std::vector<double> bad = positive;
    bad[3] = bad_value;
    expects.push_back({"non-finite positive", LEAKY_ERROR_INVALID_PARAMETER,
                       call(&good, acc.data(), bad.data(), negative.data(), y.data())});
    expects.push_back({"non-finite negative", LEAKY_ERROR_INVALID_PARAMETER,
                       call(&good, acc.data(), positive.data(), bad.data(), y.data())});
  }
  // Per tensor reads one multiplier: a bad second value does not matter.
  {
    std::vector<double> bad = positive;
    bad[1] = NAN;
    leaky_q8_bias_act_params p = good;
    p.per_channel = 0;
    std::vector<uint8_t> out(kN);
    EXPECT_EQ(call(&p, acc.data(), bad.data(), negative.data(), out.data()), LEAKY_OK);
  }
  // acc and y overlap: identical, or y inside acc.
  expects.push_back({"y is acc", LEAKY_ERROR_OVERLAP,
                     call(&good, acc.data(), positive.data(), negative.data(), acc.data())});
  expects.push_back({"y inside acc", LEAKY_ERROR_OVERLAP,
                     call(&good, acc.data(), positive.data(), negative.data(),
                          reinterpret_cast<uint8_t*>(acc.data()) + 5)});
  expects.push_back({"y over the multipliers", LEAKY_ERROR_OVERLAP,
                     call(&good, acc.data(), positive.data(), negative.data(), positive.data())});
  const leaky_options bad_options{-1, -1, nullptr};
  expects.push_back({"bad options", LEAKY_ERROR_INVALID_OPTIONS,
                     call(&good, acc.data(), positive.data(), negative.data(), y.data(),
                          &bad_options)});
  expects.push_back({"outer * channels overflows", LEAKY_ERROR_SIZE,
                     leaky_q8_bias_act_forward(&good, SIZE_MAX / 2, 3, 1, acc.data(), nullptr,
                                               positive.data(), negative.data(), y.data(),
                                               nullptr)});
  for (const Expect& e : expects) {
    EXPECT_EQ(e.got, e.status) << e.name << ": " << leaky_last_error();
  }
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(y[i], kSentinel) << "an error wrote y[" << i << "]";
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(acc[i], 1000) << "an error wrote acc[" << i << "]";
  // Empty calls succeed with null pointers; a null bias is no bias.
  EXPECT_EQ(leaky_q8_bias_act_forward(&good, 0, kChannels, kInner, nullptr, nullptr, nullptr,
                                      nullptr, nullptr, nullptr),
            LEAKY_OK);
  EXPECT_EQ(leaky_q8_bias_act_forward(&good, 1, kChannels, kInner, acc.data(), nullptr,
                                      positive.data(), negative.data(), y.data(), nullptr),
            LEAKY_OK);
  EXPECT_EQ(y[0], 10);  // 1000 * 0.01
}

}  // namespace
}  // namespace leaky::test::eight_bit

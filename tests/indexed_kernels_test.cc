// The indexed kernels of kernel_list.inc (bias_act, bias_act with dropout,
// PReLU, RReLU: the kernels that know each element's index), one test per
// (op, dtype) generated from the list, on every SIMD target: bit-exact
// against the scalar references (leaky/reference.hpp) for every n from 0 to
// 2,048 (LEAKY_TEST_QUICK_SWEEP=1: to 300), flat, per-channel and
// channels-last layouts, sentinels after every output, 1..4 threads on
// multi-core plans, random-stream offsets that cross group and counter-word
// boundaries; bias_act also over every activation, clamp, gain and bias.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "leaky/leaky.h"
#include "leaky/reference.hpp"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test {
namespace {

using reference::compute_t;

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

// One case of a sweep, named in every failure message (the target is named
// by ForEachTarget's trace).
struct Case {
  size_t n;
  Layout layout;
  leaky_options options;
};

std::string Describe(const char* op, const Case& c) {
  return std::string(op) + " n=" + std::to_string(c.n) + " layout=[" +
         std::to_string(c.layout.outer) + "," + std::to_string(c.layout.channels) + "," +
         std::to_string(c.layout.inner) + "] threads=" + std::to_string(c.options.num_threads) +
         " stream_stores=" + std::to_string(c.options.stream_stores);
}

// Runs body(case) for every n of the sweep and its layouts on every target,
// with multi-core plans even for small n.
template <class Body>
void Sweep(bool with_layouts, Body body) {
  internal::SetMinBytesPerCoreForTesting(1);
  ForEachTarget([&](const std::string&) {
    for (size_t n = 0; n <= MaxSweep(); ++n) {
      const std::vector<Layout> layouts =
          with_layouts ? LayoutsFor(n) : std::vector<Layout>{{1, 1, n}};
      for (const Layout& l : layouts) {
        const int threads = static_cast<int>(n % 4) + 1;
        body(Case{n, l, leaky_options{threads, n % 5 == 0 ? 1 : -1}});
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
  internal::SetMinBytesPerCoreForTesting(0);
}

size_t ChannelOf(const Layout& l, size_t i) { return (i / l.inner) % l.channels; }

// ------------------------------------------------------------------ RReLU
leaky_rrelu_params RreluParamsFor(size_t n) { return {0.125, 1.0 / 3.0, 1, 42 + n, OffsetFor(n)}; }

template <class T>
void rrelu_forward_sweep() {
  Sweep(false, [](const Case& c) {
    const size_t n = c.n;
    const leaky_rrelu_params p = RreluParamsFor(n);
    const auto x = Random<T>(n, 1);
    Guarded<T> y(n), noise(n);
    ASSERT_EQ(leaky_rrelu_forward(dtype_of<T>(), n, x.data(), y.data(), noise.data(), &p,
                                  &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact() && noise.GuardIntact()) << Describe("rrelu_forward", c);
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t word = reference::stream_word(p.seed, p.offset + i);
      T expected_noise;
      const T ey = reference::rrelu_forward(x[i], word, p.lower, p.upper, &expected_noise);
      ASSERT_TRUE(SameOrBothNan(y.data()[i], ey))
          << Describe("rrelu_forward", c) << " y[" << i << "] " << Hex(y.data()[i])
          << " expected " << Hex(ey);
      ASSERT_TRUE(SameOrBothNan(noise.data()[i], expected_noise))
          << Describe("rrelu_forward", c) << " noise[" << i << "]";
    }
  });
}

template <class T>
void rrelu_backward_sweep() {
  Sweep(false, [](const Case& c) {
    const size_t n = c.n;
    const leaky_rrelu_params p = RreluParamsFor(n);
    const auto x = Random<T>(n, 1), dy = Random<T>(n, 2);
    Guarded<T> dx(n);
    ASSERT_EQ(leaky_rrelu_backward(dtype_of<T>(), n, dy.data(), x.data(), dx.data(), &p,
                                   &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(dx.GuardIntact()) << Describe("rrelu_backward", c);
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t word = reference::stream_word(p.seed, p.offset + i);
      const T edx = reference::rrelu_backward(dy[i], x[i], word, p.lower, p.upper);
      ASSERT_TRUE(SameOrBothNan(dx.data()[i], edx))
          << Describe("rrelu_backward", c) << " dx[" << i << "]";
    }
  });
}

// --------------------------------------------------- bias_act with dropout
leaky_bias_act_params DropoutActFor(size_t n) {
  return {n % 3 == 0 ? LEAKY_ACT_RELU : LEAKY_ACT_LRELU, 0.2, std::sqrt(2.0),
          n % 2 == 0 ? 4.0 : -1.0};
}
// p = 0 keeps every element; the thresholds at the top of the 16 bits:
// 65535 keeps only the halves 0xFFFF, 65536 (p within 2^-16 of 1) none.
// By n / 4, so that every p meets every thread count (n % 4 + 1) and both
// parities of n.
double DropoutPFor(size_t n) {
  switch (n / 4 % 8) {
    case 1: return 0.0;
    case 3: return 65535.0 / 65536.0;
    case 6: return 1.0 - 0x1p-20;
    default: return 0.3;
  }
}

template <class T>
void bias_act_dropout_forward_sweep() {
  Sweep(true, [](const Case& c) {
    const size_t n = c.n;
    const Layout& l = c.layout;
    const leaky_bias_act_params params = DropoutActFor(n);
    const leaky_dropout_params dropout{DropoutPFor(n), 7 + n, OffsetFor(n)};
    const auto x = Random<T>(n, 3), bias = Random<T>(l.channels, 5);
    Guarded<T> y(n);
    std::vector<uint8_t> mask((n + 7) / 8 + 3, 0xA5);
    ASSERT_EQ(leaky_bias_act_dropout_forward(dtype_of<T>(), l.outer, l.channels, l.inner, x.data(),
                                             bias.data(), y.data(), mask.data(), &params, &dropout,
                                             &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact()) << Describe("bias_act_dropout_forward", c);
    // Bits past n in the last byte are the caller's: untouched.
    for (size_t i = n; i < ((n + 7) / 8) * 8; ++i) {
      ASSERT_EQ((mask[i / 8] >> (i % 8)) & 1, (0xA5 >> (i % 8)) & 1) << Describe("mask", c);
    }
    for (size_t b = (n + 7) / 8; b < mask.size(); ++b) ASSERT_EQ(mask[b], 0xA5);
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      const bool kept = DropoutKept(dropout, i);
      ASSERT_EQ(((mask[i / 8] >> (i % 8)) & 1) != 0, kept)
          << Describe("bias_act_dropout_forward", c) << " mask bit " << i;
      const T ey = reference::bias_act_dropout_forward(x[i], bias[ChannelOf(l, i)], params, kept,
                                                       dropout.p);
      ASSERT_TRUE(SameOrBothNan(y.data()[i], ey))
          << Describe("bias_act_dropout_forward", c) << " y[" << i << "] " << Hex(y.data()[i])
          << " expected " << Hex(ey);
    }
  });
}

template <class T>
void bias_act_dropout_backward_sweep() {
  Sweep(true, [](const Case& c) {
    const size_t n = c.n;
    const Layout& l = c.layout;
    const leaky_bias_act_params params = DropoutActFor(n);
    const leaky_dropout_params dropout{DropoutPFor(n), 7 + n, OffsetFor(n)};
    const auto x = Random<T>(n, 3), dy = Random<T>(n, 4), bias = Random<T>(l.channels, 5);
    // The forward's mask, from the reference stream.
    std::vector<uint8_t> mask((n + 7) / 8, 0);
    for (size_t i = 0; i < n; ++i) {
      if (DropoutKept(dropout, i)) mask[i / 8] = static_cast<uint8_t>(mask[i / 8] | (1u << (i % 8)));
    }
    Guarded<T> dx(n);
    ASSERT_EQ(leaky_bias_act_dropout_backward(dtype_of<T>(), l.outer, l.channels, l.inner,
                                              dy.data(), x.data(), bias.data(), mask.data(),
                                              dx.data(), nullptr, &params, dropout.p, &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(dx.GuardIntact()) << Describe("bias_act_dropout_backward", c);
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      const T edx = reference::bias_act_dropout_backward(dy[i], x[i], bias[ChannelOf(l, i)],
                                                         params, DropoutKept(dropout, i), dropout.p);
      ASSERT_TRUE(SameOrBothNan(dx.data()[i], edx))
          << Describe("bias_act_dropout_backward", c) << " dx[" << i << "]";
    }
  });
}

// ------------------------------------------------------------------ PReLU
template <class T>
std::vector<T> PreluWeight(size_t channels) {
  auto weight = Random<T>(channels, 8);
  for (auto& w : weight) {
    if (IsNan(w)) w = static_cast<T>(0.25f);
  }
  return weight;
}

template <class T>
void prelu_forward_sweep() {
  Sweep(true, [](const Case& c) {
    const size_t n = c.n;
    const Layout& l = c.layout;
    const auto x = Random<T>(n, 6);
    const auto weight = PreluWeight<T>(l.channels);
    Guarded<T> y(n);
    ASSERT_EQ(leaky_prelu_forward(dtype_of<T>(), l.outer, l.channels, l.inner, x.data(),
                                  weight.data(), y.data(), &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact()) << Describe("prelu_forward", c);
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(
          SameOrBothNan(y.data()[i], reference::prelu_forward(x[i], weight[ChannelOf(l, i)])))
          << Describe("prelu_forward", c) << " y[" << i << "]";
    }
  });
}

template <class T>
void prelu_backward_sweep() {
  Sweep(true, [](const Case& c) {
    const size_t n = c.n;
    const Layout& l = c.layout;
    const auto x = Random<T>(n, 6), dy = Random<T>(n, 7);
    const auto weight = PreluWeight<T>(l.channels);
    Guarded<T> dx(n), dweight(l.channels);
    ASSERT_EQ(leaky_prelu_backward(dtype_of<T>(), l.outer, l.channels, l.inner, dy.data(), x.data(),
                                   weight.data(), dx.data(), dweight.data(), &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(dx.GuardIntact() && dweight.GuardIntact()) << Describe("prelu_backward", c);
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(SameOrBothNan(dx.data()[i],
                                reference::prelu_backward(dy[i], x[i], weight[ChannelOf(l, i)])))
          << Describe("prelu_backward", c) << " dx[" << i << "]";
    }
    // The sum in (outer, inner) order per channel, as documented.
    std::vector<double> sums(l.channels, 0.0);
    for (size_t o = 0; o < l.outer; ++o) {
      for (size_t ch = 0; ch < l.channels; ++ch) {
        for (size_t i = 0; i < l.inner; ++i) {
          const size_t k = (o * l.channels + ch) * l.inner + i;
          sums[ch] += static_cast<double>(reference::prelu_weight_term(dy[k], x[k]));
        }
      }
    }
    for (size_t ch = 0; ch < l.channels && n > 0; ++ch) {
      const T expected = T(static_cast<compute_t<T>>(sums[ch]));
      ASSERT_TRUE(SameOrBothNan(dweight.data()[ch], expected))
          << Describe("prelu_backward", c) << " dweight[" << ch << "]";
    }
  });
}

// --------------------------------------------------------------- bias_act
// Fixed layouts (including channels-last, inner = 1) against every
// activation, clamp, gain, with and without bias, on 1, 2 and 4 threads.
constexpr Layout kBiasActLayouts[] = {{1, 1, 1000}, {3, 5, 7},  {2, 16, 1},  {4, 3, 33},
                                      {1, 64, 1},   {5, 1, 129}, {2, 7, 300}, {37, 3, 1}};

template <class Body>
void SweepBiasAct(Body body) {
  internal::SetMinBytesPerCoreForTesting(1);  // split even small tensors
  ForEachTarget([&](const std::string&) {
    for (const Layout& l : kBiasActLayouts) {
      for (leaky_activation act : {LEAKY_ACT_LINEAR, LEAKY_ACT_RELU, LEAKY_ACT_LRELU}) {
        for (double clamp : {-1.0, 0.5, 256.0}) {
          for (double gain : {1.0, std::sqrt(2.0)}) {
            const leaky_bias_act_params p{act, 0.2, gain, clamp};
            for (bool with_bias : {true, false}) {
              for (int threads : {1, 2, 4}) {
                const Case c{l.outer * l.channels * l.inner, l, leaky_options{threads, -1}};
                body(c, p, with_bias);
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

std::string DescribeBiasAct(const char* op, const Case& c, const leaky_bias_act_params& p,
                            bool with_bias) {
  return Describe(op, c) + " act=" + std::to_string(p.activation) + " clamp=" +
         std::to_string(p.clamp) + " gain=" + std::to_string(p.gain) +
         (with_bias ? " bias" : " no bias");
}

template <class T>
void bias_act_forward_sweep() {
  SweepBiasAct([](const Case& c, const leaky_bias_act_params& p, bool with_bias) {
    const Layout& l = c.layout;
    const auto x = Random<T>(c.n, 1), bias = Random<T>(l.channels, 3);
    const T* b = with_bias ? bias.data() : nullptr;
    Guarded<T> y(c.n);
    ASSERT_EQ(leaky_bias_act_forward(dtype_of<T>(), l.outer, l.channels, l.inner, x.data(), b,
                                     y.data(), &p, &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(y.GuardIntact()) << DescribeBiasAct("bias_act_forward", c, p, with_bias);
    const reference::ieee_environment ieee;
    for (size_t k = 0; k < c.n; ++k) {
      const T bc = b != nullptr ? b[ChannelOf(l, k)] : T(-0.0f);
      const T ey = reference::bias_act_forward(x[k], bc, p);
      ASSERT_TRUE(SameOrBothNan(y.data()[k], ey))
          << DescribeBiasAct("bias_act_forward", c, p, with_bias) << " y[" << k << "] "
          << Hex(y.data()[k]) << " expected " << Hex(ey);
    }
  });
}

template <class T>
void bias_act_backward_sweep() {
  SweepBiasAct([](const Case& c, const leaky_bias_act_params& p, bool with_bias) {
    const Layout& l = c.layout;
    const auto x = Random<T>(c.n, 1), dy = Random<T>(c.n, 2), bias = Random<T>(l.channels, 3);
    const T* b = with_bias ? bias.data() : nullptr;
    Guarded<T> dx(c.n), db(l.channels);
    ASSERT_EQ(leaky_bias_act_backward(dtype_of<T>(), l.outer, l.channels, l.inner, dy.data(),
                                      x.data(), b, dx.data(), db.data(), &p, &c.options),
              LEAKY_OK)
        << leaky_last_error();
    ASSERT_TRUE(dx.GuardIntact() && db.GuardIntact())
        << DescribeBiasAct("bias_act_backward", c, p, with_bias);
    const reference::ieee_environment ieee;
    std::vector<double> sums(l.channels, 0.0);
    for (size_t o = 0; o < l.outer; ++o) {
      for (size_t ch = 0; ch < l.channels; ++ch) {
        for (size_t i = 0; i < l.inner; ++i) {
          const size_t k = (o * l.channels + ch) * l.inner + i;
          const T bc = b != nullptr ? b[ch] : T(-0.0f);
          const T edx = reference::bias_act_backward(dy[k], x[k], bc, p);
          ASSERT_TRUE(SameOrBothNan(dx.data()[k], edx))
              << DescribeBiasAct("bias_act_backward", c, p, with_bias) << " dx[" << k << "] "
              << Hex(dx.data()[k]) << " expected " << Hex(edx);
          sums[ch] += static_cast<double>(static_cast<compute_t<T>>(dx.data()[k]));
        }
      }
    }
    for (size_t ch = 0; ch < l.channels; ++ch) {
      const T expected = T(static_cast<compute_t<T>>(sums[ch]));
      ASSERT_TRUE(SameOrBothNan(db.data()[ch], expected))
          << DescribeBiasAct("bias_act_backward", c, p, with_bias) << " db[" << ch << "]";
    }
  });
}

// One test per indexed kernel of the list: adding one there without its
// sweep here does not compile.
#define LEAKY_OP(op, arity)
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type)   // kernel_sizes_test sweeps these
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type)  // kernel_sizes_test sweeps these
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type) \
  TEST(IndexedKernelSizes, op##_##Codec) { op##_sweep<Type>(); }
#include "kernels/kernel_list.inc"

}  // namespace
}  // namespace leaky::test

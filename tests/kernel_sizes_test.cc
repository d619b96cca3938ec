// Every kernel of kernel_list.inc, every SIMD target: every n in [0, 2048]
// (see SweepLengths)
// at byte offsets 0..63 of source and destination, 1..4 threads, automatic /
// cached / streaming stores, with sentinel bytes around the output; in-place;
// then large and prime n on real multi-core plans.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include "op_harness.h"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test {
namespace {

constexpr size_t kMaxN = 2048;
constexpr size_t kGuard = 64;
constexpr unsigned char kSentinel = 0xA5;

template <class T>
std::vector<unsigned char> RandomBytes(size_t elements, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> bytes(elements * sizeof(T));
  // Mostly finite values of both signs, some specials from raw bits.
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 15);
  for (size_t i = 0; i < elements; ++i) {
    T v;
    if (pick(rng) == 0) {
      std::uniform_int_distribution<uint64_t> raw;
      uint64_t r = raw(rng);
      std::memcpy(&v, &r, sizeof(T));
    } else {
      v = static_cast<T>(normal(rng));
    }
    std::memcpy(&bytes[i * sizeof(T)], &v, sizeof(T));
  }
  return bytes;
}

template <class T>
T LoadAt(const unsigned char* p, size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

// What every element of the sources at byte offset `offset0` must become:
// the scalar reference for exact ops; for ops with exp/expm1, this target's
// own result from one single-threaded call over the whole array (a lane's
// result does not depend on its position, so every tiling, tail and thread
// count must reproduce it bit for bit; accuracy is elu_accuracy_test's job).
template <class T, class Harness>
std::vector<T> Expected(const std::vector<unsigned char>& src0,
                        const std::vector<unsigned char>& src1, size_t offset0, size_t n,
                        double param) {
  std::vector<T> expected(n);
  if constexpr (Harness::kExact) {
    const reference::ieee_environment ieee;
    for (size_t i = 0; i < n; ++i) {
      expected[i] = Harness::Reference(LoadAt<T>(src0.data() + offset0, i),
                                       LoadAt<T>(src1.data() + offset0, i), param);
    }
  } else {
    std::vector<T> a(n), b(n);
    std::memcpy(a.data(), src0.data() + offset0, n * sizeof(T));
    std::memcpy(b.data(), src1.data() + offset0, n * sizeof(T));
    const OpCall<T> call{a.data(), b.data(), expected.data(), n, param, leaky_options{1, 0}};
    EXPECT_EQ(Harness::Call(call), LEAKY_OK) << leaky_last_error();
  }
  return expected;
}

// Checks one call: output equals `expected`, sentinels intact.
template <class T, class Harness>
void CheckOne(const std::vector<unsigned char>& src0, const std::vector<unsigned char>& src1,
              const std::vector<T>& expected, size_t offset0, size_t offset_dst, size_t n,
              double param, leaky_options options, bool in_place,
              std::vector<unsigned char>& dst) {
  // Sentinels: kGuard bytes (plus the misalignment) before, kGuard after.
  const size_t end = kGuard + offset_dst + n * sizeof(T);
  ASSERT_LE(end + kGuard, dst.size());
  std::fill(dst.begin(), dst.begin() + static_cast<long>(end + kGuard), kSentinel);
  unsigned char* out = dst.data() + kGuard + offset_dst;
  const unsigned char* a = src0.data() + offset0;
  if (in_place) {
    std::memcpy(out, a, n * sizeof(T));
    a = out;
  }
  const OpCall<T> call{reinterpret_cast<const T*>(a),
                       reinterpret_cast<const T*>(src1.data() + offset0),
                       reinterpret_cast<T*>(out), n, param, options};
  ASSERT_EQ(Harness::Call(call), LEAKY_OK) << leaky_last_error();
  for (size_t i = 0; i < n; ++i) {
    const T actual = LoadAt<T>(out, i);
    if (!SameOrBothNan(actual, expected[i])) {
      FAIL() << "n=" << n << " offsets=" << offset0 << "/" << offset_dst << " threads="
             << options.num_threads << " stream=" << options.stream_stores << " in_place="
             << in_place << " index " << i << ": got " << Hex(actual) << " expected "
             << Hex(expected[i]);
    }
  }
  for (size_t b = 0; b < end + kGuard; ++b) {
    if (b == kGuard + offset_dst) b = end;
    if (dst[b] != kSentinel) {
      FAIL() << "n=" << n << " sentinel byte " << b << " overwritten (output spans ["
             << kGuard + offset_dst << ", " << end << "))";
    }
  }
}

// The sizes swept: every n in [0, kMaxN]. LEAKY_TEST_QUICK_SWEEP=1 (the
// sanitizer run, where the release run has already checked every n and what is
// under test is memory safety) keeps every n up to 300, which covers every
// head/body/tail split of every target's vector length, and the power-of-two
// edges above it.
std::vector<size_t> SweepLengths() {
  std::vector<size_t> lengths;
  const char* quick = std::getenv("LEAKY_TEST_QUICK_SWEEP");
  const bool is_quick = quick != nullptr && std::string(quick) == "1";
  for (size_t n = 0; n <= (is_quick ? 300 : kMaxN); ++n) lengths.push_back(n);
  if (is_quick) {
    for (size_t n : {511, 512, 513, 1023, 1024, 1025, 2047, 2048}) lengths.push_back(n);
  }
  return lengths;
}

template <class T, class Harness>
void SweepSizes() {
  // Split even tiny arrays across cores, so threads 1..4 really run.
  internal::SetMinBytesPerCoreForTesting(1);
  const auto src0 = RandomBytes<T>(kMaxN + 64, 1);
  const auto src1 = RandomBytes<T>(kMaxN + 64, 2);
  std::vector<unsigned char> dst(2 * kGuard + 64 + kMaxN * sizeof(T));
  ForEachTarget([&](const std::string&) {
    std::vector<std::vector<T>> expected;
    for (size_t offset = 0; offset < 64; ++offset) {
      expected.push_back(Expected<T, Harness>(src0, src1, offset, kMaxN, 0.2));
    }
    for (size_t n : SweepLengths()) {
      for (size_t offset = 0; offset < 64; ++offset) {
        const leaky_options options{static_cast<int>(1 + offset % 4),
                                    static_cast<int>((offset / 4) % 3) - 1};
        const size_t offset_dst = (offset * 37 + 11) % 64;
        const bool in_place = offset % 8 == 5;
        CheckOne<T, Harness>(src0, src1, expected[offset], offset, offset_dst, n, 0.2, options,
                             false, dst);
        if (in_place) {
          CheckOne<T, Harness>(src0, src1, expected[offset], offset, offset, n, 0.2, options,
                               true, dst);
        }
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
  internal::SetMinBytesPerCoreForTesting(0);
}

template <class T, class Harness>
void LargeSizes() {
  // The sanitizer run (LEAKY_TEST_QUICK_SWEEP=1) keeps the sizes below 2^17,
  // which already span several tiles on every core.
  const char* quick = std::getenv("LEAKY_TEST_QUICK_SWEEP");
  const bool is_quick = quick != nullptr && std::string(quick) == "1";
  std::vector<size_t> sizes = {4099, 65537};
  if (!is_quick) sizes.insert(sizes.end(), {1000003, (size_t{1} << 20) + 3});
  const size_t max_n = (size_t{1} << 20) + 3;
  const auto src0 = RandomBytes<T>(max_n + 64, 3);
  const auto src1 = RandomBytes<T>(max_n + 64, 4);
  std::vector<unsigned char> dst(2 * kGuard + 64 + max_n * sizeof(T));
  ForEachTarget([&](const std::string&) {
    for (size_t n : sizes) {
      for (size_t offset : {0, 6, 17, 63}) {
        const std::vector<T> expected_negative = Expected<T, Harness>(src0, src1, offset, n, -0.5);
        const std::vector<T> expected_small = Expected<T, Harness>(src0, src1, offset, n, 0.01);
        for (int threads = 1; threads <= 4; ++threads) {
          const leaky_options options{threads, threads % 3 - 1};
          CheckOne<T, Harness>(src0, src1, expected_negative, offset, (offset + 24) % 64, n,
                               -0.5, options, false, dst);
          if (threads == 2) {
            CheckOne<T, Harness>(src0, src1, expected_small, offset, offset, n, 0.01, options,
                                 true, dst);
          }
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  });
}

#define LEAKY_OP(op, arity)
#define LEAKY_KERNEL_TESTS(op, Codec, Type)                                    \
  TEST(KernelSizes, op##_##Codec) { SweepSizes<Type, op##_harness<Type>>(); } \
  TEST(KernelLargeSizes, op##_##Codec) { LargeSizes<Type, op##_harness<Type>>(); }
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) LEAKY_KERNEL_TESTS(op, Codec, Type)
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type) LEAKY_KERNEL_TESTS(op, Codec, Type)
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)  // bias_act_test sweeps these
#include "kernels/kernel_list.inc"

}  // namespace
}  // namespace leaky::test

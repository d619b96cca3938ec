// Every unary and binary kernel of kernel_list.inc, every SIMD target, over
// an explicit table of cases (SweepCases: every source misalignment 0..63
// with its destination misalignment, thread count, store policy and
// in-place choice) for every n in [0, 2048] (see SweepLengths), with
// sentinel bytes around the output; then large and prime n on real
// multi-core plans. Every failure names op, dtype, target, n and the case.
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

// One call of a sweep.
struct SweepCase {
  size_t source_offset;       // bytes past an aligned start
  size_t destination_offset;  // likewise (equal to source_offset in place)
  int threads;                // num_threads, 1..4
  int stream_stores;          // -1 automatic, 0 never, 1 always
  bool in_place;
};

std::string Describe(const char* op, const SweepCase& c, size_t n) {
  return std::string(op) + " target " + leaky_simd_target() + " n=" + std::to_string(n) +
         " offsets=" + std::to_string(c.source_offset) + "/" +
         std::to_string(c.destination_offset) + " threads=" + std::to_string(c.threads) +
         " stream_stores=" + std::to_string(c.stream_stores) +
         (c.in_place ? " in place" : "");
}

// The case table: each source misalignment 0..63 once out of place, its
// destination misalignment spread over 0..63 (37 is coprime with 64), the
// thread count cycling 1..4 and the store policy automatic/never/always
// every 4 offsets; every 8th offset (5, 13, ...) also in place.
std::vector<SweepCase> SweepCases() {
  std::vector<SweepCase> cases;
  for (size_t offset = 0; offset < 64; ++offset) {
    const int threads = static_cast<int>(1 + offset % 4);
    const int stream_stores = static_cast<int>((offset / 4) % 3) - 1;
    cases.push_back({offset, (offset * 37 + 11) % 64, threads, stream_stores, false});
    if (offset % 8 == 5) cases.push_back({offset, offset, threads, stream_stores, true});
  }
  return cases;
}

// Checks one call: output equals `expected`, sentinels intact.
template <class T, class Harness>
void CheckOne(const char* op, const std::vector<unsigned char>& src0,
              const std::vector<unsigned char>& src1, const std::vector<T>& expected,
              const SweepCase& c, size_t n, double param, std::vector<unsigned char>& dst) {
  // Sentinels: kGuard bytes (plus the misalignment) before, kGuard after.
  const size_t end = kGuard + c.destination_offset + n * sizeof(T);
  ASSERT_LE(end + kGuard, dst.size());
  std::fill(dst.begin(), dst.begin() + static_cast<long>(end + kGuard), kSentinel);
  unsigned char* out = dst.data() + kGuard + c.destination_offset;
  const unsigned char* a = src0.data() + c.source_offset;
  if (c.in_place) {
    std::memcpy(out, a, n * sizeof(T));
    a = out;
  }
  const OpCall<T> call{reinterpret_cast<const T*>(a),
                       reinterpret_cast<const T*>(src1.data() + c.source_offset),
                       reinterpret_cast<T*>(out), n, param,
                       leaky_options{c.threads, c.stream_stores}};
  ASSERT_EQ(Harness::Call(call), LEAKY_OK) << Describe(op, c, n) << ": " << leaky_last_error();
  for (size_t i = 0; i < n; ++i) {
    const T actual = LoadAt<T>(out, i);
    if (!SameOrBothNan(actual, expected[i])) {
      FAIL() << Describe(op, c, n) << " slope " << param << ": index " << i << " got "
             << Hex(actual) << " expected " << Hex(expected[i]);
    }
  }
  for (size_t b = 0; b < end + kGuard; ++b) {
    if (b == kGuard + c.destination_offset) b = end;
    if (dst[b] != kSentinel) {
      FAIL() << Describe(op, c, n) << ": sentinel byte " << b << " overwritten (output spans ["
             << kGuard + c.destination_offset << ", " << end << "))";
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
void SweepSizes(const char* op) {
  // Split even tiny arrays across cores, so threads 1..4 really run.
  internal::SetMinBytesPerCoreForTesting(1);
  const auto src0 = RandomBytes<T>(kMaxN + 64, 1);
  const auto src1 = RandomBytes<T>(kMaxN + 64, 2);
  std::vector<unsigned char> dst(2 * kGuard + 64 + kMaxN * sizeof(T));
  const std::vector<SweepCase> cases = SweepCases();
  ForEachTarget([&](const std::string&) {
    std::vector<std::vector<T>> expected;  // per source offset
    for (size_t offset = 0; offset < 64; ++offset) {
      expected.push_back(Expected<T, Harness>(src0, src1, offset, kMaxN, 0.2));
    }
    for (size_t n : SweepLengths()) {
      for (const SweepCase& c : cases) {
        CheckOne<T, Harness>(op, src0, src1, expected[c.source_offset], c, n, 0.2, dst);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  });
  internal::SetMinBytesPerCoreForTesting(0);
}

template <class T, class Harness>
void LargeSizes(const char* op) {
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
          const SweepCase out_of_place{offset, (offset + 24) % 64, threads, threads % 3 - 1, false};
          CheckOne<T, Harness>(op, src0, src1, expected_negative, out_of_place, n, -0.5, dst);
          if (threads == 2) {
            const SweepCase in_place{offset, offset, threads, threads % 3 - 1, true};
            CheckOne<T, Harness>(op, src0, src1, expected_small, in_place, n, 0.01, dst);
          }
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  });
}

#define LEAKY_OP(op, arity)
#define LEAKY_KERNEL_TESTS(op, Codec, Type)                                           \
  TEST(KernelSizes, op##_##Codec) { SweepSizes<Type, op##_harness<Type>>(#op "/" #Codec); } \
  TEST(KernelLargeSizes, op##_##Codec) {                                                      \
    LargeSizes<Type, op##_harness<Type>>(#op "/" #Codec);                                      \
  }
#define LEAKY_UNARY_KERNEL(op, dtype, Codec, Type) LEAKY_KERNEL_TESTS(op, Codec, Type)
#define LEAKY_BINARY_KERNEL(op, dtype, Codec, Type) LEAKY_KERNEL_TESTS(op, Codec, Type)
#define LEAKY_INDEXED_KERNEL(op, dtype, Codec, Type)  // indexed_kernels_test sweeps these
#include "kernels/kernel_list.inc"

}  // namespace
}  // namespace leaky::test

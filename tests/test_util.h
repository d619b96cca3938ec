// Shared test helpers: run a body once per SIMD target compiled in and
// supported by this CPU, compare bit patterns, guard buffers with sentinels.
#ifndef LEAKY_TESTS_TEST_UTIL_H_
#define LEAKY_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "hwy/targets.h"
#include "leaky/leaky.hpp"
#include "leaky/reference.hpp"

namespace leaky::test {

// The targets ForEachTarget runs: every target compiled in and supported by
// this CPU, best first; LEAKY_TEST_TARGETS=NEON,SVE_256 keeps the named ones
// (each must be supported: a named target that is not fails the test rather
// than being skipped), and LEAKY_TEST_BEST_TARGET_ONLY=1 (the
// ThreadSanitizer run, where threads, not instruction sets, are under test)
// the best.
std::vector<int64_t> TargetsUnderTest();

// Runs `body` with Highway's dispatch forced to each target in turn; the
// library's leaky_simd_target() must report that target while it runs.
inline void ForEachTarget(const std::function<void(const std::string&)>& body) {
  const std::vector<int64_t> targets = TargetsUnderTest();
  ASSERT_FALSE(targets.empty());
  for (int64_t target : targets) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    ASSERT_EQ(name, leaky_simd_target()) << "dispatch did not switch target";
    SCOPED_TRACE("SIMD target " + name);
    body(name);
    if (::testing::Test::HasFatalFailure()) break;
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Bit-exact equality, except that any NaN equals any NaN.
template <class T> bool IsNan(T v) {
  if constexpr (std::is_same_v<T, float16>) return (v.bits & 0x7fff) > 0x7c00;
  else if constexpr (std::is_same_v<T, bfloat16>) return (v.bits & 0x7fff) > 0x7f80;
  else return std::isnan(v);
}
template <class T> auto Bits(T v) {
  if constexpr (sizeof(T) == 2) return v.bits;
  else if constexpr (sizeof(T) == 4) return std::bit_cast<uint32_t>(v);
  else return std::bit_cast<uint64_t>(v);
}
template <class T> bool SameOrBothNan(T a, T b) {
  if (IsNan(a) || IsNan(b)) return IsNan(a) && IsNan(b);
  return Bits(a) == Bits(b);
}
template <class T> std::string Hex(T v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "0x%llx", static_cast<unsigned long long>(Bits(v)));
  return buffer;
}

// Returns the index of the first mismatch, or -1.
template <class T>
long FirstMismatch(const T* actual, const T* expected, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (!SameOrBothNan(actual[i], expected[i])) return static_cast<long>(i);
  }
  return -1;
}

// The thread's FP control register (x86 MXCSR, ARM64 FPCR; 0 elsewhere) and
// its flush-to-zero bits (FTZ and DAZ; FZ and FZ16).
uint64_t FpControl();
void SetFpControl(uint64_t value);
#if defined(__aarch64__)
inline constexpr uint64_t kFlushBits = (1u << 24) | (1u << 19);
#else
inline constexpr uint64_t kFlushBits = 0x8040u;
#endif

// Flush-to-zero set for the lifetime of the object, as a caller may have it.
class FlushDenormals {
 public:
  FlushDenormals() : saved_(FpControl()) { SetFpControl(saved_ | kFlushBits); }
  ~FlushDenormals() { SetFpControl(saved_); }
  FlushDenormals(const FlushDenormals&) = delete;
  FlushDenormals& operator=(const FlushDenormals&) = delete;

 private:
  uint64_t saved_;
};

// Every interesting f32 value: zeros, subnormals, normals at the edges,
// infinities, quiet and signalling NaNs with payloads, both signs.
std::vector<float> SpecialFloats();
std::vector<double> SpecialDoubles();

// Normal(0, 2) values with NaN, -0 and +0 sprinkled at fixed strides.
template <class T>
std::vector<T> RandomWithSpecials(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<T> v(n);
  for (size_t i = 0; i < n; ++i) {
    v[i] = static_cast<T>(normal(rng));
    if (i % 97 == 3) v[i] = static_cast<T>(std::numeric_limits<float>::quiet_NaN());
    if (i % 89 == 5) v[i] = static_cast<T>(-0.0f);
    if (i % 83 == 7) v[i] = static_cast<T>(0.0f);
  }
  return v;
}

inline constexpr double kSlopes[] = {0.0, 0.01, 0.2, 0.3, 1.0, 1.5, -0.5};

// Whether dropout keeps element i of a call: its stream half word against
// the threshold, from the scalar references (leaky/reference.hpp).
inline bool DropoutKept(const leaky_dropout_params& d, size_t i) {
  return reference::stream_half_word(d.seed, d.offset + i) >= reference::dropout_threshold(d.p);
}

}  // namespace leaky::test

#endif  // LEAKY_TESTS_TEST_UTIL_H_

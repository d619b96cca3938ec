#include "test_util.h"

#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

#include <limits>
#include <sstream>

namespace leaky::test {

std::vector<int64_t> TargetsUnderTest() {
  std::vector<int64_t> targets = hwy::SupportedAndGeneratedTargets();
  if (const char* named = std::getenv("LEAKY_TEST_TARGETS"); named != nullptr && *named) {
    std::vector<int64_t> kept;
    std::stringstream list(named);
    for (std::string name; std::getline(list, name, ',');) {
      bool found = false;
      for (int64_t target : targets) {
        if (name == hwy::TargetName(target)) {
          kept.push_back(target);
          found = true;
        }
      }
      EXPECT_TRUE(found) << "LEAKY_TEST_TARGETS names " << name
                         << ", which this CPU (or this build) does not have";
    }
    targets = kept;
  }
  const char* best_only = std::getenv("LEAKY_TEST_BEST_TARGET_ONLY");
  if (best_only != nullptr && std::string(best_only) == "1" && !targets.empty()) targets.resize(1);
  return targets;
}

uint64_t FpControl() {
#if defined(__x86_64__)
  return _mm_getcsr();
#elif defined(__aarch64__)
  uint64_t value;
  __asm__ volatile("mrs %0, fpcr" : "=r"(value));
  return value;
#else
  return 0;
#endif
}

void SetFpControl(uint64_t value) {
#if defined(__x86_64__)
  _mm_setcsr(static_cast<unsigned>(value));
#elif defined(__aarch64__)
  __asm__ volatile("msr fpcr, %0" : : "r"(value) : "memory");
#else
  (void)value;
#endif
}

namespace {
template <class T, class Bits>
std::vector<T> Specials(std::initializer_list<Bits> patterns) {
  std::vector<T> values;
  for (Bits bits : patterns) {
    const T v = std::bit_cast<T>(bits);
    values.push_back(v);
    values.push_back(-v);
  }
  using L = std::numeric_limits<T>;
  for (T v : {T(0), L::min(), L::denorm_min(), L::max(), L::infinity(), L::epsilon(), T(1),
              T(0.5), T(1e-30), T(6.0e-8), T(3.0e-8), T(1e-5), T(65504), T(65520)}) {
    values.push_back(v);
    values.push_back(-v);
  }
  return values;
}
}  // namespace

std::vector<float> SpecialFloats() {
  return Specials<float, uint32_t>({0x00000001u, 0x00000002u, 0x007fffffu, 0x00400000u,
                                    0x00800000u, 0x00800001u, 0x7f7fffffu, 0x7f800001u,
                                    0x7fc00000u, 0x7fc12345u, 0x7fa00000u, 0x7fbfffffu,
                                    0x33800000u, 0x33000000u, 0x387fe000u, 0x477ff000u});
}

std::vector<double> SpecialDoubles() {
  return Specials<double, uint64_t>({0x1ull, 0x000fffffffffffffull, 0x0010000000000000ull,
                                     0x7fefffffffffffffull, 0x7ff0000000000001ull,
                                     0x7ff8000000000000ull, 0x7ff8123456789abcull,
                                     0x7ff4000000000000ull});
}

}  // namespace leaky::test

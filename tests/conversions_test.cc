// The exact f16/bf16 conversions of leaky.hpp, against independent oracles:
// the hardware's conversions for f16 (x86 F16C, ARM64 FCVT through __fp16,
// run with the FP guard so FZ16 cannot flush), and exact double arithmetic
// for bf16.
#include <gtest/gtest.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <cstring>

#include <cmath>

#include "test_util.h"

namespace leaky::test {
namespace {

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t HardwareToHalf(float f) {
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((target("f16c"))) float HardwareFromHalf(uint16_t h) { return _cvtsh_ss(h); }

bool HasF16c() { return __builtin_cpu_supports("f16c"); }
#elif defined(__aarch64__)
uint16_t HardwareToHalf(float f) {
  const __fp16 h = static_cast<__fp16>(f);
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
float HardwareFromHalf(uint16_t bits) {
  __fp16 h;
  std::memcpy(&h, &bits, 2);
  return static_cast<float>(h);
}
bool HasF16c() { return true; }  // FCVT is in every ARMv8-A
#else
uint16_t HardwareToHalf(float) { return 0; }
float HardwareFromHalf(uint16_t) { return 0; }
bool HasF16c() { return false; }
#endif

// f32 inputs that probe every f16 rounding boundary: each f16 value, the
// midpoints between neighbours, and one f32 ulp either side of those.
std::vector<uint32_t> HalfBoundaryProbes() {
  std::vector<uint32_t> probes;
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const float lo = static_cast<float>(float16::from_bits(static_cast<uint16_t>(h)));
    const float hi = static_cast<float>(float16::from_bits(static_cast<uint16_t>(h + 1)));
    const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);
    for (float v : {lo, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      probes.push_back(std::bit_cast<uint32_t>(v));
      probes.push_back(std::bit_cast<uint32_t>(v) | 0x80000000u);
    }
  }
  return probes;
}

TEST(Conversions, Float16ToFloatMatchesF16cForAllPatterns) {
  if (!HasF16c()) GTEST_SKIP() << "no F16C on this CPU to compare against";
  for (uint32_t h = 0; h < 65536; ++h) {
    const float ours = static_cast<float>(float16::from_bits(static_cast<uint16_t>(h)));
    const float hardware = HardwareFromHalf(static_cast<uint16_t>(h));
    ASSERT_EQ(Bits(ours), Bits(hardware)) << "pattern " << h;  // NaN payloads too
  }
}

TEST(Conversions, FloatToFloat16MatchesF16c) {
  if (!HasF16c()) GTEST_SKIP() << "no F16C on this CPU to compare against";
  std::vector<uint32_t> probes = HalfBoundaryProbes();
  // Plus a dense stride through all 2^32 patterns (NaNs and infinities too).
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4093) {
    probes.push_back(static_cast<uint32_t>(bits));
  }
  for (uint32_t bits : probes) {
    const float f = std::bit_cast<float>(bits);
    ASSERT_EQ(float16(f).bits, HardwareToHalf(f)) << "f32 bits 0x" << std::hex << bits;
  }
}

// bf16 oracle: the two bf16 neighbours of x and exact distances in double.
uint16_t OracleToBfloat16(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  if (std::isnan(x)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  const uint16_t down = static_cast<uint16_t>(bits >> 16);  // toward zero
  const uint16_t up = static_cast<uint16_t>(down + 1);      // away from zero
  const double dx = std::fabs(static_cast<double>(x));
  const double d_down = dx - std::fabs(static_cast<double>(static_cast<float>(bfloat16::from_bits(down))));
  const double away = (up & 0x7fff) >= 0x7f80 ? INFINITY
                      : std::fabs(static_cast<double>(static_cast<float>(bfloat16::from_bits(up))));
  // Overflow: anything at or above the midpoint to 2^128 rounds to inf.
  const double d_up = (up & 0x7fff) == 0x7f80 ? std::ldexp(1.0, 128) - dx : away - dx;
  if (d_down < d_up) return down;
  if (d_up < d_down) return up;
  return (down & 1) ? up : down;
}

TEST(Conversions, FloatToBfloat16RoundsToNearestEven) {
  std::vector<uint32_t> probes;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      probes.push_back(hi << 16 | lo);
    }
  }
  for (uint32_t bits : probes) {
    const float f = std::bit_cast<float>(bits);
    ASSERT_EQ(bfloat16(f).bits, OracleToBfloat16(f)) << "f32 bits 0x" << std::hex << bits;
  }
}

TEST(Conversions, HalfRoundTripsAreExact) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const auto b = static_cast<uint16_t>(h);
    const bool f16_nan = (h & 0x7fff) > 0x7c00;
    const bool bf16_nan = (h & 0x7fff) > 0x7f80;
    const uint16_t f16_quiet = f16_nan ? static_cast<uint16_t>(b | 0x200) : b;
    const uint16_t bf16_quiet = bf16_nan ? static_cast<uint16_t>(b | 0x40) : b;
    ASSERT_EQ(float16(static_cast<float>(float16::from_bits(b))).bits, f16_quiet) << h;
    ASSERT_EQ(bfloat16(static_cast<float>(bfloat16::from_bits(b))).bits, bf16_quiet) << h;
  }
}

}  // namespace
}  // namespace leaky::test

// The vector codecs of every SIMD target against the scalar conversions of
// leaky.hpp (themselves checked against hardware in conversions_test): the
// exhaustive op tests rarely hit exact rounding ties, so ties are probed here.
// Also the targets themselves: on a CPU the test runner names, the targets
// this build dispatches to are exactly the expected ones, at the expected
// vector width (ARM64 under QEMU: tests/arm64/run.sh).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "codecs_test.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hwy/highway.h"
#include "kernels/codecs-inl.h"
#include "leaky/leaky.hpp"
#include "test_util.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// Narrows f32 -> 16-bit (`to_half`) or widens 16-bit -> f32 with a codec,
// whole vectors only (n is a multiple of every target's lane count).
template <class Codec>
void RoundTrip(size_t n, const float* f32_in, uint16_t* bits_out, const uint16_t* bits_in,
               float* f32_out) {
  const typename Codec::D d;
  for (size_t i = 0; i < n; i += hn::Lanes(d)) {
    Codec::Store(d, hn::LoadU(d, f32_in + i), bits_out + i);
    hn::StoreU(Codec::Load(d, bits_in + i), d, f32_out + i);
  }
}
void RoundTripF16(size_t n, const float* a, uint16_t* b, const uint16_t* c, float* d) {
  RoundTrip<CodecF16>(n, a, b, c, d);
}
void RoundTripBF16(size_t n, const float* a, uint16_t* b, const uint16_t* c, float* d) {
  RoundTrip<CodecBF16>(n, a, b, c, d);
}
size_t F32Lanes() { return hn::Lanes(hn::ScalableTag<float>()); }

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace leaky {
HWY_EXPORT(RoundTripF16);
HWY_EXPORT(RoundTripBF16);
HWY_EXPORT(F32Lanes);

namespace {

std::vector<float> Probes() {
  std::vector<float> probes;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    // bf16 ties (low half 0x8000) and f16 ties (low 13 bits 0x1000) with odd
    // and even kept bits, plus neighbours.
    for (uint32_t lo : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0x1000u, 0x3000u, 0x0fffu, 0xffffu}) {
      probes.push_back(std::bit_cast<float>(hi << 16 | lo));
    }
  }
  return probes;
}

TEST(Codecs, MatchScalarConversionsOnEveryTarget) {
  const std::vector<float> probes = Probes();
  std::vector<uint16_t> all(probes.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  for (int64_t target : test::TargetsUnderTest()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    std::vector<uint16_t> f16(probes.size()), bf16(probes.size());
    std::vector<float> from_f16(probes.size()), from_bf16(probes.size());
    HWY_DYNAMIC_DISPATCH(RoundTripF16)(probes.size(), probes.data(), f16.data(), all.data(),
                                       from_f16.data());
    HWY_DYNAMIC_DISPATCH(RoundTripBF16)(probes.size(), probes.data(), bf16.data(), all.data(),
                                        from_bf16.data());
    for (size_t i = 0; i < probes.size(); ++i) {
      ASSERT_EQ(f16[i], float16(probes[i]).bits)
          << "f32 bits 0x" << std::hex << std::bit_cast<uint32_t>(probes[i]);
      ASSERT_EQ(bf16[i], bfloat16(probes[i]).bits)
          << "f32 bits 0x" << std::hex << std::bit_cast<uint32_t>(probes[i]);
      ASSERT_EQ(std::bit_cast<uint32_t>(from_f16[i]),
                std::bit_cast<uint32_t>(static_cast<float>(float16::from_bits(all[i]))))
          << "f16 bits 0x" << std::hex << all[i];
      ASSERT_EQ(std::bit_cast<uint32_t>(from_bf16[i]),
                std::bit_cast<uint32_t>(static_cast<float>(bfloat16::from_bits(all[i]))))
          << "bf16 bits 0x" << std::hex << all[i];
    }
  }
  hwy::SetSupportedTargetsForTest(0);
}

// Prints the targets of this build that this CPU runs, best first; with
// LEAKY_TEST_EXPECT_TARGETS="SVE2,SVE,NEON" they must be exactly those, and
// LEAKY_TEST_EXPECT_SVE_BITS is the vector width of the SVE targets (SVE_256
// and SVE2_128 are fixed).
TEST(Targets, AsExpectedOnThisCpu) {
  const char* expected = std::getenv("LEAKY_TEST_EXPECT_TARGETS");
  const char* sve_bits = std::getenv("LEAKY_TEST_EXPECT_SVE_BITS");
  std::string names;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    names += (names.empty() ? "" : ",") + name;
    EXPECT_EQ(name, leaky_simd_target());
    const size_t bits = HWY_DYNAMIC_DISPATCH(F32Lanes)() * 32;
    if (name == "SVE_256") EXPECT_EQ(bits, 256u);
    if (name == "SVE2_128") EXPECT_EQ(bits, 128u);
    if ((name == "SVE" || name == "SVE2") && sve_bits != nullptr)
      EXPECT_EQ(bits, std::strtoul(sve_bits, nullptr, 10)) << name;
    if (name == "NEON") EXPECT_EQ(bits, 128u);
  }
  hwy::SetSupportedTargetsForTest(0);
  // The record of what ran (ctest -V shows it).
  std::printf("[ targets  ] %s\n", names.c_str());
  EXPECT_FALSE(names.empty());
  if (expected != nullptr) EXPECT_EQ(names, expected);
}

}  // namespace
}  // namespace leaky
#endif  // HWY_ONCE

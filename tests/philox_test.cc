// The random stream of RReLU and dropout: Philox4x32-10 against Random123's
// known answers, and the stream's word and half-word layout.
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

}  // namespace
}  // namespace leaky::test

// The planner on its own: every element covered exactly once, ranges balanced
// to one granule, core starts aligned, tiles within the buffer budget - for n
// up to 2^40 and 1..256 cores, by walking the ranges (nothing allocated).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "leaky/tiling.h"

namespace {

leaky_plan_request Request(uint64_t n, uint32_t cores, uint32_t element_bytes = 4,
                           uint32_t offset = 0) {
  leaky_plan_request r{};
  r.total_length = n;
  r.element_bytes = element_bytes;
  r.streams = 2;
  r.max_cores = cores;
  r.align_bytes = 64;
  r.buffer_bytes = 512 << 10;
  r.buffer_count = 1;
  r.address_offset = offset;
  r.min_bytes_per_core = 0;  // any size may use every core
  r.stream_threshold_bytes = 16 << 20;
  r.stream_stores = -1;
  return r;
}

void CheckInvariants(const leaky_plan_request& r) {
  leaky_tiling t;
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  SCOPED_TRACE("n=" + std::to_string(r.total_length) + " cores=" + std::to_string(r.max_cores) +
               " offset=" + std::to_string(r.address_offset));
  ASSERT_GE(t.cores_used, 1u);
  ASSERT_LE(t.cores_used, r.max_cores);
  ASSERT_EQ(t.tile_length % t.granule_length, 0u);
  ASSERT_LE(t.buffer_count * t.tile_length * t.element_bytes * t.streams, r.buffer_bytes);
  uint64_t expected_start = 0, min_granules = UINT64_MAX, max_granules = 0;
  for (uint32_t core = 0; core < t.cores_used; ++core) {
    uint64_t start, length, first, count;
    leaky_tiling_core_range(&t, core, &start, &length);
    leaky_tiling_core_granules(&t, core, &first, &count);
    ASSERT_EQ(start, expected_start) << "core " << core << " leaves a gap or overlaps";
    // Aligned: the grid point sits `lead` elements past an aligned address.
    if (start != 0) {
      ASSERT_EQ((start + t.lead_length) * t.element_bytes % r.align_bytes, 0u) << core;
    }
    min_granules = std::min(min_granules, count);
    max_granules = std::max(max_granules, count);
    // Tiles cover the core range exactly once, in order: walked in full when
    // few, else at the first and last tiles (the only ones that can differ).
    const uint64_t tiles = leaky_tiling_tile_count(&t, core);
    uint64_t tile_start = start;
    for (uint64_t tile = 0; tile < tiles; ++tile) {
      if (tiles > 64 && tile == 32) {
        tile = tiles - 32;
        // Core 0 starts at element 0, `lead` short of its first grid point.
        tile_start = start + tile * t.tile_length - (first == 0 ? t.lead_length : 0);
      }
      uint64_t s, l;
      leaky_tiling_tile_range(&t, core, tile, &s, &l);
      ASSERT_EQ(s, tile_start) << "core " << core << " tile " << tile;
      ASSERT_LE(l, t.tile_length);
      tile_start += l;
    }
    ASSERT_EQ(tile_start, start + length);
    expected_start = start + length;
  }
  ASSERT_EQ(expected_start, r.total_length) << "elements not covered";
  // The remainder is spread: granule counts differ by at most one.
  ASSERT_LE(max_granules - min_granules, 1u);
  // ... so element counts differ by at most one granule, plus the partial
  // first and last granules of the whole array.
}

TEST(Plan, SmallSizesAllCores) {
  for (uint64_t n = 0; n <= 600; ++n) {
    for (uint32_t cores = 1; cores <= 16; ++cores) {
      for (uint32_t offset : {0u, 4u, 60u, 3u}) CheckInvariants(Request(n, cores, 4, offset));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(Plan, HugeSizesUpTo2Pow40) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<uint64_t> size(1, uint64_t{1} << 40);
  for (int i = 0; i < 300; ++i) {
    const uint64_t n = i < 3 ? (uint64_t{1} << 40) - static_cast<uint64_t>(i) : size(rng);
    for (uint32_t cores : {1u, 2u, 3u, 7u, 64u, 255u, 256u}) {
      for (uint32_t element_bytes : {2u, 4u, 8u}) {
        CheckInvariants(Request(n, cores, element_bytes, element_bytes * 3 % 64));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

TEST(Plan, EveryCoreCountUpTo256) {
  for (uint32_t cores = 1; cores <= 256; ++cores) {
    for (uint64_t n : {uint64_t{1000003}, uint64_t{1} << 30, (uint64_t{1} << 40) - 1}) {
      CheckInvariants(Request(n, cores, 2, 6));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

TEST(Plan, RemainderSpreadNotDumpedOnLastCore) {
  leaky_tiling t;
  // 10 granules of 16 f32 over 4 cores: 3, 3, 2, 2.
  const leaky_plan_request r = Request(160, 4);
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  uint64_t first, count;
  const uint64_t expected[] = {3, 3, 2, 2};
  for (uint32_t core = 0; core < 4; ++core) {
    leaky_tiling_core_granules(&t, core, &first, &count);
    EXPECT_EQ(count, expected[core]) << core;
  }
}

TEST(Plan, SmallProblemsStayOnOneCore) {
  leaky_plan_request r = Request(4096, 8);
  r.min_bytes_per_core = 256 << 10;
  leaky_tiling t;
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.cores_used, 1u);  // 32 KiB of traffic
  r.total_length = 1 << 20;     // 8 MiB of traffic
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.cores_used, 8u);
}

TEST(Plan, StorePolicy) {
  leaky_plan_request r = Request(1 << 20, 2);  // 8 MiB moved, threshold 16 MiB
  leaky_tiling t;
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.stream_stores, 0);
  r.total_length = (1 << 21) - 1;  // just under 16 MiB moved
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.stream_stores, 0);
  r.total_length = 1 << 21;  // 16 MiB moved
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.stream_stores, 1);
  r.stream_stores = 0;
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.stream_stores, 0);
  r.total_length = 10;
  r.stream_stores = 1;
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  EXPECT_EQ(t.stream_stores, 1);
}

TEST(Plan, RejectsBadRequests) {
  leaky_plan_request r = Request(100, 2);
  leaky_tiling t{};
  ASSERT_EQ(leaky_plan_tiling(&r, &t), LEAKY_OK);
  const leaky_tiling before = t;
  auto expect_rejected = [&](leaky_plan_request bad, leaky_status status) {
    leaky_tiling out = before;
    EXPECT_EQ(leaky_plan_tiling(&bad, &out), status) << leaky_last_error();
    EXPECT_EQ(std::memcmp(&out, &before, sizeof(out)), 0) << "tiling written on error";
    EXPECT_STRNE(leaky_last_error(), "");
  };
  leaky_plan_request bad = r;
  bad.align_bytes = 48;
  expect_rejected(bad, LEAKY_ERROR_INVALID_OPTIONS);
  bad = r;
  bad.max_cores = 0;
  expect_rejected(bad, LEAKY_ERROR_INVALID_OPTIONS);
  bad = r;
  bad.element_bytes = 3;
  expect_rejected(bad, LEAKY_ERROR_INVALID_OPTIONS);
  bad = r;
  bad.address_offset = 64;
  expect_rejected(bad, LEAKY_ERROR_INVALID_OPTIONS);
  bad = r;
  bad.total_length = UINT64_MAX / 4;
  expect_rejected(bad, LEAKY_ERROR_SIZE);
  EXPECT_EQ(leaky_plan_tiling(nullptr, &t), LEAKY_ERROR_NULL_POINTER);
}

}  // namespace

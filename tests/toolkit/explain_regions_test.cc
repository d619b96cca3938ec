// Regions found from indices (explain_regions.h): index sets built the way
// a faulty kernel's loop would touch them, walked over the plan's own tile
// ranges, must come back as the one region that made them - a lane of every
// 8, each tile's last element, every other tile, each core's aligned-down
// tail - and a region must never take in an element the caller forbids.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "explain_regions.h"
#include "layout.h"
#include "plan_options.h"

namespace leaky::toolkit {
namespace {

constexpr uint64_t kN = 9973;

Layout Plan(const std::string& split, uint32_t cores, uint64_t tile) {
  PlanOptions options;
  options.preset = "npu";
  options.cores = cores;
  options.split = split;
  options.tile_elems = tile;
  options.buffers = 2;
  return MakeLayout(options, LEAKY_F32, kN);
}

// The indices a kernel touches when `pick(offset in tile, tile length,
// tile, tiles in core, core)` says so, walking the plan's tiles.
std::vector<uint64_t> Walk(const Layout& plan,
                           const std::function<bool(uint64_t, uint64_t, uint64_t, uint64_t,
                                                    uint32_t)>& pick) {
  std::vector<uint64_t> picked;
  for (uint32_t core = 0; core < plan.cores(); ++core) {
    const uint64_t tiles = plan.TileCount(core);
    for (uint64_t t = 0; t < tiles; ++t) {
      uint64_t start = 0, length = 0;
      plan.TileRange(core, t, &start, &length);
      for (uint64_t o = 0; o < length; ++o) {
        if (pick(o, length, t, tiles, core)) picked.push_back(start + o);
      }
    }
  }
  return picked;
}

struct Found {
  std::optional<Region> region;
  std::string text;
  nlohmann::json details;
};

// The region inferred when exactly `members` are allowed.
Found Infer(const Layout& plan, const std::vector<uint64_t>& members) {
  const RegionFeatures features(&plan, kN);
  const std::set<uint64_t> allowed(members.begin(), members.end());
  Found f;
  f.region = InferRegion(features, members, [&](uint64_t i) { return allowed.count(i) > 0; });
  if (f.region) {
    f.text = DescribeInferred(features, *f.region, &f.details);
    // The region holds exactly the members.
    std::vector<uint64_t> inside;
    for (uint64_t i = 0; i < kN; ++i) {
      if (features.In(*f.region, i)) inside.push_back(i);
    }
    EXPECT_EQ(inside, members) << f.text;
  }
  return f;
}

TEST(ExplainRegions, OneLaneOfEveryEightInEachTile) {
  const Layout plan = Plan("balanced", 5, 320);
  const Found f = Infer(plan, Walk(plan, [](uint64_t o, uint64_t, uint64_t, uint64_t, uint32_t) {
                          return o % 8 == 7;
                        }));
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.region->Cost(), 1);
  EXPECT_NE(f.text.find("element 7 of every 8"), std::string::npos) << f.text;
}

TEST(ExplainRegions, EachTilesLastElement) {
  const Layout plan = Plan("even", 7, 200);
  const Found f = Infer(plan, Walk(plan, [](uint64_t o, uint64_t length, uint64_t, uint64_t,
                                            uint32_t) { return o + 1 == length; }));
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.text.rfind("the last element of each tile", 0), 0u) << f.text;
}

TEST(ExplainRegions, EachTilesSecondHalfWithOddTails) {
  const Layout plan = Plan("balanced", 6, 384);
  const Found f = Infer(plan, Walk(plan, [](uint64_t o, uint64_t length, uint64_t, uint64_t,
                                            uint32_t) { return o >= length / 2; }));
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.text.rfind("the second half of each tile", 0), 0u) << f.text;
}

TEST(ExplainRegions, EveryOtherTile) {
  const Layout plan = Plan("even", 4, 256);
  const Found f = Infer(plan, Walk(plan, [](uint64_t, uint64_t, uint64_t t, uint64_t, uint32_t) {
                          return t % 2 == 1;
                        }));
  ASSERT_TRUE(f.region);
  EXPECT_NE(f.text.find("every other tile"), std::string::npos) << f.text;
}

TEST(ExplainRegions, EachCoresLengthAlignedDown) {
  const Layout plan = Plan("even", 9, 224);
  std::vector<uint64_t> members;
  for (uint32_t c = 0; c < plan.cores(); ++c) {
    const uint64_t end = plan.core_start[c] + plan.core_length[c];
    for (uint64_t i = plan.core_start[c] + plan.core_length[c] / 8 * 8; i < end; ++i) {
      members.push_back(i);
    }
  }
  const Found f = Infer(plan, members);
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.details["constraints"][0]["form"], "aligned_tail") << f.text;
}

// A peel loop to the next 32-byte boundary of each core (f32: 8
// elements), whose length differs from core to core.
TEST(ExplainRegions, EachCoresAlignmentPeel) {
  const Layout plan = Plan("even", 9, 256);  // cores start at c x 1108: peels of 0 and 4
  std::vector<uint64_t> members;
  for (uint32_t c = 0; c < plan.cores(); ++c) {
    const uint64_t start = plan.core_start[c];
    for (uint64_t i = start; i < (start + 7) / 8 * 8; ++i) members.push_back(i);
  }
  const Found f = Infer(plan, members);
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.details["constraints"][0]["form"], "aligned_head") << f.text;
  EXPECT_EQ(f.details["constraints"][0]["multiple"], 8) << f.text;
  EXPECT_NE(f.text.find("(32 bytes)"), std::string::npos) << f.text;
}

// A copy of count / 4 elements per tile (an element count taken as bytes),
// short tails included: all but the first quarter of each tile.
TEST(ExplainRegions, AllButTheFirstQuarterOfEachTile) {
  const Layout plan = Plan("even", 8, 256);
  const Found f = Infer(plan, Walk(plan, [](uint64_t o, uint64_t length, uint64_t, uint64_t,
                                            uint32_t) { return o >= length / 4; }));
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.details["constraints"][0]["form"], "fraction_tail") << f.text;
  EXPECT_EQ(f.details["constraints"][0]["fraction"], 4) << f.text;
  EXPECT_EQ(f.details["constraints"][0]["unit"], 1) << f.text;
}

TEST(ExplainRegions, TheTailTileOfSomeCores) {
  const Layout plan = Plan("even", 8, 256);
  const Found f = Infer(plan, Walk(plan, [](uint64_t, uint64_t, uint64_t t, uint64_t tiles,
                                            uint32_t core) { return t + 1 == tiles && core >= 2; }));
  ASSERT_TRUE(f.region);
  EXPECT_EQ(f.region->Cost(), 2);
  EXPECT_NE(f.text.find("each core's last (tail) tile"), std::string::npos) << f.text;
  EXPECT_NE(f.text.find("cores 2-7 (of 8)"), std::string::npos) << f.text;
}

// One forbidden element inside the only simple shape: no region, rather
// than one that takes it in.
TEST(ExplainRegions, AForbiddenElementLeavesNoRegion) {
  const Layout plan = Plan("balanced", 5, 320);
  std::vector<uint64_t> lanes = Walk(plan, [](uint64_t o, uint64_t, uint64_t, uint64_t,
                                              uint32_t) { return o % 8 == 7; });
  const RegionFeatures features(&plan, kN);
  const uint64_t forbidden = lanes[lanes.size() / 2];
  std::vector<uint64_t> members;
  for (uint64_t i : lanes) {
    if (i != forbidden) members.push_back(i);
  }
  std::set<uint64_t> allowed(members.begin(), members.end());
  const std::optional<Region> r =
      InferRegion(features, members, [&](uint64_t i) { return allowed.count(i) > 0; });
  if (r) {
    EXPECT_FALSE(features.In(*r, forbidden));
    for (uint64_t i = 0; i < kN; ++i) {
      if (features.In(*r, i)) EXPECT_TRUE(allowed.count(i)) << i;
    }
  }
}

// Without a plan only the index speaks: a stride of 16 from index 3.
TEST(ExplainRegions, WithoutAPlanAnIndexProgression) {
  std::vector<uint64_t> members;
  for (uint64_t i = 3; i < kN; i += 16) members.push_back(i);
  const RegionFeatures features(nullptr, kN);
  const std::set<uint64_t> allowed(members.begin(), members.end());
  const std::optional<Region> r =
      InferRegion(features, members, [&](uint64_t i) { return allowed.count(i) > 0; });
  ASSERT_TRUE(r);
  nlohmann::json details;
  const std::string text = DescribeInferred(features, *r, &details);
  EXPECT_NE(text.find("element 3 of every 16"), std::string::npos) << text;
}

}  // namespace
}  // namespace leaky::toolkit

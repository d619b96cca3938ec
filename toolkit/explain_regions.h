// Where a fault lands, found from the indices themselves: the simplest
// region in the plan's terms - whole cores, tiles by index, period or
// position from the end, a position inside each tile or core (a prefix, a
// suffix, a half, lanes i mod w with a phase), a global range or any
// arithmetic progression - that holds every index of a set and nothing a
// caller's test forbids. A region is a conjunction of at most three such
// constraints, each on one feature of an index; no list of named shapes
// decides, so a period of 8 inside a 256-element tile is found as readily
// as a whole core. Pure: no I/O.
#ifndef LEAKY_TOOLKIT_EXPLAIN_REGIONS_H_
#define LEAKY_TOOLKIT_EXPLAIN_REGIONS_H_

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "layout.h"

namespace leaky::toolkit {

// What a constraint reads of an index (kIndex alone without a plan).
enum class RegionFeature {
  kIndex,            // the element's index
  kCore,             // its core
  kTile,             // its tile's index within the core
  kTileFromEnd,      // tiles after its own in the core (0: the core's last tile)
  kGlobalTile,       // its tile's number counting every core's tiles
  kInTile,           // its offset in the tile
  kInTileFromEnd,    // elements after it in the tile (0: the tile's last)
  kTileHalf,         // 1 in the tile's second half (offset >= the tile's length / 2, rounded down)
  kInCore,           // its offset in the core
  kInCoreFromEnd,    // elements after it in the core
};
inline constexpr int kRegionFeatures = 10;

struct RegionConstraint {
  RegionFeature feature = RegionFeature::kIndex;
  // kAlignedTail (on an offset from the core's or tile's end): the last
  // (length % period) elements, what a length rounded down to a multiple of
  // `period` leaves out. kAlignedHead (on the offset in the core): its
  // elements before the first index that is a multiple of `period`, what an
  // alignment peel takes. kFractionTail (on the offset in the tile): all but
  // the first (length / period, rounded down to a multiple of `phase`),
  // what a copy or loop length in the wrong unit leaves.
  enum class Form {
    kRange, kResidue, kSet, kAlignedTail, kAlignedHead, kFractionTail
  } form = Form::kRange;
  uint64_t lo = 0, hi = 0;        // kRange: lo <= v <= hi
  uint64_t period = 0, phase = 0; // kResidue: v % period == phase (within [lo, hi])
  std::vector<uint64_t> values;   // kSet
  bool Holds(uint64_t v) const;
  int Cost() const { return form == Form::kSet ? 2 : 1; }
};

struct Region {
  std::vector<RegionConstraint> constraints;  // none: the whole output
  uint64_t size = 0;                          // elements in it
  int Cost() const;
};

// Outputs longer than this are not searched for regions (each candidate
// region is checked against every element, and the features take 80 bytes
// an element).
inline constexpr uint64_t kMaxRegionElements = uint64_t{1} << 22;

// Each index's features, computed once per plan and output length.
class RegionFeatures {
 public:
  RegionFeatures(const Layout* plan, uint64_t n);
  uint64_t n() const { return n_; }
  const Layout* plan() const { return plan_; }
  // kOutside for an index no core covers.
  static constexpr uint64_t kOutside = UINT64_MAX;
  uint64_t Get(RegionFeature f, uint64_t i) const;
  // The feature's smallest and largest value over the covered indices.
  uint64_t Lowest(RegionFeature f) const { return lowest_[static_cast<int>(f)]; }
  uint64_t Highest(RegionFeature f) const { return highest_[static_cast<int>(f)]; }
  bool In(const Region& r, uint64_t i) const;
  std::vector<uint64_t> Elements(const Region& r) const;  // ascending

 private:
  const Layout* plan_;
  uint64_t n_;
  std::vector<uint64_t> values_;  // n x kRegionFeatures (kIndex alone without a plan)
  uint64_t lowest_[kRegionFeatures], highest_[kRegionFeatures];
};

// The simplest region (fewest constraints, sets counting double, at most 3)
// holding every index of `members` (ascending, not empty) in which
// `allowed` holds for every index; nothing when no region of that size
// does.
std::optional<Region> InferRegion(const RegionFeatures& features,
                                  const std::vector<uint64_t>& members,
                                  const std::function<bool(uint64_t)>& allowed);

// When no one region holds all of `members`: the largest part of them
// (one value of a plan feature - a tile position, a core - or all but one)
// that one region holds, with the part in `part`. Parts under 8 members
// are not tried.
std::optional<Region> InferPartRegion(const RegionFeatures& features,
                                      const std::vector<uint64_t>& members,
                                      const std::function<bool(uint64_t)>& allowed,
                                      std::vector<uint64_t>* part);

// The region in words ("element 7 of every 8 in each tile", "the last 2
// elements of each of cores 0-7", "the second half of each tile") and as
// facts in `details` ("region": "composed", "constraints": [...]), with
// the numbers read back against the plan where they match one of its own
// (a period equal to the tile length, a width equal to core_length % 8).
std::string DescribeInferred(const RegionFeatures& features, const Region& region,
                             nlohmann::json* details);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_EXPLAIN_REGIONS_H_

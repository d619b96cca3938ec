// The detector of elements that hold what their tile's local slot held
// before - zeros before the slot's first use, else what an earlier tile
// left there: a ring back in this work-group, or the last tile of the
// work-group that ran before it - where which elements do so depends on
// something other than the tile:
//  - on the work-item (the offset in the tile modulo the work-group size):
//    the work-items reached the copy at different times, a barrier is
//    missing (compute_before_copy);
//  - on the position in the tile (a part of each slot never refilled: a
//    copy-in length in the wrong unit) (stale_tile);
//  - on the input's sign: one branch of the select never stores into the
//    slot (not_written).
// A slot stale for every element of a tile is a tile-level fault, left to
// the Moved detector.
#include <algorithm>
#include <array>
#include <optional>

#include "findings.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

using Kind = ReportedKind<FindingDetector::kStaleSlots>;

constexpr uint64_t kNone = UINT64_MAX;

// The index whose tile used slot (tile mod buffers) before tile `tile` of
// `core` at `offset`: the same core's tile `buffers` back, else the last
// tile of an earlier core (work-groups run in order on one compute unit
// and find the previous one's local memory) that used the slot and reached
// that far; kNone when nothing had used it.
uint64_t SlotBefore(const Layout& plan, uint32_t core, uint64_t tile, uint64_t offset) {
  const uint64_t b = std::max<uint32_t>(1, plan.buffers);
  uint64_t start = 0, length = 0;
  if (tile >= b) {
    plan.TileRange(core, tile - b, &start, &length);
    return offset < length ? start + offset : kNone;
  }
  for (uint32_t c = core; c-- > 0;) {
    const uint64_t tiles = plan.TileCount(c);
    if (tiles == 0) continue;
    // The last tile of core c with this slot, then earlier ones of the same slot.
    for (int64_t t = static_cast<int64_t>(tiles - 1 - (tiles - 1 + b - tile % b) % b); t >= 0;
         t -= static_cast<int64_t>(b)) {
      plan.TileRange(c, static_cast<uint64_t>(t), &start, &length);
      if (offset < length) return start + offset;
    }
  }
  return kNone;
}

// What a slot may have held at `offset` before tile `tile` of `core` used
// it: the earlier tile's result or what that tile's copy-out carried (a slot
// only partly stored keeps older contents), a ring back or at the
// work-group's start (its first work-item can run every tile before the
// others start); zeros (bit pattern 0) before the first use.
std::array<uint64_t, 3> SlotContents(const Analysis& s, const Layout& plan, uint32_t core,
                                     uint64_t tile, uint64_t offset) {
  const uint64_t b = std::max<uint32_t>(1, plan.buffers);
  const uint64_t ring = SlotBefore(plan, core, tile, offset);
  const uint64_t group = SlotBefore(plan, core, tile % b, offset);
  const auto& golden = s.in.golden.bits;
  return {ring == kNone ? 0 : golden[ring], ring == kNone ? 0 : s.in.output.bits[ring],
          group == kNone ? 0 : golden[group]};
}

bool HoldsOneOf(const Analysis& s, const std::array<uint64_t, 3>& before, uint64_t bits) {
  return std::any_of(before.begin(), before.end(),
                     [&](uint64_t v) { return SameValue(s.in.dtype, v, bits); });
}

// Every element's offset in its tile and whether its slot's earlier
// contents all differ from its result (so that a stale element shows):
// built only once every wrong element is known to hold them (n bytes and
// n words, where the per-element contents would take 24 bytes each).
struct SlotHistory {
  std::vector<uint64_t> offset;
  std::vector<char> informative;

  SlotHistory(const Analysis& s, const Layout& plan) : offset(s.n, 0), informative(s.n, 0) {
    for (uint32_t c = 0; c < plan.cores(); ++c) {
      for (uint64_t t = 0; t < plan.TileCount(c); ++t) {
        uint64_t start = 0, length = 0;
        plan.TileRange(c, t, &start, &length);
        for (uint64_t o = 0; o < length && start + o < s.n; ++o) {
          const uint64_t i = start + o;
          offset[i] = o;
          informative[i] = !HoldsOneOf(s, SlotContents(s, plan, c, t, o), s.in.golden.bits[i]);
        }
      }
    }
  }
};

// The smallest work-group width L for which each lane (offset mod L) is
// stale in every tile or right in every tile, both present; the right ones.
std::optional<uint64_t> LaneSplit(const Analysis& s, const Layout& plan, const SlotHistory& h,
                                  const std::vector<char>& is_open, std::vector<uint64_t>* fresh) {
  for (uint64_t l = 2; l <= plan.tile_length; l *= 2) {
    std::vector<uint64_t> shown(l, 0), stale(l, 0);
    for (uint64_t i = 0; i < s.n; ++i) {
      if (!h.informative[i]) continue;
      ++shown[h.offset[i] % l];
      stale[h.offset[i] % l] += is_open[i];
    }
    std::vector<uint64_t> right;
    bool split = true, any_stale = false;
    for (uint64_t r = 0; r < l && split; ++r) {
      if (shown[r] == 0) continue;
      if (stale[r] == 0) {
        right.push_back(r);
      } else {
        any_stale = true;
        split = stale[r] == shown[r];
      }
    }
    if (split && any_stale && !right.empty()) {
      *fresh = right;
      return l;
    }
  }
  return std::nullopt;
}

// Whether the stale elements are exactly those of one side of the select:
// every informative element with a positive input (`positive`), or with a
// non-positive one, is stale, and no other is.
bool SignSplit(const Analysis& s, const SlotHistory& h, const std::vector<char>& is_open,
               bool* positive) {
  uint64_t shown[2] = {0, 0}, stale[2] = {0, 0};
  for (uint64_t i = 0; i < s.n; ++i) {
    if (!h.informative[i]) continue;
    const int side = s.NegativeSide(i) ? 0 : 1;
    ++shown[side];
    stale[side] += is_open[i];
  }
  for (int side : {0, 1}) {
    if (stale[side] > 0 && stale[side] == shown[side] && stale[1 - side] == 0) {
      *positive = side == 1;
      return true;
    }
  }
  return false;
}

// A region of element positions inside tiles (not whole tiles or cores,
// which are the Moved detector's).
bool InsideTiles(const Region& r) {
  return std::any_of(r.constraints.begin(), r.constraints.end(), [](const RegionConstraint& c) {
    return c.feature == RegionFeature::kInTile || c.feature == RegionFeature::kInTileFromEnd ||
           c.feature == RegionFeature::kTileHalf;
  });
}

}  // namespace

void FindStaleSlots(Analysis& s) {
  if (!s.in.plan || s.in.eight_bit || s.Features() == nullptr) return;
  const Layout& plan = *s.in.plan;
  const std::vector<uint64_t> open = s.Open();
  if (open.size() < 8 || plan.tile_length < 4) return;
  // Whether output element i holds what its slot held before its tile.
  const auto holds_earlier = [&](uint64_t i) {
    const Layout::Location at = plan.Locate(i);
    return at.inside && HoldsOneOf(s, SlotContents(s, plan, at.core, at.tile, i - at.tile_start),
                                   s.in.output.bits[i]);
  };
  // Every open element holds what its slot held before, and some of them an
  // earlier result (not only the zeros of a slot never used).
  uint64_t zeros = 0;
  std::vector<char> is_open(s.n, 0);
  for (uint64_t i : open) {
    if (!holds_earlier(i)) return;
    is_open[i] = 1;
    zeros += HoldsLeftover(s.values, Leftover::kZero, 0, i);
  }
  if (zeros == open.size()) return;
  const SlotHistory h(s, plan);
  const std::string counts = std::to_string(open.size() - zeros) + " an earlier tile's, " +
                             std::to_string(zeros) + " zeros from before the slot's first use";
  json details = {{"elements", open.size()},
                  {"earlier_results", open.size() - zeros},
                  {"zeros", zeros}};
  std::vector<uint64_t> fresh;
  if (const std::optional<uint64_t> width = LaneSplit(s, plan, h, is_open, &fresh)) {
    s.Explain(open);
    const bool prefix = fresh.front() == 0 && fresh.back() + 1 == fresh.size();
    const std::string l = std::to_string(*width);
    const std::string who =
        !prefix ? "work-items " + NumberList(fresh) + " of " + l + " (offset in the tile mod " + l + ")"
        : fresh.size() == 1
            ? "work-item 0 of " + l + " (offset in the tile mod " + l + " = 0)"
            : "work-items 0-" + std::to_string(fresh.size() - 1) + " of " + l +
                  " (offset in the tile mod " + l + " < " + std::to_string(fresh.size()) + ")";
    details["lanes"] = *width;
    details["fresh_lanes"] = fresh;
    details["candidates"] = {"missing_barrier_before_copy_out", "missing_wait_before_compute"};
    s.findings.push_back(
        {Kind("compute_before_copy"),
         "in every tile only the elements of " + who + " hold this tile's results; the other " +
             std::to_string(open.size()) + " wrong elements hold what the tile's local slot held "
             "before (" + counts + "): the copy-out left before the other work-items had "
             "stored. A barrier is missing between the compute and the copy-out (where "
             "work-items run one after another up to a barrier, as on PoCL, only the first ones' "
             "stores are in the slot when it leaves) - or, the same bits, those work-items "
             "computed before the copy-in had arrived (a wait or barrier missing before the "
             "compute)",
         details});
    return;
  }
  // A part of every tile's slot that is never refilled (a copy-in length in
  // the wrong unit): the region the stale elements fill.
  // A region may take in right elements whose result equals the slot's
  // earlier contents; any other element must hold those contents.
  const auto allowed = [&](uint64_t i) {
    return is_open[i] || !h.informative[i] || holds_earlier(i);
  };
  if (const std::optional<Region> region = InferRegion(*s.Features(), open, allowed);
      region && !region->constraints.empty() && InsideTiles(*region)) {
    s.Explain(open);
    const std::string where = DescribeInferred(*s.Features(), *region, &details);
    s.findings.push_back(
        {Kind("stale_tile"),
         "in " + where + ", the elements hold what the tile's local slot held before (" + counts +
             "), not this tile's results: that part of the slot was never refilled, so it was "
             "computed from (or copied out with) an earlier tile's data; " +
             CauseOfInferred(details, &plan),
         details});
    return;
  }
  bool positive = false;
  if (SignSplit(s, h, is_open, &positive)) {
    s.Explain(open);
    const char* side = positive ? "positive" : "negative (or zero)";
    details["side"] = positive ? "positive" : "non_positive";
    s.findings.push_back(
        {Kind("not_written"),
         std::string("never written: the elements whose input is ") + side + " (" +
             std::to_string(open.size()) + " of them), still holding what the tile's local slot "
             "held before (" + counts + "): the store into the slot sits in the other branch "
             "of the select only, so those results never reach it. Store on both branches (y = x "
             "> 0 ? x : slope * x, one store)",
         details});
  }
}

}  // namespace leaky::toolkit

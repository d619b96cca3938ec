#include "explain_regions.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

constexpr uint64_t kOut = RegionFeatures::kOutside;

// The order candidates are tried in at one cost: the plan's own terms
// before a bare index range.
constexpr RegionFeature kPriority[] = {
    RegionFeature::kCore,      RegionFeature::kTileFromEnd,   RegionFeature::kTile,
    RegionFeature::kTileHalf,  RegionFeature::kInTileFromEnd, RegionFeature::kInTile,
    RegionFeature::kInCoreFromEnd, RegionFeature::kInCore,    RegionFeature::kGlobalTile,
    RegionFeature::kIndex,
};

int At(RegionFeature f) { return static_cast<int>(f); }

// Whether an element `from_end` before its core's or tile's end and
// `from_start` after its start lies in the last (length % multiple): what a
// length rounded down to a multiple leaves out.
bool InAlignedTail(uint64_t from_end, uint64_t from_start, uint64_t multiple) {
  return from_end < (from_start + from_end + 1) % multiple;
}

// Whether an element `from_start` after its tile's start and `from_end`
// before its end lies past the tile's first (length / fraction) elements,
// rounded down to a multiple of `unit`.
bool InFractionTail(uint64_t from_start, uint64_t from_end, uint64_t fraction, uint64_t unit) {
  const uint64_t length = from_start + from_end + 1;
  return from_start >= length / fraction / unit * unit;
}

}  // namespace

bool RegionConstraint::Holds(uint64_t v) const {
  if (v == kOut) return false;
  switch (form) {
    case Form::kRange:
      return v >= lo && v <= hi;
    case Form::kResidue:
      return v >= lo && v <= hi && v % period == phase;
    case Form::kSet:
      return std::binary_search(values.begin(), values.end(), v);
    case Form::kAlignedTail:
    case Form::kAlignedHead:
    case Form::kFractionTail:
      return false;  // needs the length or the start: RegionFeatures::In
  }
  return false;
}

int Region::Cost() const {
  int cost = 0;
  for (const RegionConstraint& c : constraints) cost += c.Cost();
  return cost;
}

RegionFeatures::RegionFeatures(const Layout* plan, uint64_t n) : plan_(plan), n_(n) {
  for (int f = 0; f < kRegionFeatures; ++f) {
    lowest_[f] = kOut;
    highest_[f] = 0;
  }
  lowest_[At(RegionFeature::kIndex)] = 0;
  highest_[At(RegionFeature::kIndex)] = n > 0 ? n - 1 : 0;
  if (!plan || plan->cores() == 0) return;
  values_.assign(n * kRegionFeatures, kOut);
  uint64_t global_tile = 0;
  for (uint32_t core = 0; core < plan->cores(); ++core) {
    const uint64_t cs = plan->core_start[core], cl = plan->core_length[core];
    if (cl == 0) continue;
    const uint64_t tiles = plan->TileCount(core);
    for (uint64_t t = 0; t < tiles; ++t, ++global_tile) {
      uint64_t ts = 0, tl = 0;
      plan->TileRange(core, t, &ts, &tl);
      for (uint64_t i = ts; i < ts + tl && i < n; ++i) {
        uint64_t* v = &values_[i * kRegionFeatures];
        v[At(RegionFeature::kCore)] = core;
        v[At(RegionFeature::kTile)] = t;
        v[At(RegionFeature::kTileFromEnd)] = tiles - 1 - t;
        v[At(RegionFeature::kGlobalTile)] = global_tile;
        v[At(RegionFeature::kInTile)] = i - ts;
        v[At(RegionFeature::kInTileFromEnd)] = ts + tl - 1 - i;
        v[At(RegionFeature::kTileHalf)] = i - ts >= tl / 2 ? 1 : 0;
        v[At(RegionFeature::kInCore)] = i - cs;
        v[At(RegionFeature::kInCoreFromEnd)] = cs + cl - 1 - i;
      }
    }
  }
  for (uint64_t i = 0; i < n; ++i) {
    values_[i * kRegionFeatures + At(RegionFeature::kIndex)] = i;
    for (int f = 0; f < kRegionFeatures; ++f) {
      const uint64_t v = values_[i * kRegionFeatures + f];
      if (v == kOut) continue;
      lowest_[f] = std::min(lowest_[f], v);
      highest_[f] = std::max(highest_[f], v);
    }
  }
}

uint64_t RegionFeatures::Get(RegionFeature f, uint64_t i) const {
  if (f == RegionFeature::kIndex) return i;
  if (values_.empty()) return kOut;
  return values_[i * kRegionFeatures + At(f)];
}

bool RegionFeatures::In(const Region& r, uint64_t i) const {
  for (const RegionConstraint& c : r.constraints) {
    const uint64_t v = Get(c.feature, i);
    if (c.form == RegionConstraint::Form::kAlignedTail) {
      // The last (length % period) elements of the core or tile: what a
      // length aligned down to a multiple of `period` leaves out.
      const bool core = c.feature == RegionFeature::kInCoreFromEnd;
      const uint64_t before = Get(core ? RegionFeature::kInCore : RegionFeature::kInTile, i);
      if (v == kOut || before == kOut || !InAlignedTail(v, before, c.period)) return false;
      continue;
    }
    if (c.form == RegionConstraint::Form::kFractionTail) {
      const uint64_t to_end = Get(RegionFeature::kInTileFromEnd, i);
      if (v == kOut || to_end == kOut || !InFractionTail(v, to_end, c.period, c.phase)) return false;
      continue;
    }
    if (c.form == RegionConstraint::Form::kAlignedHead) {
      // Before the core's first index that is a multiple of `period`.
      if (v == kOut || v >= (c.period - (i - v) % c.period) % c.period) return false;
      continue;
    }
    if (!c.Holds(v)) return false;
  }
  return true;
}

std::vector<uint64_t> RegionFeatures::Elements(const Region& r) const {
  std::vector<uint64_t> inside;
  for (uint64_t i = 0; i < n_; ++i) {
    if (In(r, i)) inside.push_back(i);
  }
  return inside;
}

namespace {

// The constraints on one feature that hold every member, the simplest
// first: its range, its residue (the gcd of the members' distances), a few
// values, an aligned tail.
std::vector<RegionConstraint> Candidates(const RegionFeatures& f, RegionFeature feature,
                                         const std::vector<uint64_t>& members) {
  using Form = RegionConstraint::Form;
  std::vector<RegionConstraint> found;
  std::vector<uint64_t> values;
  values.reserve(members.size());
  for (uint64_t i : members) {
    const uint64_t v = f.Get(feature, i);
    if (v == kOut) return found;
    values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  const uint64_t lo = values.front(), hi = values.back();
  const bool whole = lo == f.Lowest(feature) && hi == f.Highest(feature);
  if (!whole) found.push_back({feature, Form::kRange, lo, hi, 0, 0, {}});
  uint64_t g = 0;
  for (uint64_t v : values) g = std::gcd(g, v - lo);
  if (g >= 2 && values.size() >= 3) {  // two values give any period
    found.push_back({feature, Form::kResidue, 0, kOut - 1, g, lo % g, {}});
  }
  const bool contiguous = hi - lo + 1 == values.size();
  if (!contiguous && values.size() <= 8 && feature != RegionFeature::kIndex) {
    found.push_back({feature, Form::kSet, 0, 0, 0, 0, values});
  }
  if (feature == RegionFeature::kInCoreFromEnd || feature == RegionFeature::kInTileFromEnd) {
    const bool core = feature == RegionFeature::kInCoreFromEnd;
    for (uint64_t m = 2; m <= 4096; m *= 2) {
      bool holds = true;
      for (uint64_t i : members) {
        const uint64_t v = f.Get(feature, i);
        const uint64_t before = f.Get(core ? RegionFeature::kInCore : RegionFeature::kInTile, i);
        holds = holds && InAlignedTail(v, before, m);
      }
      if (holds) {
        found.push_back({feature, Form::kAlignedTail, 0, 0, m, 0, {}});
        break;
      }
    }
  }
  if (feature == RegionFeature::kInTile) {
    // The largest written part (the smallest fraction, then unit) that
    // leaves every member out; a half with unit 1 is kTileHalf's.
    bool done = false;
    for (uint64_t q : {2, 4, 8}) {
      for (uint64_t u : {1, 2, 4}) {
        if (done || (q == 2 && u == 1)) continue;
        done = std::all_of(members.begin(), members.end(), [&](uint64_t i) {
          return InFractionTail(f.Get(feature, i), f.Get(RegionFeature::kInTileFromEnd, i), q, u);
        });
        if (done) found.push_back({feature, Form::kFractionTail, 0, 0, q, u, {}});
      }
    }
  }
  if (feature == RegionFeature::kInCore) {
    // The smallest alignment whose peel holds every member (peels grow
    // with the alignment).
    for (uint64_t m = 2; m <= 4096; m *= 2) {
      const bool holds = std::all_of(members.begin(), members.end(), [&](uint64_t i) {
        const uint64_t v = f.Get(feature, i);
        return v < (m - (i - v) % m) % m;
      });
      if (holds) {
        found.push_back({feature, Form::kAlignedHead, 0, 0, m, 0, {}});
        break;
      }
    }
  }
  return found;
}

}  // namespace

std::optional<Region> InferRegion(const RegionFeatures& features,
                                  const std::vector<uint64_t>& members,
                                  const std::function<bool(uint64_t)>& allowed) {
  if (members.empty()) return std::nullopt;
  const uint64_t n = features.n();
  // Whether every index of the region is allowed, and how many it holds.
  auto valid = [&](Region& r) {
    uint64_t size = 0;
    for (uint64_t i = 0; i < n; ++i) {
      if (!features.In(r, i)) continue;
      if (!allowed(i)) return false;
      ++size;
    }
    r.size = size;
    return true;
  };
  {
    Region whole;
    if (valid(whole)) return whole;
  }
  std::vector<RegionConstraint> all;
  for (RegionFeature f : kPriority) {
    if (f != RegionFeature::kIndex && !features.plan()) continue;
    for (RegionConstraint& c : Candidates(features, f, members)) all.push_back(std::move(c));
  }
  // Cost 1, 2, 3: one constraint, two on different features, three; at a
  // cost, the largest region (the most general) wins, then the list order.
  for (int cost = 1; cost <= 3; ++cost) {
    std::optional<Region> best;
    auto consider = [&](Region r) {
      if (r.Cost() != cost || !valid(r)) return;
      if (!best || r.size > best->size) best = std::move(r);
    };
    const size_t k = all.size();
    for (size_t a = 0; a < k; ++a) {
      consider(Region{{all[a]}, 0});
      for (size_t b = a + 1; b < k && cost >= 2; ++b) {
        if (all[b].feature == all[a].feature) continue;
        consider(Region{{all[a], all[b]}, 0});
        for (size_t c = b + 1; c < k && cost >= 3; ++c) {
          if (all[c].feature == all[a].feature || all[c].feature == all[b].feature) continue;
          consider(Region{{all[a], all[b], all[c]}, 0});
        }
      }
    }
    if (best) return best;
  }
  return std::nullopt;
}

std::optional<Region> InferPartRegion(const RegionFeatures& features,
                                      const std::vector<uint64_t>& members,
                                      const std::function<bool(uint64_t)>& allowed,
                                      std::vector<uint64_t>* part) {
  if (!features.plan()) return std::nullopt;
  std::vector<std::vector<uint64_t>> parts;
  for (RegionFeature f : {RegionFeature::kTileFromEnd, RegionFeature::kTile, RegionFeature::kCore,
                          RegionFeature::kTileHalf}) {
    std::map<uint64_t, std::vector<uint64_t>> by_value;
    for (uint64_t i : members) by_value[features.Get(f, i)].push_back(i);
    if (by_value.size() < 2) continue;
    for (const auto& [v, list] : by_value) {
      parts.push_back(list);
      std::vector<uint64_t> rest;
      for (uint64_t i : members) {
        if (features.Get(f, i) != v) rest.push_back(i);
      }
      parts.push_back(std::move(rest));
    }
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.size() > b.size(); });
  int tried = 0;
  for (const std::vector<uint64_t>& p : parts) {
    if (p.size() < 8 || ++tried > 12) break;
    std::optional<Region> r = InferRegion(features, p, allowed);
    if (r) {
      *part = p;
      return r;
    }
  }
  return std::nullopt;
}

namespace {

std::string Plural(uint64_t k, const std::string& one, const std::string& many) {
  return k == 1 ? one : std::to_string(k) + " " + many;
}

std::string RangeText(uint64_t lo, uint64_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi);
}

std::string SetText(const std::vector<uint64_t>& values) {
  std::string text;
  for (uint64_t v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

// One constraint in words, for the level it speaks of ("of each tile").
std::string Phrase(const RegionFeatures& f, const RegionConstraint& c, json* facts) {
  using Form = RegionConstraint::Form;
  const Layout* plan = f.plan();
  (*facts)["form"] = c.form == Form::kRange      ? "range"
                     : c.form == Form::kResidue  ? "residue"
                     : c.form == Form::kSet      ? "set"
                     : c.form == Form::kAlignedTail ? "aligned_tail"
                     : c.form == Form::kAlignedHead ? "aligned_head"
                                                 : "fraction_tail";
  if (c.form == Form::kRange) {
    (*facts)["first"] = c.lo;
    (*facts)["last"] = c.hi;
  } else if (c.form == Form::kResidue) {
    (*facts)["period"] = c.period;
    (*facts)["phase"] = c.phase;
  } else if (c.form == Form::kSet) {
    (*facts)["values"] = c.values;
  } else if (c.form == Form::kFractionTail) {
    (*facts)["fraction"] = c.period;
    (*facts)["unit"] = c.phase;
  } else {
    (*facts)["multiple"] = c.period;
  }
  const uint64_t width = c.hi - c.lo + 1;
  // A range from some value to the feature's largest: "all but the first
  // (last) lo".
  const bool to_top = c.form == Form::kRange && c.lo > 0 && c.hi == f.Highest(c.feature);
  const std::string but = to_top ? Plural(c.lo, "element", "elements") : "";
  const std::string tiles_but = to_top && c.lo > 1 ? " " + std::to_string(c.lo) + " tiles" : "";
  switch (to_top ? c.feature : RegionFeature::kIndex) {
    case RegionFeature::kTile:
      return "every tile but each core's first" + tiles_but;
    case RegionFeature::kTileFromEnd:
      return "every tile but each core's last" + tiles_but;
    case RegionFeature::kInTile:
      return "all but the first " + but + " of each tile";
    case RegionFeature::kInTileFromEnd:
      return "all but the last " + but + " of each tile";
    case RegionFeature::kInCore:
      return "all but the first " + but + " of each core";
    case RegionFeature::kInCoreFromEnd:
      return "all but the last " + but + " of each core";
    default:
      break;
  }
  auto residue = [&](const std::string& unit, const std::string& of) {
    std::string text = c.period == 2
                           ? "every other " + unit + " (" + unit + "s " + std::to_string(c.phase) +
                                 ", " + std::to_string(c.phase + 2) + ", ...)"
                           : unit + " " + std::to_string(c.phase) + " of every " +
                                 std::to_string(c.period);
    if (plan && c.period == plan->tile_length && unit == "element") {
      text += " (the tile length)";
    }
    return text + of;
  };
  switch (c.feature) {
    case RegionFeature::kCore: {
      const std::string of = " (of " + std::to_string(plan->cores()) + ")";
      if (c.form == Form::kRange) {
        return std::string(width == 1 ? "core " : "cores ") + RangeText(c.lo, c.hi) + of;
      }
      if (c.form == Form::kSet) return "cores " + SetText(c.values) + of;
      return residue("core", "") + of;
    }
    case RegionFeature::kTile:
      if (c.form == Form::kRange) {
        if (c.lo == 0) return width == 1 ? "each core's first tile" : "the first " + std::to_string(width) + " tiles of each core";
        return "tiles " + RangeText(c.lo, c.hi) + " of each core";
      }
      if (c.form == Form::kSet) return "tiles " + SetText(c.values) + " of each core";
      return residue("tile", " of each core");
    case RegionFeature::kTileFromEnd:
      if (c.form == Form::kRange && c.lo == 0) {
        return width == 1 ? "each core's last (tail) tile" : "the last " + std::to_string(width) + " tiles of each core";
      }
      if (c.form == Form::kResidue) return residue("tile", " counting back from each core's last");
      return (width == 1 ? "the tile " : "the tiles ") + RangeText(c.lo, c.hi) +
             " before each core's last";
    case RegionFeature::kGlobalTile:
      if (c.form == Form::kRange) return "tiles " + RangeText(c.lo, c.hi) + " counting every core's tiles in order";
      if (c.form == Form::kSet) return "tiles " + SetText(c.values) + " counting every core's tiles in order";
      return residue("tile", " counting every core's tiles in order");
    case RegionFeature::kTileHalf:
      return c.lo == 1 ? "the second half of each tile" : "the first half of each tile";
    case RegionFeature::kInTile:
      if (c.form == Form::kFractionTail) {
        return "all but the first 1/" + std::to_string(c.period) + " of each tile (the tile's length / " +
               std::to_string(c.period) +
               (c.phase > 1 ? ", rounded down to a multiple of " + std::to_string(c.phase) : "") +
               ")";
      }
      if (c.form == Form::kRange) {
        if (c.lo == 0) return "the first " + Plural(width, "element", "elements") + " of each tile";
        return "offsets " + RangeText(c.lo, c.hi) + " of each tile";
      }
      if (c.form == Form::kSet) return "offsets " + SetText(c.values) + " of each tile";
      return residue("element", " in each tile (offset mod " + std::to_string(c.period) + " = " +
                                    std::to_string(c.phase) + ")");
    case RegionFeature::kInTileFromEnd:
      if (c.form == Form::kAlignedTail) {
        return "the last (tile length mod " + std::to_string(c.period) +
               ") elements of each tile (its length rounded down to a multiple of " +
               std::to_string(c.period) + ")";
      }
      if (c.form == Form::kRange && c.lo == 0) return "the last " + Plural(width, "element", "elements") + " of each tile";
      if (c.form == Form::kResidue) return residue("element", " counting back from each tile's end");
      return "the elements " + RangeText(c.lo, c.hi) + " before each tile's last";
    case RegionFeature::kInCore:
      if (c.form == Form::kAlignedHead) {
        return "each core's first elements up to its first index that is a multiple of " +
               std::to_string(c.period) +
               (plan ? " (" + std::to_string(c.period * plan->element_bytes) + " bytes)" : "") +
               ": an alignment peel";
      }
      if (c.form == Form::kRange) {
        if (c.lo == 0) return "the first " + Plural(width, "element", "elements") + " of each core";
        return "offsets " + RangeText(c.lo, c.hi) + " of each core";
      }
      if (c.form == Form::kSet) return "offsets " + SetText(c.values) + " of each core";
      return residue("element", " in each core (offset mod " + std::to_string(c.period) + " = " +
                                    std::to_string(c.phase) + ")");
    case RegionFeature::kInCoreFromEnd:
      if (c.form == Form::kAlignedTail) {
        return "the last (core length mod " + std::to_string(c.period) +
               ") elements of each core (its length rounded down to a multiple of " +
               std::to_string(c.period) + ")";
      }
      if (c.form == Form::kRange && c.lo == 0) return "the last " + Plural(width, "element", "elements") + " of each core";
      if (c.form == Form::kResidue) return residue("element", " counting back from each core's end");
      return "the elements " + RangeText(c.lo, c.hi) + " before each core's last";
    case RegionFeature::kIndex:
      if (c.form == Form::kRange) {
        return "[" + std::to_string(c.lo) + ", " + std::to_string(c.hi + 1) + ")";
      }
      return residue("element", " of the output (index mod " + std::to_string(c.period) + " = " +
                                    std::to_string(c.phase) + ")");
  }
  return "";
}

const char* FeatureName(RegionFeature f) {
  switch (f) {
    case RegionFeature::kIndex: return "index";
    case RegionFeature::kCore: return "core";
    case RegionFeature::kTile: return "tile";
    case RegionFeature::kTileFromEnd: return "tile_from_end";
    case RegionFeature::kGlobalTile: return "global_tile";
    case RegionFeature::kInTile: return "offset_in_tile";
    case RegionFeature::kInTileFromEnd: return "offset_from_tile_end";
    case RegionFeature::kTileHalf: return "tile_half";
    case RegionFeature::kInCore: return "offset_in_core";
    case RegionFeature::kInCoreFromEnd: return "offset_from_core_end";
  }
  return "";
}

// Element-level words first, then tiles, then cores.
int Level(RegionFeature f) {
  switch (f) {
    case RegionFeature::kInTile:
    case RegionFeature::kInTileFromEnd:
    case RegionFeature::kTileHalf:
    case RegionFeature::kInCore:
    case RegionFeature::kInCoreFromEnd:
    case RegionFeature::kIndex:
      return 0;
    case RegionFeature::kTile:
    case RegionFeature::kTileFromEnd:
    case RegionFeature::kGlobalTile:
      return 1;
    case RegionFeature::kCore:
      return 2;
  }
  return 0;
}

}  // namespace

std::string DescribeInferred(const RegionFeatures& features, const Region& region, json* details) {
  (*details)["region"] = region.constraints.empty() ? "all" : "composed";
  (*details)["elements"] = region.size;
  if (region.constraints.empty()) return "the whole output";
  std::vector<RegionConstraint> sorted = region.constraints;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return Level(a.feature) < Level(b.feature);
  });
  json list = json::array();
  std::string text;
  for (const RegionConstraint& c : sorted) {
    json facts = {{"feature", FeatureName(c.feature)}};
    const std::string phrase = Phrase(features, c, &facts);
    text += text.empty() ? phrase : ", in " + phrase;
    list.push_back(facts);
  }
  (*details)["constraints"] = list;
  return text + " (" + std::to_string(region.size) + " elements)";
}

}  // namespace leaky::toolkit

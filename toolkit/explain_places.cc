#include "explain_places.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "explain_values.h"

namespace leaky::toolkit {

const char* LeftoverName(Leftover c) {
  switch (c) {
    case Leftover::kZero:
      return "zeros";
    case Leftover::kInput:
      return "the input";
    case Leftover::kDy:
      return "dy";
    case Leftover::kFill:
      return "one repeated value";
  }
  return "";
}

bool HoldsLeftover(const ValueInput& in, Leftover c, uint64_t fill, uint64_t i) {
  const Array& out = *in.output;
  switch (c) {
    case Leftover::kZero:
      return in.eight_bit ? out.bits[i] == 0 : out.values[i] == 0;
    case Leftover::kInput:
      return out.bits[i] == in.input->bits[i];
    case Leftover::kDy:
      return in.backward && out.bits[i] == in.dy->bits[i];
    case Leftover::kFill:
      return out.bits[i] == fill;
  }
  return false;
}

uint64_t RemainderStart(const Layout& plan) {
  return plan.core_start.back() + plan.total / plan.cores();
}

namespace {

// Plan boundaries: where a fault's extent may begin or end.
bool IsBoundary(const Layout* plan, uint64_t n, uint64_t index) {
  if (index == 0 || index == n) return true;
  if (!plan) return false;
  if (plan->split == "even" && plan->cores() > 0 && index == RemainderStart(*plan)) {
    return true;  // where the last core's remainder begins
  }
  const Layout::Location at = plan->Locate(index);
  return at.inside && at.tile_start == index;
}

using Content = Leftover;

struct Finder {
  const PlaceInput& in;
  uint64_t n;
  std::vector<char> open, done;
  uint64_t fill = 0;
  bool has_fill = false;

  bool Looks(uint64_t i, Content c) const {
    return (c != Content::kFill || has_fill) && HoldsLeftover(in, c, fill, i);
  }

  // Runs of one content around the open elements: a run with enough wrong
  // elements in it is a region never written, its ends moved to the plan's
  // boundaries where one lies inside the run (so a golden's own zeros or a
  // positive input equal to its result neither cut it nor stretch it).
  std::vector<Unwritten> FindUnwritten(const std::vector<uint64_t>& wrong) {
    std::vector<Unwritten> found;
    for (uint64_t i : wrong) {
      if (done[i]) continue;
      for (Content c : {Content::kZero, Content::kInput, Content::kDy, Content::kFill}) {
        if (done[i]) break;
        if (!Looks(i, c)) continue;
        // Elements already explained (moved results) end a run.
        uint64_t rs = i, re = i + 1;
        while (rs > 0 && !done[rs - 1] && Looks(rs - 1, c)) --rs;
        while (re < n && !done[re] && Looks(re, c)) ++re;
        uint64_t first = UINT64_MAX, last = 0, count = 0;
        for (uint64_t j = rs; j < re; ++j) {
          if (!open[j]) continue;
          first = std::min(first, j);
          last = j;
          ++count;
        }
        uint64_t start = c == Content::kZero ? rs : first;
        for (uint64_t b = first + 1; b-- > rs;) {
          if (IsBoundary(in.plan, n, b)) {
            start = b;
            break;
          }
        }
        uint64_t end = c == Content::kZero ? re : last + 1;
        for (uint64_t b = last + 1; b <= re; ++b) {
          if (IsBoundary(in.plan, n, b)) {
            end = b;
            break;
          }
        }
        const bool bounded = IsBoundary(in.plan, n, start) && IsBoundary(in.plan, n, end);
        // Enough wrong elements, or a span from one plan boundary to the
        // next that looks untouched throughout (a short remainder).
        // Zeros: enough wrong elements, or a span between plan boundaries
        // (a short remainder), or the very end (a dropped tail). The input
        // or dy: only between plan boundaries - positive elements equal
        // their input anyway, so short runs of them mean nothing.
        const bool enough = c == Content::kZero || c == Content::kFill
                                ? count >= 8 || (bounded && count >= 2) || (end == n && count >= 1)
                                : bounded && count >= 2 && (in.plan || count >= 32);
        if (!enough) continue;
        for (uint64_t j = start; j < end; ++j) done[j] = 1;
        if (!found.empty() && found.back().span.end == start &&
            found.back().content == LeftoverName(c)) {
          found.back().span.end = end;
        } else {
          found.push_back({{start, end}, LeftoverName(c)});
        }
        break;
      }
    }
    return found;
  }

  // Correct results at other indices: runs of the output that equal a run
  // of the golden elsewhere, found through the golden's 6-grams.
  std::vector<Moved> FindMoved(const GoldenGrams& grams, const std::vector<uint64_t>& wrong) {
    constexpr uint64_t kGram = GoldenGrams::kGram;
    std::vector<Moved> found;
    if (n < kGram) return found;
    const Array& gold = *in.golden;
    const Array& out = *in.output;
    auto same = [&](uint64_t i, uint64_t j) {
      return in.eight_bit ? out.bits[i] == gold.bits[j]
                          : SameValue(in.dtype, out.bits[i], gold.bits[j]);
    };
    for (uint64_t i : wrong) {
      if (done[i] || i + kGram > n) continue;
      const GoldenGrams::Starts* starts = grams.Find(out, i);
      if (!starts) continue;
      uint64_t best_j = 0, best_len = 0;
      for (uint32_t k = 0; k < starts->count; ++k) {
        const uint64_t j = starts->at[k];
        if (j == i) continue;
        uint64_t len = 0;
        while (i + len < n && j + len < n && same(i + len, j + len)) ++len;
        if (len > best_len) {
          best_len = len;
          best_j = j;
        }
      }
      if (best_len < kGram) continue;
      // A run of one value (ReLU's zeros, a clamp's bound) matches wherever
      // the golden repeats that value: it says nothing about where the
      // results came from, and a region never written is the likelier
      // reading (Unwritten's).
      bool constant = true;
      for (uint64_t k = 1; k < best_len && constant; ++k) {
        constant = out.bits[i + k] == out.bits[i];
      }
      if (constant) continue;
      const int64_t shift = static_cast<int64_t>(best_j) - static_cast<int64_t>(i);
      uint64_t end = i + best_len;
      // A run that ends a few elements past a plan boundary matched them by
      // accident (zeros against the golden's zeros): it ends at the boundary.
      for (uint64_t b = end - 1; b + kGram > end && b > i; --b) {
        if (IsBoundary(in.plan, n, b)) {
          end = b;
          break;
        }
      }
      // Its start, at a plan boundary where one is near: back over elements
      // that fit the shift but were right anyway, or forward past a few
      // that fit it by accident (those stay open).
      uint64_t begin = i;
      for (uint64_t back = 1; back <= kGram && back <= i && back <= best_j; ++back) {
        if (!same(i - back, best_j - back)) break;
        if (IsBoundary(in.plan, n, i - back)) {
          begin = i - back;
          break;
        }
      }
      if (begin == i && !IsBoundary(in.plan, n, i)) {
        for (uint64_t b = i + 1; b < i + kGram && b < end; ++b) {
          if (IsBoundary(in.plan, n, b)) {
            begin = b;
            break;
          }
        }
      }
      for (uint64_t j = begin; j < end; ++j) done[j] = 1;
      // Runs a few elements apart with one shift are one (a value can be
      // right by accident inside a moved run).
      if (!found.empty() && found.back().shift == shift && begin - found.back().span.end <= kGram) {
        found.back().span.end = end;
      } else {
        found.push_back({{begin, end}, shift});
      }
    }
    return found;
  }

  // Tiles that hold exactly the golden's values of the same tile, in
  // another order (a contiguous load and a strided store).
  std::vector<PermutedTile> FindPermuted(const std::vector<uint64_t>& wrong) {
    std::vector<PermutedTile> found;
    if (!in.plan) return found;
    const Layout& plan = *in.plan;
    std::set<std::pair<uint32_t, uint64_t>> tiles;
    for (uint64_t i : wrong) {
      if (done[i]) continue;
      const Layout::Location at = plan.Locate(i);
      if (at.inside) tiles.insert({at.core, at.tile});
    }
    auto canonical = [&](const Array& a, uint64_t i) {
      return std::isnan(a.values[i]) ? uint64_t{0x7ff8} : a.bits[i];
    };
    for (const auto& [core, tile] : tiles) {
      uint64_t start, length;
      plan.TileRange(core, tile, &start, &length);
      std::vector<uint64_t> a, b;
      for (uint64_t j = start; j < start + length; ++j) {
        a.push_back(canonical(*in.output, j));
        b.push_back(canonical(*in.golden, j));
      }
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      if (a != b) continue;
      // At least two values out of place that are not zeros (a -0 and a +0
      // swapped are a sign fault, not a permutation).
      uint64_t moved_values = 0;
      for (uint64_t j = start; j < start + length; ++j) {
        moved_values += open[j] && in.output->values[j] != 0;
      }
      if (moved_values < 2) continue;
      PermutedTile p{core, tile, {start, start + length}, {}};
      // Where a few values came from (values unique in the tile).
      std::map<uint64_t, std::vector<uint64_t>> at;
      for (uint64_t j = 0; j < length; ++j) at[canonical(*in.golden, start + j)].push_back(j);
      for (uint64_t k = 0; k < length && p.map.size() < 4; ++k) {
        const auto& from = at[canonical(*in.output, start + k)];
        if (from.size() == 1 && from[0] != k) p.map.emplace_back(k, from[0]);
      }
      for (uint64_t j = start; j < start + length; ++j) done[j] = 1;
      found.push_back(p);
    }
    return found;
  }
};

uint64_t GramKey(const Array& a, uint64_t at) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t k = 0; k < GoldenGrams::kGram; ++k) {
    const uint64_t v = std::isnan(a.values[at + k]) ? 0x7ff8ull : a.bits[at + k];
    h = (h ^ v) * 1099511628211ull;
  }
  return h;
}

// A gram of fewer than three distinct values (a run of one clamp bound,
// zeros, two saturated values alternating) recurs by chance wherever the
// op saturates: found elsewhere, it tells nothing of where it came from.
// (A bias_act port whose fmin/fmax turned NaNs into the clamp bounds was
// called misplaced from such grams.)
bool Informative(const Array& a, uint64_t at) {
  uint64_t seen[GoldenGrams::kGram];
  uint64_t distinct = 0;
  for (uint64_t k = 0; k < GoldenGrams::kGram; ++k) {
    const uint64_t v = std::isnan(a.values[at + k]) ? 0x7ff8ull : a.bits[at + k];
    if (std::find(seen, seen + distinct, v) == seen + distinct) seen[distinct++] = v;
  }
  return distinct >= 3;
}

}  // namespace

GoldenGrams::GoldenGrams(const Array& golden) {
  const uint64_t n = golden.bits.size();
  starts_.reserve(n);
  for (uint64_t j = 0; j + kGram <= n; ++j) {
    if (!Informative(golden, j)) continue;
    Starts& s = starts_[GramKey(golden, j)];
    if (s.count < s.at.size()) s.at[s.count++] = j;
  }
}

const GoldenGrams::Starts* GoldenGrams::Find(const Array& a, uint64_t at) const {
  if (!Informative(a, at)) return nullptr;
  const auto it = starts_.find(GramKey(a, at));
  return it == starts_.end() ? nullptr : &it->second;
}

PlaceExplanation ExplainPlaces(const PlaceInput& in, const GoldenGrams& grams,
                               const std::vector<uint64_t>& open) {
  PlaceExplanation e;
  const uint64_t n = in.golden->bits.size();
  Finder f{in, n, std::vector<char>(n, 0), std::vector<char>(n, 0)};
  for (uint64_t i : open) f.open[i] = 1;
  // The buffer's old fill: one value most of the wrong elements hold.
  std::unordered_map<uint64_t, uint64_t> counts;
  for (uint64_t i : open) counts[in.output->bits[i]]++;
  for (const auto& [bits, count] : counts) {
    if (count >= 8 && count * 2 >= open.size() &&
        (in.eight_bit ? bits != 0 : ToDouble(in.dtype, bits) != 0)) {
      f.fill = bits;
      f.has_fill = true;
    }
  }
  // Tiles permuted in place first (their values are all the tile's own, a
  // strict test), then moved results: a run of correct values at the wrong
  // place can hold zeros and inputs, never the other way round.
  e.permuted = f.FindPermuted(open);
  e.moved = f.FindMoved(grams, open);
  e.unwritten = f.FindUnwritten(open);
  for (uint64_t i : open) {
    if (f.done[i]) e.explained.push_back(i);
  }
  return e;
}

}  // namespace leaky::toolkit

// The detectors of correct results at other indices (explain_places):
// runs moved by how their indices relate (another tile of the same core,
// one shift, cores at the wrong starts), and tiles permuted in themselves.
#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

#include "findings.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

using MovedKind = ReportedKind<FindingDetector::kMoved>;
using PermutedKind = ReportedKind<FindingDetector::kPermuted>;

std::string Signed(int64_t v) { return (v > 0 ? "+" : "") + std::to_string(v); }

// Shifts that differ per core, read back into the plan's numbers: where
// each core's block was read from, against its start (core_start / the
// element size: an offset in bytes; c x S: a stride S, such as n / (cores
// +- 1); 0: the start omitted). "" when no relation holds for every core.
std::string ShiftsReadBack(const Layout& plan, uint64_t n, const std::vector<Moved>& moved,
                           json* details) {
  std::map<uint32_t, int64_t> shift_of;  // by the core the results sit in
  for (const Moved& m : moved) {
    const Layout::Location at = plan.Locate(m.span.begin);
    if (!at.inside) return "";
    if (shift_of.count(at.core) && shift_of[at.core] != m.shift) return "";
    shift_of[at.core] = m.shift;
  }
  const int64_t b = plan.element_bytes;
  bool bytes = b > 1, scaled = b > 1, zero = true, stepped = true;
  int64_t stride = -1;
  for (const auto& [core, shift] : shift_of) {
    const int64_t start = static_cast<int64_t>(plan.core_start[core]);
    const int64_t source = start + shift;
    bytes = bytes && source == start / b;
    scaled = scaled && source == start * b;
    zero = zero && source == 0;
    if (core == 0 || source % core != 0) {
      stepped = stepped && core == 0 && source == 0;
      continue;
    }
    if (stride < 0) stride = source / core;
    stepped = stepped && source / core == stride;
  }
  const std::string element = std::to_string(b) + "-byte";
  if (bytes) {
    (*details)["relation"] = "offset_in_bytes";
    return "each core's block was read from its start / " + std::to_string(b) +
           " (core c's results are those of core_start_c / " + std::to_string(b) +
           "): the core's offset was applied in bytes to a pointer of " + element +
           " elements (a char* base, or the byte offset of the tiling data used as an index)";
  }
  if (scaled) {
    (*details)["relation"] = "offset_scaled_by_size";
    return "each core's block was read from its start x " + std::to_string(b) +
           ": an element offset multiplied by the element size again";
  }
  if (zero) {
    (*details)["relation"] = "core_start_omitted";
    return "every core read from index 0: the load offset omits the core's start";
  }
  if (stepped && stride > 0) {
    (*details)["relation"] = "core_stride";
    (*details)["stride"] = stride;
    std::string why = "a per-core stride of " + std::to_string(stride);
    const uint64_t c = plan.cores();
    for (int64_t d : {1, -1}) {
      const uint64_t shares = c + static_cast<uint64_t>(d);
      if (shares == 0) continue;
      const uint64_t lo = n / shares, hi = (n + shares - 1) / shares;
      if (static_cast<uint64_t>(stride) == lo || static_cast<uint64_t>(stride) == hi) {
        why = "n / " + std::to_string(shares) + " = " + std::to_string(stride) +
              ": the split was computed for " + std::to_string(shares) + " cores (cores " +
              (d > 0 ? "+" : "-") + " 1)";
      }
    }
    if (static_cast<uint64_t>(stride) == plan.tile_length) why += " (the tile length)";
    return "core c's block was read from c x " + std::to_string(stride) + " instead of its start: " +
           why;
  }
  return "";
}

// Moved results, named by the relation of their indices: another tile of
// the same core (stale, overwritten, computed before the copy-in), one shift
// for all, or cores landing at the wrong starts. Regions never written that
// belong to the same fault (the first tiles before a stale pipeline, the
// ranges cores left when they wrote elsewhere) join the finding.
std::vector<Finding> MovedFindings(Analysis& s, const std::vector<Moved>& moved,
                                   std::vector<Unwritten>* unwritten) {
  std::vector<Finding> found;
  if (moved.empty()) return found;
  const Layout* plan = s.in.plan ? &*s.in.plan : nullptr;
  uint64_t count = 0;
  std::set<int64_t> shifts;
  for (const Moved& m : moved) {
    count += m.span.size();
    shifts.insert(m.shift);
    s.Explain(m.span);
  }
  json details = {{"elements", count}};
  std::vector<ElementRange> spans;
  for (const Moved& m : moved) spans.push_back(m.span);
  auto fold = [&](const std::string& why) {
    if (unwritten->empty()) return std::string();
    json u;
    const std::string region = DescribeRegion(plan, s.n, SpansOf(*unwritten), &u, s.Features());
    for (const Unwritten& w : *unwritten) s.Explain(w.span);
    details["unwritten"] = u;
    unwritten->clear();
    return "; " + region + why;  // e.g. "; [3049, 10007) ... never written"
  };
  // Another tile, k tiles back or forward in the order the tiles run (core
  // by core): each span starts at the same offset of its tile as its source.
  if (plan) {
    auto global = [&](uint64_t index, uint64_t* offset) {
      const Layout::Location l = plan->Locate(index);
      int64_t g = static_cast<int64_t>(l.tile);
      for (uint32_t c = 0; c < l.core; ++c) g += static_cast<int64_t>(plan->TileCount(c));
      *offset = index - l.tile_start;
      return l.inside ? g : INT64_MIN;
    };
    // Every span tile-aligned with its source, all from earlier (or all
    // from later) tiles, at most a ring's depth away; the relation is the
    // distance most elements share (the first tile of a core may hold the
    // previous work-group's leftovers, from further back).
    const int64_t depth = std::max<int64_t>(2, plan->buffers);
    std::map<int64_t, uint64_t> by_distance;
    bool tiled = true;
    for (const Moved& m : moved) {
      uint64_t od = 0, os = 0;
      const int64_t gd = global(m.span.begin, &od);
      const int64_t gs = global(m.span.begin + m.shift, &os);
      if (gd == INT64_MIN || gs == INT64_MIN || od != os || gs == gd) {
        tiled = false;
        break;
      }
      by_distance[gs - gd] += m.span.size();
    }
    int64_t k = 0;
    uint64_t most = 0;
    for (const auto& [distance, elements] : by_distance) {
      if (elements > most) {
        most = elements;
        k = distance;
      }
    }
    tiled = tiled && !by_distance.empty() && std::llabs(k) <= depth &&
            (by_distance.begin()->first > 0) == (by_distance.rbegin()->first > 0) &&
            most * 4 >= count * 3;
    if (tiled && k != 0) {
      details["tiles_apart"] = k;
      json d;
      const std::string region = DescribeRegion(plan, s.n, spans, &d, s.Features());
      details["region"] = d;
      if (k < 0) {
        bool leading = !unwritten->empty();
        json u;
        if (leading) {
          DescribeRegion(plan, s.n, SpansOf(*unwritten), &u, s.Features());
          leading = u["region"] == "first_tiles" && u.value("tiles_per_core", int64_t{0}) == -k;
        }
        if (leading) {
          const std::string rest =
              fold(" never written (what the buffers held before the first copy-in)");
          // The same bits come from the copy-out side: a slot sent before
          // the compute wrote it (the copy-out issued early, or from the
          // other slot). The output cannot tell which; the first is the
          // article's fault, named first.
          details["candidates"] = {"compute_before_copy", "stale_tile"};
          found.push_back({MovedKind("compute_before_copy"),
                           "in " + region + ", each tile holds the result of the tile " +
                               std::to_string(-k) + " before it" + rest +
                               ": each tile was computed on its buffer "
                               "before its own copy-in arrived (the previous contents of the " +
                               std::to_string(-k) +
                               "-deep ring) - or, the very same bits, each tile's out slot was "
                               "copied out before the compute wrote it (the copy-out issued "
                               "before the compute, or from the other slot). Wait on the "
                               "copy-in before the compute, and copy out the slot just computed",
                           details});
        } else {
          found.push_back({MovedKind("stale_tile"),
                           "in " + region + ", each tile holds the result of the tile " +
                               std::to_string(-k) +
                               " before it: a buffer was reused before its copy-out finished, "
                               "the copy-out read the wrong slot, or a tile was computed on before "
                               "its copy-in arrived",
                           details});
        }
      } else {
        found.push_back({MovedKind("overwritten_tile"),
                         "in " + region + ", each tile holds the result of the tile " +
                             std::to_string(k) +
                             " after it: its copy-in landed in the buffer this tile was computed "
                             "from (a prefetch with a single buffer, or the slot index of the "
                             "double buffer wrong)",
                         details});
      }
      return found;
    }
  }
  // Cores landing at the wrong starts.
  if (plan) {
    std::map<uint32_t, int64_t> landing;
    bool consistent = true;
    for (const Moved& m : moved) {
      const uint64_t src = m.span.begin + m.shift;
      const Layout::Location at = plan->Locate(src);
      if (!at.inside) {
        consistent = false;
        break;
      }
      const int64_t l =
          static_cast<int64_t>(m.span.begin) - static_cast<int64_t>(src - at.core_start);
      if (landing.count(at.core) && landing[at.core] != l) consistent = false;
      landing[at.core] = l;
    }
    if (consistent && !landing.empty()) {
      json list = json::array();
      for (const auto& [core, at] : landing) list.push_back({{"core", core}, {"lands_at", at}});
      details["landings"] = list;
      bool at_zero = true, tile_apart = true;
      int64_t step = -1;
      bool stepped = true;
      for (const auto& [core, at] : landing) {
        at_zero = at_zero && at == 0;
        tile_apart = tile_apart && at == static_cast<int64_t>(core * plan->tile_length);
        if (core > 0) {
          if (at % core != 0)
            stepped = false;
          else if (step < 0)
            step = at / core;
          else if (at / core != step)
            stepped = false;
        }
      }
      std::string relation;
      if (at_zero) {
        relation =
            "every core wrote its results from index 0: the output offset omits the "
            "core's start (the last core to write wins " +
            std::to_string(plan->core_length[landing.rbegin()->first]) + " elements)";
        details["relation"] = "core_start_omitted";
      } else if (tile_apart) {
        relation = "core c's results start at c x " + std::to_string(plan->tile_length) +
                   " (the tile length) instead of its own start: the cores were placed a tile "
                   "apart, not a core's length apart";
        details["relation"] = "cores_a_tile_apart";
      } else if (stepped && step > 0) {
        relation = "core c's results start at c x " + std::to_string(step) + " instead of c x " +
                   std::to_string(plan->core_length.front()) + ": a per-core stride of " +
                   std::to_string(step);
        details["relation"] = "core_stride";
        details["stride"] = step;
      } else if (shifts.size() == 1) {
        relation = "";  // one shift for everything says more (below)
      } else {
        relation = "cores' results land at other starts";
        details["relation"] = "core_starts";
      }
      if (!relation.empty()) {
        json d;
        const std::string region = DescribeRegion(plan, s.n, spans, &d, s.Features());
        details["region"] = d;
        const std::string rest = fold(" never written (the ranges those cores owned)");
        found.push_back({MovedKind("misplaced"),
                         "in " + region + ", correct results of other indices: " + relation + rest,
                         details});
        return found;
      }
      details.erase("landings");
    }
  }
  // One shift for everything.
  if (shifts.size() == 1) {
    const int64_t shift = *shifts.begin();
    json d;
    const std::string region = DescribeRegion(plan, s.n, spans, &d, s.Features());
    details["region"] = d;
    details["shift"] = shift;
    const std::string rest = fold(" never written");
    found.push_back(
        {MovedKind("misplaced"),
         "in " + region + ", each element holds the correct result of index i" + Signed(shift) +
             rest + ". An offset off by " + std::to_string(std::llabs(shift)) +
             " (a load or store index that starts " + (shift < 0 ? "early" : "late") + ")",
         details});
    return found;
  }
  json d;
  const std::string region = DescribeRegion(plan, s.n, spans, &d, s.Features());
  details["region"] = d;
  details["shifts"] = std::vector<int64_t>(shifts.begin(), shifts.end());
  std::string cause = plan ? ShiftsReadBack(*plan, s.n, moved, &details) : "";
  if (cause.empty()) cause = "a load or store index computed from the wrong variable";
  found.push_back({MovedKind("misplaced"),
                   "in " + region + ", correct results of other indices, shifted by " +
                       std::to_string(shifts.size()) + " different amounts: " + cause,
                   details});
  return found;
}

Finding PermutedFinding(Analysis& s, const std::vector<PermutedTile>& tiles) {
  json list = json::array();
  std::vector<uint64_t> cores;
  for (const PermutedTile& t : tiles) {
    list.push_back({{"core", t.core}, {"tile", t.tile}});
    if (cores.empty() || cores.back() != t.core) cores.push_back(t.core);
    s.Explain(t.span);
  }
  std::string example;
  const PermutedTile& first = tiles.front();
  for (const auto& [to, from] : first.map) {
    example += (example.empty() ? "" : ", ") + std::to_string(to) + " <- " + std::to_string(from);
  }
  json details = {{"tiles", list}, {"map", first.map}};
  // The same cores' short last tiles: a stride that assumed a full tile
  // reads and writes past them (values from outside the tile).
  std::string short_tails;
  if (s.in.plan) {
    const Layout& plan = *s.in.plan;
    const std::set<uint64_t> permuted_cores(cores.begin(), cores.end());
    std::vector<uint64_t> open;
    for (uint64_t i : s.Open()) {
      const Layout::Location at = plan.Locate(i);
      if (at.inside && permuted_cores.count(at.core) && at.tile + 1 == at.tiles_in_core &&
          at.tile_length < plan.tile_length) {
        open.push_back(i);
      }
    }
    if (!open.empty()) {
      s.Explain(open);
      details["short_tail_elements"] = open.size();
      short_tails = "; " + std::to_string(open.size()) +
                    " elements of those cores' short last tiles hold values from outside the "
                    "tile (the stride assumed a full tile)";
    }
  }
  return {PermutedKind("misplaced"),
          std::to_string(tiles.size()) + " tile(s) of cores " + NumberList(cores) +
              " hold exactly their own correct results in another order (in core " +
              std::to_string(first.core) + " tile " + std::to_string(first.tile) +
              ", offset <- golden offset: " + example +
              "): the values are permuted inside "
              "each tile - the load and the store index the tile differently (a contiguous "
              "load and a strided store, or lanes and elements swapped)" +
              short_tails,
          details};
}

}  // namespace

// A moved span found by its 6-grams stops short of an element the grams
// cannot reach (a 1-element remainder past a plan boundary): it takes the
// open wrong elements next to it that hold the result its shift gives.
void ExtendMoved(Analysis& s, std::vector<Moved>* moved) {
  std::vector<char> open(s.n, 0);
  for (uint64_t i : s.Open()) open[i] = 1;
  const auto holds = [&](uint64_t i, int64_t shift) {
    const int64_t src = static_cast<int64_t>(i) + shift;
    return open[i] && src >= 0 && static_cast<uint64_t>(src) < s.n &&
           SameValue(s.in.dtype, s.in.output.bits[i], s.in.golden.bits[src]);
  };
  // Within the tile: a span that crossed a tile boundary would no longer
  // start where its source tile does.
  const auto same_tile = [&](uint64_t a, uint64_t b) {
    if (!s.in.plan) return true;
    // The even split's remainder belongs to the last core's last tile.
    const Layout& p = *s.in.plan;
    if (p.split == "even" && p.cores() > 0 && std::min(a, b) + 1 == RemainderStart(p) &&
        std::max(a, b) == RemainderStart(p)) {
      return true;
    }
    const Layout::Location la = s.in.plan->Locate(a), lb = s.in.plan->Locate(b);
    return la.inside && lb.inside && la.tile_start == lb.tile_start && la.core == lb.core;
  };
  for (Moved& m : *moved) {
    while (m.span.end < s.n && same_tile(m.span.end - 1, m.span.end) &&
           holds(m.span.end, m.shift)) {
      open[m.span.end++] = 0;
    }
    while (m.span.begin > 0 && same_tile(m.span.begin, m.span.begin - 1) &&
           holds(m.span.begin - 1, m.shift)) {
      open[--m.span.begin] = 0;
    }
  }
}

void FindMoved(Analysis& s) {
  PlaceExplanation& p = s.OpenPlaces();
  ExtendMoved(s, &p.moved);
  for (Finding& f : MovedFindings(s, p.moved, &p.unwritten)) s.findings.push_back(std::move(f));
}

void FindPermuted(Analysis& s) {
  const PlaceExplanation& p = s.OpenPlaces();
  if (!p.permuted.empty()) s.findings.push_back(PermutedFinding(s, p.permuted));
}

}  // namespace leaky::toolkit

// Diagnosis by explanation: every wrong element is first asked what it holds
// (explain_values: the op computed another way; explain_places: something
// never replaced, or a correct result at another index), and the
// explanations become findings in the plan's terms, one per fault. What no
// explanation covers is said to be unexplained, never guessed at.
#include "diagnose.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "explain_places.h"
#include "explain_values.h"
#include "leaky/leaky.hpp"

namespace leaky::tools {

using json = nlohmann::json;

uint64_t DefaultMaxUlp(leaky_dtype) { return 0; }

json CheckResult::ToJson() const {
  json findings_json = json::array();
  for (const Finding& f : findings) {
    findings_json.push_back({{"kind", f.kind}, {"message", f.message}, {"details", f.details}});
  }
  return {{"pass", pass},
          {"elements", elements},
          {"mismatches", mismatches},
          {"zero_sign_differences", zero_sign_differences},
          {"first_mismatch", first_mismatch},
          {"max_ulp", max_ulp},
          {"max_abs_error", max_abs_error},
          {"max_rel_error", max_rel_error},
          {"findings", findings_json}};
}

namespace {

std::string Number(double v) {
  if (v == 0) return "0";  // never "-0" in a message
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

// What the analysis has found so far, and which wrong elements it explains.
struct State {
  const CheckInput& in;
  uint64_t n = 0;
  std::vector<uint64_t> wrong;      // outside the tolerance, ascending
  std::vector<uint64_t> differing;  // any difference beyond a zero's sign (the tolerance aside)
  std::vector<uint64_t> zero_sign;  // -0 against +0
  std::vector<char> explained;
  std::vector<Finding> findings;

  std::vector<uint64_t> Open() const {
    std::vector<uint64_t> open;
    for (uint64_t i : wrong) {
      if (!explained[i]) open.push_back(i);
    }
    return open;
  }
  void Explain(const std::vector<uint64_t>& indices) {
    for (uint64_t i : indices) explained[i] = 1;
  }
  void Explain(Span s) {
    for (uint64_t i = s.begin; i < s.end; ++i) explained[i] = 1;
  }
  bool NegativeSide(uint64_t i) const { return !(in.input.values[i] > 0); }
  double Base(uint64_t i) const { return in.backward ? in.dy.values[i] : in.input.values[i]; }
};

// ---- the op computed another way

std::string SmallestNormal(leaky_dtype t) {
  return std::string(DtypeName(t)) + "'s smallest normal " + Number(DtypeSmallestNormal(t));
}

Finding ValueFinding(const State& s, const ValueExplanation& v) {
  using M = ValueModel;
  const M& m = v.model;
  const CheckInput& in = s.in;
  const std::string count = std::to_string(v.explained.size());
  json details = {{"count", v.explained.size()}, {"first", v.explained.front()}};
  const char* what = in.backward ? "gradients" : "inputs";
  if (m.flush_results || m.flush_inputs) {
    details["threshold"] = DtypeSmallestNormal(m.flush_type);
    details["flushed_results"] = v.flushed_results;
    details["flushed_inputs"] = v.flushed_inputs;
    details["positive_flushed_inputs"] = v.positive_flushed_inputs;
    const std::string slope =
        m.slope == M::Slope::kRounded ? " with the slope rounded to f16 (f16 arithmetic)" : "";
    // f16's threshold, results flushed: an f16 multiply under FTZ (inputs
    // alone: a hand-made f16 -> f32 conversion without subnormals, below).
    if (m.flush_type == LEAKY_F16 && (m.flush_results || v.flushed_results > 0)) {
      return {"f16_underflow",
              count + " elements flushed to zero below " + SmallestNormal(LEAKY_F16) + " (" +
                  std::to_string(v.flushed_results) + " results" +
                  (m.flush_inputs ? ", " + std::to_string(v.flushed_inputs) +
                                        " from subnormal inputs read as zero"
                                  : "") +
                  "): the multiply ran in f16 with flush-to-zero" + slope +
                  ". Widen to f32 with denormals enabled, multiply, then round once to f16",
              details};
    }
    const std::string results = std::to_string(v.flushed_results) + " results below " +
                                SmallestNormal(m.flush_type) + " came out as zero";
    if (m.flush_inputs) {
      return {"flush_inputs",
              std::to_string(v.flushed_inputs) + " subnormal " + what + " (below " +
                  SmallestNormal(m.flush_type) + ") were read as zero (" +
                  std::to_string(v.positive_flushed_inputs) +
                  " of them positive, whose result is "
                  "the input itself)" +
                  (m.flush_results ? "; " + results : std::string()) + ": denormals-are-zero" +
                  (m.flush_results ? " and flush-to-zero are" : " is") +
                  " on (-cl-denorms-are-zero, DAZ/FTZ in MXCSR, a fast-math flag). Build without "
                  "it, or state the flushing as the kernel's contract",
              details};
    }
    return {"flush_results",
            results + " (" + what +
                " themselves kept): flush-to-zero is on for the multiply "
                "(FTZ, a fast-math flag). Build without it, or state it as the contract",
            details};
  }
  if (m.rounding != M::Rounding::kNearestEven) {
    const bool tz = m.rounding == M::Rounding::kTowardZero;
    details["rounding"] = tz ? "toward_zero" : "away_from_zero";
    details["rounded"] = v.rounded;
    const std::string where =
        in.dtype == LEAKY_F16 || in.dtype == LEAKY_BF16
            ? std::string("the store to ") + DtypeName(in.dtype) +
                  (tz ? (in.dtype == LEAKY_F16 ? " rounds toward zero (vstore_half_rtz)"
                                               : " truncates the f32 bits")
                      : " rounds away from zero")
            : std::string("the multiply rounds ") + (tz ? "toward zero" : "away from zero");
    return {"rounding_mode",
            count + " results, every one exactly 1 ulp " + (tz ? "toward zero" : "away from zero") +
                " from the golden on both signs wherever the product is inexact: " + where +
                " where the op rounds to nearest even. " +
                (in.allow_rounding ? "Accepted (--allow-rounding)."
                                   : "--max-ulp does not hide a rounding mode; --allow-rounding "
                                     "accepts it."),
            details};
  }
  if (m.gate == M::Gate::kNone) {
    return {"select_missing",
            count + " positive " + what +
                " came out multiplied by the slope too (y = slope * x "
                "everywhere): the compare/select step is missing (the article's listing has "
                "its Select commented out); compute mask = x > 0 and select x or slope * x",
            details};
  }
  if (m.gate == M::Gate::kSwapped) {
    return {"select_swapped",
            count +
                " elements have the branches swapped: positives scaled by the slope, "
                "negatives passed through (y = x > 0 ? slope * x : x) - what max(x, slope * "
                "x) computes when the slope is above 1 (the max/min trick holds only for "
                "slopes in [0, 1]); select on x > 0",
            details};
  }
  if (m.gate == M::Gate::kGreaterEqual) {
    return {"compare_at_zero",
            "only the " + count +
                " elements whose input is +0 or -0 differ: the comparison at "
                "zero is `x >= 0` where the reference takes `x > 0` (at x = 0 the " +
                (in.backward ? "gradient is dy * slope, not dy" : "result is x * slope") + ")",
            details};
  }
  details["estimated_slope"] = m.slope_value;
  details["expected_slope"] = in.negative_slope;
  if (m.through_set) {
    details["through"] = DtypeName(m.through);
    return {"half_arithmetic",
            count + " negative-side results are exactly the product rounded to " +
                DtypeName(m.through) + " and stored as " + DtypeName(in.dtype) +
                ": the multiply ran in " + DtypeName(m.through) +
                " arithmetic, or went through "
                "a " +
                DtypeName(m.through) + " buffer. Multiply and store in " + DtypeName(in.dtype),
            details};
  }
  if (m.slope == M::Slope::kRounded) {
    // On half data, the slope rounded to nearest in the data's own type
    // gives the same bits as the multiply done in that type.
    const bool half_data = (in.dtype == LEAKY_F16 || in.dtype == LEAKY_BF16) &&
                           m.slope_type == in.dtype && !m.slope_truncated;
    details["rounded_slope"] = m.slope_value;
    details["slope_type"] = DtypeName(m.slope_type);
    details["truncated"] = m.slope_truncated;
    return {half_data ? "ambiguous" : "slope_rounded",
            "the output is exactly what slope " + Number(m.slope_value) + " gives: the slope " +
                Number(in.negative_slope) +
                (m.slope_truncated ? " truncated to " : " rounded to ") + DtypeName(m.slope_type) +
                " before the multiply" +
                (half_data ? std::string(", or (the same bits for every ") + DtypeName(in.dtype) +
                                 " input) the multiply done in " + DtypeName(in.dtype) +
                                 " arithmetic. Either way: keep the slope in f32 (the tiling "
                                 "data's float field) and multiply in f32"
                           : ". Keep it in f32 and multiply in f32"),
            half_data ? json{{"candidates", {"slope_rounded", "half_arithmetic"}},
                             {"rounded_slope", m.slope_value},
                             {"count", v.explained.size()}}
                      : details};
  }
  std::string cause =
      "the slope did not reach the kernel (host and kernel disagree on the tiling-data layout, "
      "or the scalar argument was not passed/converted), or it is hard-coded";
  if (m.slope_value == 0) {
    cause =
        "negatives became zero, as a plain ReLU: the negative branch returns 0 or the slope "
        "field read as 0 (a tiling-data layout mismatch)";
  } else if (m.slope_value == 1) {
    cause =
        "negatives passed through unchanged: the negative branch returns x, or the slope "
        "read as 1";
  }
  return {"slope_mismatch",
          "only the negative side is wrong, exactly as slope " + Number(m.slope_value) +
              " instead of " + Number(in.negative_slope) + " gives: " + cause,
          details};
}

// ---- what the wrong elements hold, and where

std::string CauseOfUnwritten(const std::string& region) {
  if (region == "remainder") {
    return "the remainder was dropped: the last core's length misses total % cores";
  }
  if (region == "last_tiles") {
    return "each core's loop stops early: a loop bound of tiles - 1, or the tail tile's short "
           "length dropped";
  }
  if (region == "first_tiles") {
    return "each core's first tile(s) were skipped: a loop starting at 1, or a prefetch whose "
           "result was never stored";
  }
  if (region == "cores") {
    return "those cores never ran their loop or wrote elsewhere: their block index, offset or "
           "length came from the wrong variable";
  }
  if (region == "tail") {
    return "a tail was not processed: the loop bound or the tail length was dropped";
  }
  return "read before the copy-in finished (a missing wait), or never computed or copied out";
}

std::vector<Span> SpansOf(const std::vector<Unwritten>& u) {
  std::vector<Span> spans;
  for (const Unwritten& w : u) spans.push_back(w.span);
  return spans;
}

std::vector<Finding> UnwrittenFindings(State& s, const std::vector<Unwritten>& unwritten) {
  std::vector<Finding> found;
  // One finding per content: a fault leaves one kind of leftover.
  std::map<std::string, std::vector<Unwritten>> by_content;
  for (const Unwritten& w : unwritten) by_content[w.content].push_back(w);
  for (const auto& [content, list] : by_content) {
    json details;
    const std::vector<Span> spans = SpansOf(list);
    const std::string region =
        DescribeRegion(s.in.plan ? &*s.in.plan : nullptr, s.n, spans, &details);
    details["content"] = content;
    for (const Span& sp : spans) s.Explain(sp);
    // The whole output equal to the input: the compute skipped (or, in place,
    // the kernel never ran); a region of it: a region never written in place.
    const bool input = (content == "the input" || content == "dy") && details["region"] == "all";
    if (details["region"] == "all" && content == "zeros") {
      details["candidates"] = {"not_written", "compute_before_copy"};
      found.push_back({"ambiguous",
                       "the whole output is zeros: either never written back (no copy-out, or "
                       "the result written to another buffer), or computed from a buffer that "
                       "was never filled (the copy-in not waited for, on zeroed memory); the "
                       "output alone cannot tell which",
                       details});
      continue;
    }
    std::string cause = CauseOfUnwritten(details["region"]);
    // A tail that starts where the last core would end had every core c
    // started at c x S (S not its share): name S, the arithmetic trace of
    // the wrong per-core offset (7 x 256 + 1257 = 3049 for cores a tile
    // apart), not a dropped tail.
    if (s.in.plan && details["region"] == "tail" && s.in.plan->cores() > 1) {
      const Layout& plan = *s.in.plan;
      const uint64_t k = details["first"].get<uint64_t>(), last = plan.cores() - 1;
      const uint64_t length = plan.core_length.back();
      if (k > length && (k - length) % last == 0) {
        const uint64_t stride = (k - length) / last;
        if (stride != plan.core_start[1] - plan.core_start[0] && stride > 0) {
          details["core_stride"] = stride;
          cause = std::to_string(k) + " = " + std::to_string(last) + " x " +
                  std::to_string(stride) + " + " + std::to_string(length) +
                  ": every core c started at c x " + std::to_string(stride) +
                  (stride == plan.tile_length ? " (the tile length: the cores were placed a tile "
                                                "apart, not a core's length apart)"
                                              : "") +
                  " instead of its own start (c x " +
                  std::to_string(plan.core_start[1] - plan.core_start[0]) +
                  "), so the last core ended at " + std::to_string(k) +
                  " and nothing after was written";
        }
      }
    }
    if (input) {
      found.push_back(
          {"input_copied",
           "the whole output holds " + content +
               " unchanged: the compute was "
               "skipped and the input copied through (or, run in place, the kernel never "
               "wrote at all)",
           details});
    } else {
      found.push_back({"not_written",
                       "never written: " + region + ", still holding " + content +
                           (content == "the input" || content == "dy"
                                ? " (run in place; or the input copied through there). "
                                : " (the buffer's previous contents). ") +
                           cause,
                       details});
    }
  }
  return found;
}

// Where each moved run's source core starts in the output.
struct Landing {
  uint32_t core = 0;
  int64_t at = 0;  // where the core's first element landed (may be negative)
};

std::string Signed(int64_t v) { return (v > 0 ? "+" : "") + std::to_string(v); }

// Moved results, named by the relation of their indices: another tile of
// the same core (stale, overwritten, computed before the copy-in), one shift
// for all, or cores landing at the wrong starts. Regions never written that
// belong to the same fault (the first tiles before a stale pipeline, the
// ranges cores left when they wrote elsewhere) join the finding.
std::vector<Finding> MovedFindings(State& s, const std::vector<Moved>& moved,
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
  std::vector<Span> spans;
  for (const Moved& m : moved) spans.push_back(m.span);
  auto fold = [&](const std::string& why) {
    if (unwritten->empty()) return std::string();
    json u;
    const std::string region = DescribeRegion(plan, s.n, SpansOf(*unwritten), &u);
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
      const std::string region = DescribeRegion(plan, s.n, spans, &d);
      details["region"] = d;
      if (k < 0) {
        bool leading = !unwritten->empty();
        json u;
        if (leading) {
          DescribeRegion(plan, s.n, SpansOf(*unwritten), &u);
          leading = u["region"] == "first_tiles" && u.value("tiles_per_core", int64_t{0}) == -k;
        }
        if (leading) {
          const std::string rest =
              fold(" never written (what the buffers held before the first copy-in)");
          found.push_back({"compute_before_copy",
                           "in " + region + ", each tile holds the result of the tile " +
                               std::to_string(-k) + " before it" + rest +
                               ": each tile was computed on its buffer "
                               "before its own copy-in arrived (the previous contents of the " +
                               std::to_string(-k) +
                               "-deep ring). Wait on the copy-in before the "
                               "compute",
                           details});
        } else {
          found.push_back({"stale_tile",
                           "in " + region + ", each tile holds the result of the tile " +
                               std::to_string(-k) +
                               " before it: a buffer was reused before its copy-out finished, "
                               "the copy-out read the wrong slot, or a tile was computed on before "
                               "its copy-in arrived",
                           details});
        }
      } else {
        found.push_back({"overwritten_tile",
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
        const std::string region = DescribeRegion(plan, s.n, spans, &d);
        details["region"] = d;
        const std::string rest = fold(" never written (the ranges those cores owned)");
        found.push_back({"misplaced",
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
    const std::string region = DescribeRegion(plan, s.n, spans, &d);
    details["region"] = d;
    details["shift"] = shift;
    const std::string rest = fold(" never written");
    found.push_back(
        {"misplaced",
         "in " + region + ", each element holds the correct result of index i" + Signed(shift) +
             rest + ". An offset off by " + std::to_string(std::llabs(shift)) +
             " (a load or store index that starts " + (shift < 0 ? "early" : "late") + ")",
         details});
    return found;
  }
  json d;
  const std::string region = DescribeRegion(plan, s.n, spans, &d);
  details["region"] = d;
  details["shifts"] = std::vector<int64_t>(shifts.begin(), shifts.end());
  found.push_back({"misplaced",
                   "in " + region + ", correct results of other indices, shifted by " +
                       std::to_string(shifts.size()) +
                       " different amounts: a load or store index "
                       "computed from the wrong variable",
                   details});
  return found;
}

Finding PermutedFinding(State& s, const std::vector<PermutedTile>& tiles) {
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
  return {"misplaced",
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

// ---- what is left: approximate slopes, NaN, the sign of zero

std::optional<Finding> ApproximateSlope(State& s) {
  const CheckInput& in = s.in;
  const std::vector<uint64_t> open = s.Open();
  if (open.empty()) return std::nullopt;
  std::vector<double> ratios;
  for (uint64_t i : open) {
    if (!s.NegativeSide(i)) return std::nullopt;
    const double base = s.Base(i), out = in.output.values[i];
    if (std::isfinite(base) && base != 0 && std::isfinite(out)) ratios.push_back(out / base);
  }
  if (ratios.size() < 8) return std::nullopt;  // a few elements say nothing of a slope
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<long>(ratios.size() / 2),
                   ratios.end());
  const double slope = ratios[ratios.size() / 2];
  const double scale = std::max(std::fabs(slope), 1e-3);
  const auto consistent = std::count_if(
      ratios.begin(), ratios.end(), [&](double v) { return std::fabs(v - slope) <= 0.02 * scale; });
  if (static_cast<uint64_t>(consistent) * 10 < ratios.size() * 8) return std::nullopt;
  s.Explain(open);
  return Finding{"slope_mismatch",
                 "only the negative side is wrong, close to slope " + Number(slope) +
                     " instead of " + Number(in.negative_slope) +
                     " (not exactly any slope: computed another way too): the slope did not "
                     "reach the kernel as given",
                 {{"estimated_slope", slope}, {"expected_slope", in.negative_slope}}};
}

std::optional<Finding> NanFinding(State& s, bool lost) {
  std::vector<uint64_t> found;
  for (uint64_t i : s.Open()) {
    const bool out_nan = std::isnan(s.in.output.values[i]),
               gold_nan = std::isnan(s.in.golden.values[i]);
    if (lost ? (gold_nan && !out_nan) : (out_nan && !gold_nan)) found.push_back(i);
  }
  if (found.empty()) return std::nullopt;
  s.Explain(found);
  if (lost) {
    // A max/min formula also loses the sign of zero: the same fault.
    uint64_t signs = 0;
    for (uint64_t i : s.zero_sign) signs += !s.explained[i];
    if (!s.in.strict_zero_sign) s.Explain(s.zero_sign);
    return Finding{"lost_nan",
                   std::to_string(found.size()) +
                       " NaN inputs did not give NaN: a max/min-based "
                       "formula or a compare that treats NaN as negative/zero drops it" +
                       (signs > 0 && !s.in.strict_zero_sign
                            ? " (and " + std::to_string(signs) +
                                  " zeros came out with the other sign, as such a formula does)"
                            : std::string()),
                   {{"count", found.size()}, {"first", found.front()}}};
  }
  return Finding{"unexpected_nan",
                 std::to_string(found.size()) +
                     " NaN outputs where the golden is a number: "
                     "uninitialised memory, or 0 * inf / inf - inf in a rewritten formula",
                 {{"count", found.size()}, {"first", found.front()}}};
}

std::optional<Finding> ZeroSignFinding(State& s) {
  uint64_t open = 0;
  for (uint64_t i : s.zero_sign) open += !s.explained[i];
  if (open == 0) return std::nullopt;
  s.Explain(s.zero_sign);
  return Finding{
      "zero_sign",
      std::to_string(s.zero_sign.size()) +
          " zeros have the other sign (-0 against "
          "+0), the first at " +
          std::to_string(s.zero_sign.front()) +
          (s.in.strict_zero_sign ? ": counted as mismatches (--strict-zero-sign)"
                                 : ": not counted as mismatches (--strict-zero-sign counts them)") +
          ". Usual cause: a zero constant selected instead of x * slope, or a "
          "max(x, 0)-style formula",
      {{"count", s.zero_sign.size()}, {"first", s.zero_sign.front()}}};
}

// Where unexplained errors sit: runs at a regular stride say "a wrong offset
// per tile or per core" even when their values say nothing.
std::string Repeats(const State& s, const std::vector<uint64_t>& open, json* details) {
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [start, end)
  constexpr uint64_t kJoin = 16;
  for (uint64_t i : open) {
    if (!runs.empty() && i - runs.back().second <= kJoin)
      runs.back().second = i + 1;
    else
      runs.emplace_back(i, i + 1);
  }
  if (runs.size() < 3) return "";
  std::map<uint64_t, uint64_t> counts;
  for (size_t j = 1; j < runs.size(); ++j) counts[runs[j].first - runs[j - 1].first]++;
  uint64_t period = 0, best = 0;
  for (const auto& [g, count] : counts) {
    if (count > best) {
      best = count;
      period = g;
    }
  }
  uint64_t near = 0;
  for (const auto& [g, count] : counts)
    near += g + kJoin >= period && g <= period + kJoin ? count : 0;
  if (near * 10 < (runs.size() - 1) * 8) return "";
  (*details)["period"] = period;
  (*details)["runs"] = runs.size();
  std::string text = "; they come in " + std::to_string(runs.size()) + " runs every " +
                     std::to_string(period) + " elements";
  if (s.in.plan && period == s.in.plan->tile_length) {
    text += " (the plan's tile length: something wrong per tile)";
  } else if (s.in.plan && !s.in.plan->core_length.empty() &&
             period == s.in.plan->core_length.front()) {
    text += " (one core's share: something wrong per core)";
  }
  return text;
}

}  // namespace

CheckResult Diagnose(const CheckInput& in) {
  CheckResult r;
  const uint64_t n = in.golden.bits.size();
  r.elements = n;
  State s{in, n, {}, {}, {}, std::vector<char>(n, 0), {}};
  for (uint64_t i = 0; i < n; ++i) {
    const bool out_nan = std::isnan(in.output.values[i]);
    const bool gold_nan = std::isnan(in.golden.values[i]);
    if (out_nan || gold_nan) {
      if (out_nan != gold_nan) {
        s.wrong.push_back(i);
        s.differing.push_back(i);
      }
      continue;
    }
    if (in.output.bits[i] == in.golden.bits[i]) continue;
    if (IsZeroBits(in.dtype, in.output.bits[i]) && IsZeroBits(in.dtype, in.golden.bits[i])) {
      s.zero_sign.push_back(i);
      if (in.strict_zero_sign) s.wrong.push_back(i);
      continue;
    }
    s.differing.push_back(i);
    const uint64_t ulp = UlpDistance(in.dtype, in.golden.bits[i], in.output.bits[i]);
    r.max_ulp = std::max(r.max_ulp, ulp);
    const double abs_error = std::fabs(in.output.values[i] - in.golden.values[i]);
    if (std::isfinite(abs_error)) {
      r.max_abs_error = std::max(r.max_abs_error, abs_error);
      if (in.golden.values[i] != 0) {
        r.max_rel_error = std::max(r.max_rel_error, abs_error / std::fabs(in.golden.values[i]));
      }
    }
    if (ulp > in.max_ulp) s.wrong.push_back(i);
  }
  r.mismatches = s.wrong.size();
  r.zero_sign_differences = s.zero_sign.size();
  r.pass = s.wrong.empty();
  if (s.differing.empty() && s.zero_sign.empty()) return r;
  if (!s.wrong.empty()) r.first_mismatch = static_cast<int64_t>(s.wrong.front());

  const Layout* plan = in.plan ? &*in.plan : nullptr;
  PlaceInput places;
  // 1. The op computed another way - unless what it explains lies mostly
  // inside regions that hold something else (a block of zeros also
  // "flushes" the tiny results inside it).
  const ValueInput values{in.dtype, in.backward, in.negative_slope, &in.input,
                          &in.dy,   &in.golden,  &in.output};
  static_cast<ValueInput&>(places) = values;
  places.plan = plan;
  const GoldenGrams grams(in.golden);
  if (std::optional<ValueExplanation> v = ExplainValues(values, s.differing)) {
    const PlaceExplanation regions = ExplainPlaces(places, grams, s.differing);
    std::vector<char> in_region(n, 0);
    for (uint64_t i : regions.explained) in_region[i] = 1;
    const auto inside = std::count_if(v->explained.begin(), v->explained.end(),
                                      [&](uint64_t i) { return in_region[i]; });
    const bool rounding = v->model.rounding != ValueModel::Rounding::kNearestEven;
    if (static_cast<uint64_t>(inside) * 2 < v->explained.size()) {
      const bool counts = !rounding || !in.allow_rounding;
      if (rounding && counts && v->rounded >= 4) r.pass = false;  // never hidden by --max-ulp
      if (!rounding || v->rounded >= 4) {
        s.findings.push_back(ValueFinding(s, *v));
        s.Explain(v->explained);
        for (uint64_t i : s.zero_sign) {  // the same model's zeros of the other sign
          if (Predict(values, v->model, i) == in.output.bits[i]) s.explained[i] = 1;
        }
      }
    }
  }
  // 2. What the rest holds, and where.
  PlaceExplanation p = ExplainPlaces(places, grams, s.Open());
  for (Finding& f : MovedFindings(s, p.moved, &p.unwritten)) s.findings.push_back(std::move(f));
  if (!p.permuted.empty()) s.findings.push_back(PermutedFinding(s, p.permuted));
  for (Finding& f : UnwrittenFindings(s, p.unwritten)) s.findings.push_back(std::move(f));
  // 3. What is left.
  if (auto f = ApproximateSlope(s)) s.findings.push_back(*f);
  if (auto f = NanFinding(s, /*lost=*/false)) s.findings.push_back(*f);
  if (auto f = NanFinding(s, /*lost=*/true)) s.findings.push_back(*f);
  if (auto f = ZeroSignFinding(s)) s.findings.push_back(*f);
  const std::vector<uint64_t> open = s.Open();
  if (!open.empty()) {
    json details = {{"index", open.front()}, {"count", open.size()}};
    const std::string repeats = Repeats(s, open, &details);
    s.findings.push_back({"mismatch",
                          std::to_string(open.size()) +
                              " mismatches that no explanation covers "
                              "(not the op computed another way, not a value of another index, "
                              "not an unwritten region); the first at index " +
                              std::to_string(open.front()) + repeats,
                          details});
  }
  r.findings = std::move(s.findings);
  return r;
}

}  // namespace leaky::tools

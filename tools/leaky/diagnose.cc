#include "diagnose.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "golden_data.h"
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

// "core 1 of 8, tile 3 of 4 (that core's tail tile)", and the same facts in
// `details` under `prefix`.
std::string Where(const Layout& plan, uint64_t index, json* details,
                  const std::string& prefix = "") {
  const Layout::Location at = plan.Locate(index);
  if (!at.inside) return "past the planned range";
  (*details)[prefix + "core"] = at.core;
  (*details)[prefix + "tile"] = at.tile;
  std::string where = "core " + std::to_string(at.core) + " of " + std::to_string(plan.cores()) +
                      ", tile " + std::to_string(at.tile) + " of " +
                      std::to_string(at.tiles_in_core);
  const bool tail_tile = at.tile + 1 == at.tiles_in_core;
  const bool last_core = at.core + 1 == plan.cores();
  if (tail_tile && last_core) where += " (the last core's tail tile)";
  else if (tail_tile) where += " (that core's tail tile)";
  if (index == at.tile_start) where += ", at the tile's first element";
  return where;
}

// What every detector reads, and which wrong elements earlier findings
// already explain: one fault gives one finding.
struct Evidence {
  const CheckInput& in;
  uint64_t n = 0;
  std::vector<uint64_t> wrong;      // outside the tolerance, ascending
  std::vector<uint64_t> zero_sign;  // -0 against +0 (in `wrong` too when strict)
  std::vector<char> explained;
  bool all_zero = false;

  bool NegativeSide(uint64_t i) const { return !(in.input.values[i] > 0); }
  // The value the slope multiplies: x forward, dy backward.
  double Base(uint64_t i) const { return in.backward ? in.dy.values[i] : in.input.values[i]; }
  bool IsNan(uint64_t i, const Array& a) const { return std::isnan(a.values[i]); }
  // Same value: equal bits, or both NaN (payloads may differ by device).
  static bool Same(const Array& a, uint64_t i, const Array& b, uint64_t j) {
    return a.bits[i] == b.bits[j] || (std::isnan(a.values[i]) && std::isnan(b.values[j]));
  }

  std::vector<uint64_t> Open() const {
    std::vector<uint64_t> open;
    for (uint64_t i : wrong) {
      if (!explained[i]) open.push_back(i);
    }
    return open;
  }
  void Explain(uint64_t begin, uint64_t end) {
    std::fill(explained.begin() + static_cast<long>(begin), explained.begin() + static_cast<long>(end), 1);
  }
  void Explain(const std::vector<uint64_t>& indices) {
    for (uint64_t i : indices) explained[i] = 1;
  }

  // Where a fault's extent begins, given its first wrong element and how
  // far back the output looks the same (zeros, or untouched input): the
  // plan's boundary (core, tile, or the even split's remainder) nearest the
  // first wrong element if one lies in between, else - where the look is
  // telling (zeros) - as far back as it goes. So a golden's own zeros do not
  // cut a fault apart or move its edge.
  uint64_t SnapStart(uint64_t first_wrong, uint64_t same_from, bool trust_run) const {
    if (in.plan) {
      for (uint64_t b = first_wrong + 1; b-- > same_from;) {
        if (IsBoundary(b)) return b;
      }
    }
    return trust_run ? same_from : first_wrong;
  }
  uint64_t SnapEnd(uint64_t end_wrong, uint64_t same_to) const {
    if (in.plan) {
      for (uint64_t b = end_wrong; b <= same_to; ++b) {
        if (IsBoundary(b)) return b;
      }
    }
    return same_to;
  }
  bool IsBoundary(uint64_t index) const {
    if (index == 0 || index == n) return true;
    const Layout& plan = *in.plan;
    if (plan.split == "even" && plan.cores() > 0 &&
        index == plan.core_start.back() + plan.total / plan.cores()) {
      return true;  // where the last core's remainder begins
    }
    const Layout::Location at = plan.Locate(index);
    return at.inside && at.tile_start == index;
  }
};

using Detector = std::optional<Finding> (*)(Evidence&);

// "in core 9 of 16, tile 0 of 1 ... through core 10, tile 0 of 1".
std::string Extent(const Evidence& e, uint64_t begin, uint64_t end, json* details) {
  (*details)["first"] = begin;
  (*details)["last"] = end - 1;
  std::string text = "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
  if (e.in.plan) {
    text += ", from " + Where(*e.in.plan, begin, details);
    json last;
    const std::string to = Where(*e.in.plan, end - 1, &last);
    if (last.value("core", -1) != details->value("core", -1) ||
        last.value("tile", -1) != details->value("tile", -1)) {
      text += " to " + to;
      (*details)["last_core"] = last["core"];
      (*details)["last_tile"] = last["tile"];
    }
  }
  return text;
}

// --- the output is all zeros
std::optional<Finding> AllZeros(Evidence& e) {
  if (!e.all_zero) return std::nullopt;
  e.Explain(0, e.n);
  return Finding{"all_zeros",
                 "the output is all zeros: the kernel computed on a buffer that was never "
                 "filled (data read before the copy-in finished: check the "
                 "synchronisation / queue pairing between copy-in, compute and copy-out), "
                 "or never wrote its result back",
                 json::object()};
}

// --- whole cores whose range still holds the initial buffer
std::optional<Finding> CoreUntouched(Evidence& e) {
  if (!e.in.plan || e.all_zero) return std::nullopt;
  const Layout& plan = *e.in.plan;
  const std::vector<uint64_t> open = e.Open();
  std::set<uint32_t> suspects;
  for (uint64_t i : open) suspects.insert(plan.Locate(i).core);
  json cores = json::array();
  std::string list, content;
  for (uint32_t core : suspects) {
    const uint64_t begin = plan.core_start[core], end = begin + plan.core_length[core];
    bool zeros = true, input = true, dy = e.in.backward;
    for (uint64_t i = begin; i < end; ++i) {
      zeros = zeros && e.in.output.values[i] == 0;
      input = input && e.in.output.bits[i] == e.in.input.bits[i];
      dy = dy && e.in.output.bits[i] == e.in.dy.bits[i];
    }
    if (!(zeros || input || dy)) continue;
    // Zeros that run on past the core's edges are a block, not this core.
    auto zeroed = [&](uint64_t i) {
      return e.in.output.values[i] == 0 && e.in.golden.values[i] != 0;
    };
    if (zeros && ((begin > 0 && zeroed(begin - 1)) || (end < e.n && zeroed(end)))) continue;
    e.Explain(begin, end);
    cores.push_back({{"core", core}, {"first", begin}, {"last", end - 1},
                     {"content", zeros ? "zeros" : input ? "input" : "dy"}});
    list += (list.empty() ? "" : ", ") + std::to_string(core) + " [" + std::to_string(begin) +
            ", " + std::to_string(end) + ")";
    content = zeros ? "zeros" : input ? "the input" : "dy";
  }
  if (cores.empty()) return std::nullopt;
  return Finding{"core_untouched",
                 "core" + std::string(cores.size() > 1 ? "s " : " ") + list + " of " +
                     std::to_string(plan.cores()) + " left untouched: the whole range still "
                     "holds " + content + " (the initial buffer). That core never ran its loop "
                     "or wrote elsewhere: its block index, offset or length came from the "
                     "wrong variable (e.g. a length shadowed and never set)",
                 {{"cores", cores}}};
}

// --- a correct prefix, then unprocessed from a point to the end
std::optional<Finding> TailNotProcessed(Evidence& e) {
  const CheckInput& in = e.in;
  const std::vector<uint64_t> open = e.Open();
  if (open.empty() || e.all_zero) return std::nullopt;
  const uint64_t k = open.front();
  if (k == 0) return std::nullopt;
  bool equals_input = true, zeros = true, constant = true;
  for (uint64_t i = k; i < e.n; ++i) {
    if (in.output.bits[i] != in.input.bits[i]) equals_input = false;
    if (in.output.values[i] != 0) zeros = false;
    if (in.output.bits[i] != in.output.bits[k]) constant = false;
  }
  const bool dense = (e.n - k) * 9 <= open.size() * 10;
  if (!(dense || equals_input || zeros || constant)) return std::nullopt;
  // Back from k while the output still looks unprocessed.
  auto same = [&](uint64_t i) {
    if (zeros) return in.output.values[i] == 0;
    if (equals_input) return in.output.bits[i] == in.input.bits[i];
    if (constant) return in.output.bits[i] == in.output.bits[k];
    return false;
  };
  uint64_t same_from = k;
  while (same_from > 0 && same(same_from - 1)) --same_from;
  const uint64_t start = e.SnapStart(k, same_from, zeros);
  std::string content = "garbage";
  if (zeros) content = "zeros";
  else if (equals_input) content = "untouched input (in-place: never written)";
  else if (constant) content = "one repeated value (the buffer's old fill)";
  json details = {{"index", start}, {"content", content}};
  std::string message = "correct up to index " + std::to_string(start) + ", then " + content +
                        " to the end: a tail or remainder was not processed";
  if (in.plan) message += "; index " + std::to_string(start) + " is in " + Where(*in.plan, start, &details);
  message += ". Usual cause: the loop bound or tail length (the last core's n % cores, or the "
             "last tile's short length) dropped";
  e.Explain(start, e.n);
  return Finding{"tail_not_processed", message, details};
}

// --- positives scaled by the slope too: y = slope * x everywhere
std::optional<Finding> SelectMissing(Evidence& e) {
  const double slope = e.in.negative_slope;
  const std::vector<uint64_t> open = e.Open();
  if (open.empty() || slope == 1) return std::nullopt;
  std::vector<uint64_t> scaled;
  for (uint64_t i : open) {
    if (e.NegativeSide(i)) continue;
    // slope * x rounded once, give or take the kernel's own rounding.
    const uint64_t expected = FromDouble(e.in.dtype, slope * e.Base(i));
    if (UlpDistance(e.in.dtype, expected, e.in.output.bits[i]) <= 1) scaled.push_back(i);
  }
  if (scaled.empty() || scaled.size() * 10 < open.size() * 9) return std::nullopt;
  e.Explain(scaled);
  return Finding{"select_missing",
                 std::to_string(scaled.size()) + " positive " +
                     (e.in.backward ? "gradients" : "inputs") + " came out multiplied by the "
                     "slope too (y = slope * x everywhere): the compare/select step is missing "
                     "(the article's listing has its Select commented out); compute mask = x > "
                     "0 and select x or slope * x",
                 {{"count", scaled.size()}, {"first", scaled.front()}}};
}

// --- only elements whose input is +0 or -0 differ
std::optional<Finding> CompareAtZero(Evidence& e) {
  const std::vector<uint64_t> open = e.Open();
  if (open.empty()) return std::nullopt;
  for (uint64_t i : open) {
    if (e.in.input.values[i] != 0) return std::nullopt;
  }
  e.Explain(open);
  for (uint64_t i : e.zero_sign) {
    if (e.in.input.values[i] == 0) e.explained[i] = 1;
  }
  return Finding{"compare_at_zero",
                 "only the " + std::to_string(open.size()) + " elements whose input is +0 or "
                     "-0 differ: the comparison at zero is `x >= 0` where the reference takes "
                     "`x > 0` (at x = 0 the " + (e.in.backward ? "gradient is dy * slope, not dy"
                                                               : "result is x * slope") + ")",
                 {{"count", open.size()}, {"first", open.front()}}};
}

// --- the slope rounded to the storage type before the multiply
std::optional<Finding> SlopeRounded(Evidence& e) {
  const CheckInput& in = e.in;
  if (in.dtype != LEAKY_F16 && in.dtype != LEAKY_BF16) return std::nullopt;
  const double slope = in.negative_slope;
  const double rounded = in.dtype == LEAKY_F16
                             ? static_cast<double>(static_cast<float>(float16(static_cast<float>(slope))))
                             : static_cast<double>(static_cast<float>(bfloat16(static_cast<float>(slope))));
  const std::vector<uint64_t> open = e.Open();
  if (open.empty() || rounded == slope) return std::nullopt;
  GoldenDescription d;
  d.dtype = in.dtype;
  d.op = in.backward ? "leaky_relu_backward" : "leaky_relu_forward";
  const std::vector<uint64_t> expected = ReferenceOutput(d, in.input.bits, in.dy.bits, rounded);
  std::vector<uint64_t> matched;
  for (uint64_t i : open) {
    if (in.output.bits[i] == expected[i]) matched.push_back(i);
  }
  if (matched.size() * 10 < open.size() * 9) return std::nullopt;
  e.Explain(matched);
  return Finding{"slope_rounded",
                 "the output is exactly what slope " + Number(rounded) + " gives: the slope " +
                     Number(slope) + " was rounded to " + DtypeName(in.dtype) +
                     " before the multiply. Keep it in f32 (the tiling data's float field) "
                     "and multiply in f32",
                 {{"rounded_slope", rounded}, {"expected_slope", slope}, {"count", matched.size()}}};
}

// --- tiny results flushed to zero, mostly on the negative side
std::optional<Finding> F16Underflow(Evidence& e) {
  const CheckInput& in = e.in;
  const std::vector<uint64_t> open = e.Open();
  std::vector<uint64_t> flushed;
  uint64_t flushed_negative = 0;
  for (uint64_t i : open) {
    const double g = in.golden.values[i];
    if (in.output.values[i] == 0 && g != 0 && std::fabs(g) < 2 * DtypeSmallestNormal(LEAKY_F16)) {
      flushed.push_back(i);
      if (e.NegativeSide(i)) ++flushed_negative;
    }
  }
  if (flushed_negative == 0 || flushed.size() * 10 < open.size() * 9) return std::nullopt;
  e.Explain(flushed);
  return Finding{
      "f16_underflow",
      std::to_string(flushed.size()) + " results came out as zero where the golden is a tiny "
      "number (below twice f16's smallest normal), " + std::to_string(flushed_negative) +
      " of them on the negative side: the slope multiply underflowed - it ran in f16 or with "
      "flush-to-zero (positive subnormals lost too means FTZ/DAZ is on). Widen to f32 with "
      "denormals enabled, multiply, then round once to the output type",
      {{"flushed", flushed.size()}, {"flushed_negative", flushed_negative}}};
}

// --- only the negative side wrong, by one consistent factor
std::optional<Finding> SlopeMismatch(Evidence& e) {
  const CheckInput& in = e.in;
  const std::vector<uint64_t> open = e.Open();
  if (open.empty()) return std::nullopt;
  std::vector<double> ratios;
  for (uint64_t i : open) {
    if (!e.NegativeSide(i)) return std::nullopt;
    const double base = e.Base(i), out = in.output.values[i];
    if (std::isfinite(base) && base != 0 && std::isfinite(out)) ratios.push_back(out / base);
  }
  if (ratios.empty()) return std::nullopt;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<long>(ratios.size() / 2),
                   ratios.end());
  const double slope = ratios[ratios.size() / 2];
  const double scale = std::max(std::fabs(slope), 1e-3);
  const auto consistent = std::count_if(ratios.begin(), ratios.end(), [&](double v) {
    return std::fabs(v - slope) <= 0.02 * scale;
  });
  if (static_cast<uint64_t>(consistent) * 10 < ratios.size() * 8) return std::nullopt;
  std::string cause =
      "the slope did not reach the kernel (host and kernel disagree on the tiling-data "
      "layout, or the scalar argument was not passed/converted)";
  if (std::fabs(slope) < 1e-6) {
    cause = "negatives became zero, as a plain ReLU: the negative branch returns 0 or the "
            "slope field read as 0 (a tiling-data layout mismatch)";
  } else if (std::fabs(slope - 1) < 1e-3) {
    cause = "negatives passed through unchanged: the negative branch returns x, or the slope "
            "read as 1";
  }
  e.Explain(open);
  // The same fault flips the sign of zero results on the negative side.
  for (uint64_t i : e.zero_sign) {
    if (e.NegativeSide(i)) e.explained[i] = 1;
  }
  return Finding{"slope_mismatch",
                 "only the negative side is wrong, consistent with slope " +
                     Number(std::fabs(slope) < 1e-6 ? 0 : slope) + " instead of " +
                     Number(in.negative_slope) + ": " + cause,
                 {{"estimated_slope", std::fabs(slope) < 1e-6 ? 0 : slope},
                  {"expected_slope", in.negative_slope}}};
}

// --- errors concentrated at the start or the end of each core's range
std::optional<Finding> CoreEdge(Evidence& e) {
  if (!e.in.plan) return std::nullopt;
  const Layout& plan = *e.in.plan;
  const std::vector<uint64_t> open = e.Open();
  if (open.size() < 2) return std::nullopt;
  std::vector<uint64_t> at_start, at_end;
  std::set<uint32_t> start_cores, end_cores;
  uint64_t start_width = 0, end_width = 0, shortest = UINT64_MAX;
  for (uint32_t core = 0; core < plan.cores(); ++core) {
    if (plan.core_length[core] > 0) shortest = std::min(shortest, plan.core_length[core]);
  }
  for (uint64_t i : open) {
    const Layout::Location at = plan.Locate(i);
    if (!at.inside) return std::nullopt;
    const uint64_t offset = i - at.core_start, from_end = at.core_start + at.core_length - 1 - i;
    if (offset <= from_end) {
      at_start.push_back(i);
      start_cores.insert(at.core);
      start_width = std::max(start_width, offset + 1);
    } else {
      at_end.push_back(i);
      end_cores.insert(at.core);
      end_width = std::max(end_width, from_end + 1);
    }
  }
  const bool starts = at_start.size() * 10 >= open.size() * 9 && start_cores.size() >= 2 &&
                      start_width * 4 <= shortest;
  const bool ends = at_end.size() * 10 >= open.size() * 9 && end_cores.size() >= 2 &&
                    end_width * 4 <= shortest;
  if (!starts && !ends) return std::nullopt;
  const std::vector<uint64_t>& hit = starts ? at_start : at_end;
  const std::set<uint32_t>& cores = starts ? start_cores : end_cores;
  const uint64_t width = starts ? start_width : end_width;
  std::string list;
  for (uint32_t core : cores) list += (list.empty() ? "" : ", ") + std::to_string(core);
  e.Explain(hit);
  for (uint64_t i : e.zero_sign) {  // the same fault's zeros of the other sign
    const Layout::Location at = plan.Locate(i);
    const uint64_t offset = i - at.core_start, from_end = at.core_start + at.core_length - 1 - i;
    if (at.inside && cores.count(at.core) && (starts ? offset < width : from_end < width)) {
      e.explained[i] = 1;
    }
  }
  return Finding{"core_edge",
                 std::to_string(hit.size()) + " errors, all within the " +
                     (starts ? "first " : "last ") + std::to_string(width) +
                     " elements of cores " + list + " (of " + std::to_string(plan.cores()) +
                     ", " + plan.split + " split): each core's " + (starts ? "start" : "end") +
                     " is off - a per-core offset or length computed with the wrong step (host "
                     "and kernel splitting differently, the last core's step used for all), "
                     "or a length variable shadowed and never set",
                 {{"edge", starts ? "start" : "end"}, {"width", width},
                  {"cores", std::vector<uint32_t>(cores.begin(), cores.end())},
                  {"count", hit.size()}}};
}

// --- tiles holding another tile's data: an earlier tile's output (a buffer
// reused before its copy-out finished, or computed before its copy-in) or
// the next tile's (a copy-in landed in the buffer being computed)
struct TileMixup {
  std::vector<std::pair<uint32_t, uint64_t>> tiles;  // (core, tile)
  std::vector<uint64_t> hit;
};

template <class SameAs>
TileMixup FindTiles(const Evidence& e, const std::vector<uint64_t>& open, SameAs same_as) {
  const Layout& plan = *e.in.plan;
  std::set<std::pair<uint32_t, uint64_t>> suspects;
  for (uint64_t i : open) {
    const Layout::Location at = plan.Locate(i);
    if (at.inside) suspects.insert({at.core, at.tile});
  }
  TileMixup found;
  for (const auto& [core, tile] : suspects) {
    uint64_t start, length;
    plan.TileRange(core, tile, &start, &length);
    bool zeros = true;
    for (uint64_t j = 0; j < length && zeros; ++j) zeros = e.in.output.values[start + j] == 0;
    if (zeros || !same_as(core, tile, start, length)) continue;  // all zeros: a zero block
    found.tiles.emplace_back(core, tile);
    for (uint64_t i = start; i < start + length; ++i) {
      if (!e.explained[i]) found.hit.push_back(i);
    }
  }
  return found;
}

std::optional<Finding> TileFinding(Evidence& e, const TileMixup& found, const char* kind,
                                   const std::string& what) {
  // Whole tiles equal, bit for bit, to another tile's data: evidence enough
  // on its own, whatever else is wrong elsewhere.
  if (found.tiles.empty()) return std::nullopt;
  e.Explain(found.hit);
  json tiles = json::array();
  for (const auto& [core, tile] : found.tiles) tiles.push_back({{"core", core}, {"tile", tile}});
  return Finding{kind,
                 std::to_string(found.tiles.size()) + " tile(s) hold " + what + ", the first core " +
                     std::to_string(found.tiles.front().first) + " tile " +
                     std::to_string(found.tiles.front().second),
                 {{"tiles", tiles}}};
}

std::optional<Finding> StaleTile(Evidence& e) {
  if (!e.in.plan) return std::nullopt;
  const Layout& plan = *e.in.plan;
  const std::vector<uint64_t> open = e.Open();
  if (open.empty()) return std::nullopt;
  const uint64_t back = std::max<uint32_t>(1, plan.buffers);
  const TileMixup found = FindTiles(e, open, [&](uint32_t core, uint64_t tile, uint64_t start,
                                                 uint64_t length) {
    for (uint64_t k = 1; k <= back && k <= tile; ++k) {
      uint64_t earlier, earlier_length;
      plan.TileRange(core, tile - k, &earlier, &earlier_length);
      // The earlier tile's output as written, or as it should have been
      // (the data this tile's compute found in the buffer).
      for (const Array* earlier_data : {&e.in.output, &e.in.golden}) {
        bool same = length <= earlier_length;
        for (uint64_t j = 0; same && j < length; ++j) {
          same = Evidence::Same(e.in.output, start + j, *earlier_data, earlier + j);
        }
        if (same) return true;
      }
    }
    return false;
  });
  return TileFinding(e, found, "stale_tile",
                     "an earlier tile's output (up to " + std::to_string(back) +
                         " back): a buffer was reused before its copy-out finished, or computed "
                         "on before its copy-in arrived (wait on the in-queue before the "
                         "compute; free a buffer only after its copy-out)");
}

std::optional<Finding> OverwrittenTile(Evidence& e) {
  if (!e.in.plan) return std::nullopt;
  const Layout& plan = *e.in.plan;
  const std::vector<uint64_t> open = e.Open();
  if (open.empty()) return std::nullopt;
  const TileMixup found = FindTiles(e, open, [&](uint32_t core, uint64_t tile, uint64_t start,
                                                 uint64_t length) {
    if (tile + 1 >= plan.TileCount(core)) return false;
    uint64_t next, next_length;
    plan.TileRange(core, tile + 1, &next, &next_length);
    const uint64_t common = std::min(length, next_length);
    for (uint64_t j = 0; j < common; ++j) {
      if (!Evidence::Same(e.in.output, start + j, e.in.golden, next + j)) return false;
    }
    return true;
  });
  return TileFinding(e, found, "overwritten_tile",
                     "the next tile's result: its copy-in landed in the buffer this tile was "
                     "computed from (a prefetch with a single buffer, or the slot index of the "
                     "double buffer wrong)");
}

// --- runs of errors at a regular stride: a wrong offset per tile or core
std::optional<Finding> Periodic(Evidence& e) {
  const CheckInput& in = e.in;
  const std::vector<uint64_t> open = e.Open();
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [start, end)
  // Runs a few elements apart are one (the golden's infinities and NaNs
  // can be right by accident inside a faulty run).
  constexpr uint64_t kJoin = 16;
  for (uint64_t i : open) {
    if (!runs.empty() && i - runs.back().second <= kJoin) {
      runs.back().second = i + 1;
    } else {
      runs.emplace_back(i, i + 1);
    }
  }
  if (runs.size() < 3) return std::nullopt;
  // The period: the commonest gap between run starts, counting gaps within
  // kJoin of it (a run may start a little late where its first elements
  // were right by accident).
  std::vector<uint64_t> gaps;
  for (size_t j = 1; j < runs.size(); ++j) gaps.push_back(runs[j].first - runs[j - 1].first);
  std::map<uint64_t, uint64_t> counts;
  for (uint64_t g : gaps) counts[g]++;
  uint64_t period = 0, best = 0;
  for (const auto& [g, count] : counts) {
    if (count > best) {
      best = count;
      period = g;
    }
  }
  const auto near = std::count_if(gaps.begin(), gaps.end(), [&](uint64_t g) {
    return g + kJoin >= period && g <= period + kJoin;
  });
  if (static_cast<uint64_t>(near) * 10 < gaps.size() * 8) return std::nullopt;
  json details = {{"period", period}, {"runs", runs.size()},
                  {"run_length", runs.front().second - runs.front().first}};
  std::string message = "errors repeat every " + std::to_string(period) + " elements (" +
                        std::to_string(runs.size()) + " runs, the first at " +
                        std::to_string(runs.front().first) + ")";
  if (in.plan) {
    const uint64_t per_core = in.plan->core_length.empty() ? 0 : in.plan->core_length.front();
    if (period == in.plan->tile_length) {
      message += ": the plan's tile length - a wrong offset per tile (tile index times tile "
                 "length, or the tail tile's length used as the stride)";
      details["stride"] = "tile";
    } else if (period == per_core) {
      message += ": one core's share - a wrong offset per core (block index times the "
                 "core length)";
      details["stride"] = "core";
    } else {
      message += ": not the plan's tile (" + std::to_string(in.plan->tile_length) +
                 ") or core length; look for a fixed-size buffer or vector stride";
    }
  } else {
    message += ": a wrong offset per tile or per core; pass the plan options to map it";
  }
  e.Explain(open);
  return Finding{"periodic", message, details};
}

// --- blocks of zeros, each located by its extent
std::optional<Finding> ZeroBlocks(Evidence& e) {
  const CheckInput& in = e.in;
  if (e.all_zero) return std::nullopt;
  const std::vector<uint64_t> open = e.Open();
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // first and last wrong zero
  for (uint64_t i : open) {
    if (in.output.values[i] != 0) continue;
    bool joined = false;
    if (!blocks.empty()) {
      joined = true;
      for (uint64_t j = blocks.back().second + 1; j < i && joined; ++j) {
        joined = in.output.values[j] == 0;
      }
    }
    if (joined) blocks.back().second = i;
    else blocks.emplace_back(i, i);
  }
  json list = json::array();
  std::string text;
  for (const auto& [first, last] : blocks) {
    if (last - first + 1 < 8) continue;
    uint64_t same_from = first, same_to = last + 1;
    while (same_from > 0 && in.output.values[same_from - 1] == 0) --same_from;
    while (same_to < e.n && in.output.values[same_to] == 0) ++same_to;
    const uint64_t begin = e.SnapStart(first, same_from, true), end = e.SnapEnd(last + 1, same_to);
    json details;
    const std::string where = Extent(e, begin, end, &details);
    details["length"] = end - begin;
    list.push_back(details);
    if (list.size() <= 4) {
      text += (text.empty() ? "" : "; ") + std::to_string(end - begin) + " zeros at " + where;
    }
    e.Explain(begin, end);
  }
  if (list.empty()) return std::nullopt;
  if (list.size() > 4) text += "; and " + std::to_string(list.size() - 4) + " more";
  return Finding{"zero_block",
                 text + ": read before the copy into the buffer finished (missing wait / "
                        "queue pairing), or never computed",
                 {{"blocks", list}}};
}

std::optional<Finding> UnexpectedNan(Evidence& e) {
  std::vector<uint64_t> found;
  for (uint64_t i : e.Open()) {
    if (e.IsNan(i, e.in.output) && !e.IsNan(i, e.in.golden)) found.push_back(i);
  }
  if (found.empty()) return std::nullopt;
  e.Explain(found);
  return Finding{"unexpected_nan",
                 std::to_string(found.size()) +
                     " NaN outputs where the golden is a number: uninitialised memory, "
                     "or 0 * inf / inf - inf in a rewritten formula",
                 {{"count", found.size()}, {"first", found.front()}}};
}

std::optional<Finding> LostNan(Evidence& e) {
  std::vector<uint64_t> found;
  for (uint64_t i : e.Open()) {
    if (!e.IsNan(i, e.in.output) && e.IsNan(i, e.in.golden)) found.push_back(i);
  }
  if (found.empty()) return std::nullopt;
  e.Explain(found);
  return Finding{"lost_nan",
                 std::to_string(found.size()) +
                     " NaN inputs did not give NaN: a max/min-based formula or a "
                     "compare that treats NaN as negative/zero drops it",
                 {{"count", found.size()}, {"first", found.front()}}};
}

// -0 against +0: not a failure unless --strict-zero-sign.
std::optional<Finding> ZeroSign(Evidence& e) {
  if (e.zero_sign.empty()) return std::nullopt;
  uint64_t open = 0;
  for (uint64_t i : e.zero_sign) open += !e.explained[i];
  if (open == 0) return std::nullopt;
  e.Explain(e.zero_sign);
  return Finding{"zero_sign",
                 std::to_string(e.zero_sign.size()) + " zeros have the other sign (-0 against "
                     "+0), the first at " + std::to_string(e.zero_sign.front()) +
                     (e.in.strict_zero_sign
                          ? ": counted as mismatches (--strict-zero-sign)"
                          : ": not counted as mismatches (--strict-zero-sign counts them)") +
                     ". Usual cause: a zero constant selected instead of x * slope, or a "
                     "max(x, 0)-style formula",
                 {{"count", e.zero_sign.size()}, {"first", e.zero_sign.front()}}};
}

// Most specific first (kFindingKinds); each explains the elements it
// accounts for, and later ones look only at what is left.
constexpr Detector kDetectors[] = {AllZeros,       CoreUntouched, StaleTile,     OverwrittenTile,
                                   TailNotProcessed, SelectMissing, CompareAtZero, SlopeRounded,
                                   F16Underflow,   SlopeMismatch, CoreEdge,      ZeroBlocks,
                                   Periodic,       UnexpectedNan, LostNan,       ZeroSign};

bool IsZero(leaky_dtype dtype, uint64_t bits) {
  const uint64_t sign = uint64_t{1} << (DtypeBytes(dtype) * 8 - 1);
  return (bits & ~sign) == 0;
}

}  // namespace

CheckResult Diagnose(const CheckInput& in) {
  CheckResult r;
  const uint64_t n = in.golden.bits.size();
  r.elements = n;
  Evidence e{in, n, {}, {}, {}, false};
  e.explained.assign(n, 0);
  for (uint64_t i = 0; i < n; ++i) {
    const bool out_nan = std::isnan(in.output.values[i]);
    const bool gold_nan = std::isnan(in.golden.values[i]);
    if (out_nan || gold_nan) {
      if (out_nan != gold_nan) e.wrong.push_back(i);
      continue;
    }
    if (in.output.bits[i] != in.golden.bits[i] && IsZero(in.dtype, in.output.bits[i]) &&
        IsZero(in.dtype, in.golden.bits[i])) {
      e.zero_sign.push_back(i);
      if (in.strict_zero_sign) e.wrong.push_back(i);
      continue;
    }
    const uint64_t ulp = UlpDistance(in.dtype, in.golden.bits[i], in.output.bits[i]);
    r.max_ulp = std::max(r.max_ulp, ulp);
    const double abs_error = std::fabs(in.output.values[i] - in.golden.values[i]);
    if (std::isfinite(abs_error)) {
      r.max_abs_error = std::max(r.max_abs_error, abs_error);
      if (in.golden.values[i] != 0) {
        r.max_rel_error = std::max(r.max_rel_error, abs_error / std::fabs(in.golden.values[i]));
      }
    }
    if (ulp > in.max_ulp) e.wrong.push_back(i);
  }
  r.mismatches = e.wrong.size();
  r.zero_sign_differences = e.zero_sign.size();
  r.pass = e.wrong.empty();
  if (r.pass && e.zero_sign.empty()) return r;
  if (!e.wrong.empty()) r.first_mismatch = static_cast<int64_t>(e.wrong.front());
  e.all_zero = !e.wrong.empty() && std::all_of(in.output.values.begin(), in.output.values.end(),
                                               [](double v) { return v == 0; });
  for (Detector detect : kDetectors) {
    if (std::optional<Finding> finding = detect(e)) r.findings.push_back(*finding);
  }
  const std::vector<uint64_t> open = e.Open();
  if (!open.empty()) {
    r.findings.push_back({"mismatch",
                          std::to_string(open.size()) + " mismatches with no known fingerprint; "
                              "the first at index " + std::to_string(open.front()),
                          {{"index", open.front()}, {"count", open.size()}}});
  }
  return r;
}

}  // namespace leaky::tools

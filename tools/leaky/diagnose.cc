#include "diagnose.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "plan_options.h"

namespace leaky::tools {

using json = nlohmann::json;

uint64_t DefaultMaxUlp(leaky_dtype dtype) {
  return dtype == LEAKY_F16 || dtype == LEAKY_BF16 ? 1 : 0;
}

json CheckResult::ToJson() const {
  json findings_json = json::array();
  for (const Finding& f : findings) {
    findings_json.push_back({{"kind", f.kind}, {"message", f.message}, {"details", f.details}});
  }
  return {{"pass", pass},
          {"elements", elements},
          {"mismatches", mismatches},
          {"first_mismatch", first_mismatch},
          {"max_ulp", max_ulp},
          {"max_abs_error", max_abs_error},
          {"max_rel_error", max_rel_error},
          {"findings", findings_json}};
}

namespace {

// "core 1 of 2, tile 3 of 4 (the core's tail tile; the last core)".
std::string Where(const leaky_tiling& plan, uint64_t index, json* details) {
  const PlanLocation at = Locate(plan, index);
  if (at.core >= plan.cores_used) return "past the planned range";
  (*details)["core"] = at.core;
  (*details)["tile"] = at.tile;
  (*details)["tile_start"] = at.tile_start;
  std::string where = "core " + std::to_string(at.core) + " of " +
                      std::to_string(plan.cores_used) + ", tile " + std::to_string(at.tile) +
                      " of " + std::to_string(at.tiles_in_core);
  const bool tail_tile = at.tile + 1 == at.tiles_in_core;
  const bool last_core = at.core + 1 == plan.cores_used;
  if (tail_tile && last_core) where += " (the last core's remainder / tail tile)";
  else if (tail_tile) where += " (that core's tail tile)";
  if (index == at.tile_start) where += ", exactly at the tile's first element";
  return where;
}

// What every detector reads: the comparison's outcome.
struct Evidence {
  const CheckInput& in;
  uint64_t n;
  std::vector<uint64_t> wrong;  // indices outside the tolerance, ascending
  uint64_t unexpected_nan = 0, lost_nan = 0;
  bool all_zero = false;
  // The "negative side" is where the saved input is not positive.
  bool NegativeSide(uint64_t i) const { return !(in.input.values[i] > 0); }
};

using Findings = std::vector<Finding>;

// --- the output is all zeros
std::optional<Finding> AllZeros(const Evidence& e, const Findings&) {
  if (!e.all_zero) return std::nullopt;
  return Finding{"all_zeros",
                 "the output is all zeros: the kernel computed on a buffer that was never "
                 "filled (data read before the copy-in finished: check the "
                 "synchronisation / queue pairing between copy-in, compute and copy-out), "
                 "or never wrote its result back",
                 json::object()};
}

// --- tiny results flushed to zero, mostly on the negative side
std::optional<Finding> F16Underflow(const Evidence& e, const Findings&) {
  const CheckInput& in = e.in;
  uint64_t flushed = 0, flushed_negative = 0;
  for (uint64_t i : e.wrong) {
    const double g = in.golden.values[i];
    if (in.output.values[i] == 0 && g != 0 && std::fabs(g) < 2 * DtypeSmallestNormal(LEAKY_F16)) {
      ++flushed;
      if (e.NegativeSide(i)) ++flushed_negative;
    }
  }
  if (e.all_zero || flushed_negative == 0 || flushed * 10 < e.wrong.size() * 9) return std::nullopt;
  return Finding{
      "f16_underflow",
      std::to_string(flushed) + " results came out as zero where the golden is a tiny number "
      "(below twice f16's smallest normal), " + std::to_string(flushed_negative) +
      " of them on the negative side: the slope multiply underflowed - it ran in f16 or with "
      "flush-to-zero (positive subnormals lost too means FTZ/DAZ is on). Widen to f32 with "
      "denormals enabled, multiply, then round once to the output type",
      {{"flushed", flushed}, {"flushed_negative", flushed_negative}}};
}

// --- a correct prefix, then wrong from the first mismatch to the end. The
// suffix looks unprocessed when nearly all of it is wrong, or when it is
// still the input (an in-place kernel that never wrote it; positive inputs
// are then right by accident), zeros, or one repeated fill value.
std::optional<Finding> TailNotProcessed(const Evidence& e, const Findings& found) {
  const CheckInput& in = e.in;
  const uint64_t k = e.wrong.front();
  if (e.all_zero || !found.empty() || k == 0) return std::nullopt;
  bool equals_input = true, zeros = true, constant = true;
  for (uint64_t i = k; i < e.n; ++i) {
    if (in.output.bits[i] != in.input.bits[i]) equals_input = false;
    if (in.output.values[i] != 0) zeros = false;
    if (in.output.bits[i] != in.output.bits[k]) constant = false;
  }
  const bool dense = (e.n - k) * 9 <= e.wrong.size() * 10;
  if (!(dense || equals_input || zeros || constant)) return std::nullopt;
  std::string content = "garbage";
  if (zeros) content = "zeros";
  else if (equals_input) content = "untouched input (in-place: never written)";
  else if (constant) content = "one repeated value (the buffer's old fill)";
  json details = {{"index", k}, {"content", content}};
  std::string message = "correct up to index " + std::to_string(k) + ", then " + content +
                        " to the end: a tail or remainder was not processed";
  if (in.plan) message += "; index " + std::to_string(k) + " is in " + Where(*in.plan, k, &details);
  message += ". Check the loop bound / tail handling (and the last core's share)";
  return Finding{"tail_not_processed", message, details};
}

// --- only the negative side wrong, by one consistent factor
std::optional<Finding> SlopeMismatch(const Evidence& e, const Findings& found) {
  const CheckInput& in = e.in;
  if (e.all_zero || !found.empty()) return std::nullopt;
  std::vector<double> ratios;
  for (uint64_t i : e.wrong) {
    if (!e.NegativeSide(i)) return std::nullopt;
    const double base = in.backward ? in.dy.values[i] : in.input.values[i];
    const double out = in.output.values[i];
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
  char text[256];
  std::snprintf(text, sizeof(text),
                "only the negative side is wrong, consistent with slope %.6g instead of "
                "%.6g: the slope did not reach the kernel (host and kernel disagree on the "
                "tiling-data layout, or the scalar argument was not passed/converted)",
                slope, in.negative_slope);
  return Finding{"slope_mismatch", text,
                 {{"estimated_slope", slope}, {"expected_slope", in.negative_slope}}};
}

// --- runs of errors at a regular stride: a wrong offset per tile or core
std::optional<Finding> Periodic(const Evidence& e, const Findings& found) {
  const CheckInput& in = e.in;
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [start, end)
  for (uint64_t i : e.wrong) {
    if (!runs.empty() && runs.back().second == i) {
      runs.back().second = i + 1;
    } else {
      runs.emplace_back(i, i + 1);
    }
  }
  if (runs.size() < 3 || !found.empty()) return std::nullopt;
  std::map<uint64_t, uint64_t> gaps;
  for (size_t j = 1; j < runs.size(); ++j) gaps[runs[j].first - runs[j - 1].first]++;
  const auto mode = std::max_element(gaps.begin(), gaps.end(), [](auto& a, auto& b) {
    return a.second < b.second;
  });
  if (mode->second * 10 < (runs.size() - 1) * 8) return std::nullopt;
  const uint64_t period = mode->first;
  json details = {{"period", period}, {"runs", runs.size()},
                  {"run_length", runs.front().second - runs.front().first}};
  std::string message = "errors repeat every " + std::to_string(period) + " elements (" +
                        std::to_string(runs.size()) + " runs, the first at " +
                        std::to_string(runs.front().first) + ")";
  if (in.plan) {
    const uint64_t per_core = in.plan->granules_per_core * in.plan->granule_length;
    if (period == in.plan->tile_length) {
      message += ": the plan's tile length - a wrong offset per tile (tile index times tile "
                 "length, or the tail tile's length used as the stride)";
      details["stride"] = "tile";
    } else if (period == per_core) {
      message += ": one core's share - a wrong offset per core (block index times the "
                 "core length)";
      details["stride"] = "core";
    } else {
      message += ": not a multiple of the plan's tile (" + std::to_string(in.plan->tile_length) +
                 ") or core length; look for a fixed-size buffer or vector stride";
    }
  } else {
    message += ": a wrong offset per tile or per core; pass the plan options to map it";
  }
  return Finding{"periodic", message, details};
}

// --- the longest run of zeros among the wrong elements
std::optional<Finding> ZeroBlock(const Evidence& e, const Findings&) {
  const CheckInput& in = e.in;
  if (e.all_zero) return std::nullopt;
  uint64_t best_start = 0, best_length = 0, start = 0, length = 0;
  for (uint64_t i : e.wrong) {
    if (in.output.values[i] == 0 && length > 0 && start + length == i) {
      ++length;
    } else if (in.output.values[i] == 0) {
      start = i;
      length = 1;
    } else {
      length = 0;
    }
    if (length > best_length) {
      best_length = length;
      best_start = start;
    }
  }
  if (best_length < 8) return std::nullopt;
  json details = {{"start", best_start}, {"length", best_length}};
  std::string message = "a block of " + std::to_string(best_length) + " zeros at [" +
                        std::to_string(best_start) + ", " +
                        std::to_string(best_start + best_length) +
                        "): that part was read before its copy into the buffer finished "
                        "(missing wait / queue pairing)";
  if (in.plan) message += "; it starts in " + Where(*in.plan, best_start, &details);
  return Finding{"zero_block", message, details};
}

std::optional<Finding> UnexpectedNan(const Evidence& e, const Findings&) {
  if (e.unexpected_nan == 0) return std::nullopt;
  return Finding{"unexpected_nan",
                 std::to_string(e.unexpected_nan) +
                     " NaN outputs where the golden is a number: uninitialised memory, "
                     "or 0 * inf / inf - inf in a rewritten formula",
                 {{"count", e.unexpected_nan}}};
}

std::optional<Finding> LostNan(const Evidence& e, const Findings&) {
  if (e.lost_nan == 0) return std::nullopt;
  return Finding{"lost_nan",
                 std::to_string(e.lost_nan) +
                     " NaN inputs did not give NaN: a max/min-based formula or a "
                     "compare that treats NaN as negative/zero drops it",
                 {{"count", e.lost_nan}}};
}

// The detectors, most specific first; each sees what the earlier ones found
// (several only speak when nothing more specific did).
using Detector = std::optional<Finding> (*)(const Evidence&, const Findings&);
constexpr Detector kDetectors[] = {AllZeros,      F16Underflow, TailNotProcessed, SlopeMismatch,
                                   Periodic,      ZeroBlock,    UnexpectedNan,    LostNan};

}  // namespace

CheckResult Diagnose(const CheckInput& in) {
  CheckResult r;
  const uint64_t n = in.golden.bits.size();
  r.elements = n;
  Evidence e{in, n, {}};
  for (uint64_t i = 0; i < n; ++i) {
    const bool out_nan = std::isnan(in.output.values[i]);
    const bool gold_nan = std::isnan(in.golden.values[i]);
    if (out_nan || gold_nan) {
      if (out_nan != gold_nan) {
        e.wrong.push_back(i);
        (out_nan ? e.unexpected_nan : e.lost_nan)++;
      }
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
  r.pass = e.wrong.empty();
  if (r.pass) return r;
  r.first_mismatch = static_cast<int64_t>(e.wrong.front());
  e.all_zero = std::all_of(in.output.values.begin(), in.output.values.end(),
                           [](double v) { return v == 0; });
  for (Detector detect : kDetectors) {
    if (std::optional<Finding> finding = detect(e, r.findings)) r.findings.push_back(*finding);
  }
  if (r.findings.empty()) {
    const uint64_t k = e.wrong.front();
    r.findings.push_back({"mismatch",
                          "no known fingerprint; the first mismatch is at index " +
                              std::to_string(k),
                          {{"index", k}}});
  }
  return r;
}

}  // namespace leaky::tools

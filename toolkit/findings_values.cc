// The detectors of the op computed another way (explain_values): the
// model that predicts the wrong elements, as one finding; and, after the
// places, a negative side near one slope that no model gives exactly.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "findings.h"

namespace leaky::tools {

using json = nlohmann::json;

namespace {

using Kind = ReportedKind<FindingDetector::kValues>;

std::string Number(double v) {
  if (v == 0) return "0";  // never "-0" in a message
  char text[64];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

std::string SmallestNormal(leaky_dtype t) {
  return std::string(DtypeName(t)) + "'s smallest normal " + Number(DtypeSmallestNormal(t));
}

Finding ValueFinding(const Analysis& s, const ValueExplanation& v) {
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
      return {Kind("f16_underflow"),
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
      return {Kind("flush_inputs"),
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
    return {Kind("flush_results"),
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
    return {Kind("rounding_mode"),
            count + " results, every one exactly 1 ulp " + (tz ? "toward zero" : "away from zero") +
                " from the golden on both signs wherever the product is inexact: " + where +
                " where the op rounds to nearest even. " +
                (in.allow_rounding ? "Accepted (--allow-rounding)."
                                   : "--max-ulp does not hide a rounding mode; --allow-rounding "
                                     "accepts it."),
            details};
  }
  if (m.gate == M::Gate::kNone) {
    return {Kind("select_missing"),
            count + " positive " + what +
                " came out multiplied by the slope too (y = slope * x "
                "everywhere): the compare/select step is missing (the article's listing has "
                "its Select commented out); compute mask = x > 0 and select x or slope * x",
            details};
  }
  if (m.gate == M::Gate::kSwapped) {
    return {Kind("select_swapped"),
            count +
                " elements have the branches swapped: positives scaled by the slope, "
                "negatives passed through (y = x > 0 ? slope * x : x) - what max(x, slope * "
                "x) computes when the slope is above 1 (the max/min trick holds only for "
                "slopes in [0, 1]); select on x > 0",
            details};
  }
  if (m.gate == M::Gate::kGreaterEqual) {
    return {Kind("compare_at_zero"),
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
    return {Kind("half_arithmetic"),
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
    return {half_data ? Kind("ambiguous") : Kind("slope_rounded"),
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
  return {Kind("slope_mismatch"),
          "only the negative side is wrong, exactly as slope " + Number(m.slope_value) +
              " instead of " + Number(in.negative_slope) + " gives: " + cause,
          details};
}

}  // namespace

void FindValues(Analysis& s) {
  if (s.in.eight_bit) return;  // findings_eight_bit.cc's models
  // The op computed another way - unless what it explains lies mostly
  // inside regions that hold something else (a block of zeros also
  // "flushes" the tiny results inside it).
  const std::optional<ValueExplanation> v = ExplainValues(s.values, s.differing);
  if (!v) return;
  const PlaceExplanation regions = s.PlacesOf(s.differing);
  std::vector<char> in_region(s.n, 0);
  for (uint64_t i : regions.explained) in_region[i] = 1;
  const auto inside = std::count_if(v->explained.begin(), v->explained.end(),
                                    [&](uint64_t i) { return in_region[i]; });
  if (static_cast<uint64_t>(inside) * 2 >= v->explained.size()) return;
  const bool rounding = v->model.rounding != ValueModel::Rounding::kNearestEven;
  const bool counts = !rounding || !s.in.allow_rounding;
  if (rounding && counts && v->rounded >= 4) s.fails_anyway = true;  // never hidden by --max-ulp
  if (rounding && v->rounded < 4) return;
  s.findings.push_back(ValueFinding(s, *v));
  s.Explain(v->explained);
  for (uint64_t i : s.zero_sign) {  // the same model's zeros of the other sign
    if (Predict(s.values, v->model, i) == s.in.output.bits[i]) s.explained[i] = 1;
  }
}

// What the value models miss: only negative-side elements wrong, near one
// slope but not exactly (the slope computed another way too).
void FindApproximateSlope(Analysis& s) {
  using SlopeKind = ReportedKind<FindingDetector::kApproximateSlope>;
  const CheckInput& in = s.in;
  const std::vector<uint64_t> open = s.Open();
  if (open.empty() || in.eight_bit) return;
  std::vector<double> ratios;
  for (uint64_t i : open) {
    if (!s.NegativeSide(i)) return;
    const double base = s.Base(i), out = in.output.values[i];
    if (std::isfinite(base) && base != 0 && std::isfinite(out)) ratios.push_back(out / base);
  }
  if (ratios.size() < 8) return;  // a few elements say nothing of a slope
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<long>(ratios.size() / 2),
                   ratios.end());
  const double slope = ratios[ratios.size() / 2];
  const double scale = std::max(std::fabs(slope), 1e-3);
  const auto consistent = std::count_if(
      ratios.begin(), ratios.end(), [&](double v) { return std::fabs(v - slope) <= 0.02 * scale; });
  if (static_cast<uint64_t>(consistent) * 10 < ratios.size() * 8) return;
  s.Explain(open);
  s.findings.push_back({SlopeKind("slope_mismatch"),
                        "only the negative side is wrong, close to slope " + Number(slope) +
                            " instead of " + Number(in.negative_slope) +
                            " (not exactly any slope: computed another way too): the slope did "
                            "not reach the kernel as given",
                        {{"estimated_slope", slope}, {"expected_slope", in.negative_slope}}});
}

}  // namespace leaky::tools

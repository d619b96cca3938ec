// The detectors of the op computed another way (explain_values): the
// model that predicts the wrong elements, as one finding; and, after the
// places, a negative side near one slope that no model gives exactly.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "findings.h"

namespace leaky::toolkit {

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

// How a wrong slope relates to the right one, in words, or "". `near`: a
// relative tolerance for a slope estimated from ratios (x / slope is not
// exactly x * (1 / slope)), 0 for an exact one.
std::string SlopeRelation(leaky_dtype dtype, double wrong, double slope, double near = 0) {
  auto same = [&](double r) {
    if (near > 0) return std::fabs(wrong - r) <= near * std::fabs(r);
    return dtype == LEAKY_F64 ? wrong == r : static_cast<float>(wrong) == static_cast<float>(r);
  };
  const std::string s = Number(slope);
  if (slope != 0 && same(1 / slope)) {
    return "1 / " + s + ": the slope divided by where it should multiply (x / slope), or its "
           "reciprocal passed";
  }
  if (same(slope * slope)) {
    return s + " squared: the slope applied twice (the product scaled again, or the kernel "
           "run on its own output)";
  }
  if (same(1 - slope)) return "1 - " + s + ": the blend written the other way round";
  if (same(-slope)) return "-" + s + ": the slope's sign flipped";
  return "";
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
  if (m.foreign_read || m.foreign_write) {
    const std::string own = DtypeName(in.dtype), other = in.dtype == LEAKY_F16 ? "bf16" : "f16";
    details["read_as"] = m.foreign_read ? other : own;
    details["written_as"] = m.foreign_write ? other : own;
    const std::string how =
        m.foreign_read && m.foreign_write
            ? " data decoded as " + other + " and the result encoded as " + other +
                  " (positives pass untouched, so only the negative side shows it)"
        : m.foreign_read ? " data decoded as " + other + " (the result encoded as " + own + ")"
                         : " data decoded right and every result encoded as " + other;
    return {Kind("wrong_encoding"),
            count + " results are what the op gives on " + own + how +
                ": the kernel converts with the other half format's routine (vload/vstore or a "
                "bit shift of the wrong kind)" +
                (m.foreign_read != m.foreign_write
                     ? std::string(m.foreign_read ? " on the load" : " on the store")
                     : "") +
                ". Convert as " + own,
            details};
  }
  if (m.read_scale != 0) {
    details["read_scale"] = m.read_scale;
    const std::string factor = m.read_scale > 0 ? "twice" : "half";
    return {Kind("wrong_encoding"),
            count + " results are what the op gives on every normal input read as " + factor +
                " its value (x 2^" + std::to_string(m.read_scale) +
                "): a hand-written widening whose exponent bias is off by one (" +
                (in.dtype == LEAKY_F16 ? "f16 -> f32 rebiases by 127 - 15 = 112" : "the bias") +
                "), or a scale applied on the load",
            details};
  }
  if (m.dy_shift != 0) {
    details["dy_shift"] = m.dy_shift;
    const uint64_t k = static_cast<uint64_t>(std::llabs(m.dy_shift));
    std::string relation;
    if (in.plan && in.plan->tile_length > 0 && k % in.plan->tile_length == 0) {
      const uint64_t tiles = k / in.plan->tile_length;
      relation = " (" + std::to_string(tiles) + (tiles == 1 ? " tile " : " tiles ") +
                 (m.dy_shift > 0 ? "ahead: dy read from the slot the prefetch fills)"
                                 : "back: dy read from a slot still holding an earlier tile's)");
    }
    return {Kind("wrong_operand"),
            count + " gradients are exactly x's own result with the dy of index i" +
                (m.dy_shift > 0 ? "+" : "") + std::to_string(m.dy_shift) + relation +
                ": x and dy were read from different places; read dy from this tile's slot",
            details};
  }
  if (m.positive_operand != M::Operand::kUsual || m.negative_operand != M::Operand::kUsual ||
      m.gate_operand != M::Operand::kUsual) {
    using O = M::Operand;
    std::string what_wrong;
    if (m.positive_operand == O::kInput && m.negative_operand == O::kInput &&
        m.gate_operand == O::kDy) {
      what_wrong = "the mask comes from dy's sign and the values from x (dx = dy > 0 ? x : slope * "
                   "x): the two input streams are swapped (the copy-in's order and the compute's "
                   "view of the buffer disagree)";
    } else if (m.positive_operand == O::kInput && m.negative_operand == O::kInput) {
      what_wrong = "dx holds the forward result leaky_relu(x): x was passed and scaled where dy "
                   "should be (dy read from x's buffer, or the forward kernel launched)";
    } else if (m.positive_operand == O::kInput) {
      what_wrong = "the positive side passes x where it should pass dy";
    } else if (m.negative_operand == O::kInput) {
      what_wrong = "the negative side is slope * x where it should be slope * dy";
    } else if (m.gate_operand == O::kDy) {
      what_wrong = "the mask is taken from dy's sign where it should be x's (x > 0)";
    }
    details["positive_operand"] = m.positive_operand == O::kInput ? "x" : "dy";
    details["negative_operand"] = m.negative_operand == O::kInput ? "x" : "dy";
    details["gate_operand"] = m.gate_operand == O::kDy ? "dy" : "x";
    return {Kind("wrong_operand"),
            count + " gradients are exactly what the backward op gives with an operand "
                    "swapped: " + what_wrong + ". dx = x > 0 ? dy : slope * dy",
            details};
  }
  if (m.saturate) {
    details["largest"] = DtypeLargest(in.dtype);
    return {Kind("saturation"),
            count + " infinities came out as " + DtypeName(in.dtype) + "'s largest finite value " +
                Number(DtypeLargest(in.dtype)) +
                ": a saturating conversion (convert_*_sat, a clamp before the store) where the op "
                "keeps infinity",
            details};
  }
  if (m.rounding == M::Rounding::kNearestAway) {
    details["rounding"] = "nearest_ties_away";
    details["rounded"] = v.rounded;
    return {Kind("rounding_mode"),
            count + " results, every one an exact tie rounded away from zero where the op "
                    "rounds ties to even: the store to " + DtypeName(in.dtype) +
                " rounds half away from zero (adding half an ulp before truncating, or a "
                "hand-written conversion); round to nearest even",
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
  if (m.gate == M::Gate::kNanPasses) {
    return {Kind("nan_branch"),
            count + " elements whose input is NaN took the pass-through branch (" +
                (in.backward ? "dx = dy where the op gives dy * slope, itself NaN-free only if "
                               "dy is"
                             : "y = x") +
                "): the select is written `x <= 0 ? slope * v : v`, and a NaN fails every "
                "compare, so it lands in the else branch. Write it as `x > 0 ? v : slope * v`",
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
  } else {
    const std::string relation = SlopeRelation(in.dtype, m.slope_value, in.negative_slope);
    if (!relation.empty()) {
      details["relation"] = relation;
      cause = "it is " + relation;
    }
  }
  return {Kind("slope_mismatch"),
          "only the negative side is wrong, exactly as slope " + Number(m.slope_value) +
              " instead of " + Number(in.negative_slope) + " gives: " + cause,
          details};
}

// Whether a region's elements (ascending) are the output's last ones, all of them.
bool OutputsEnd(const std::vector<uint64_t>& inside, uint64_t n) {
  return !inside.empty() && inside.back() + 1 == n && inside.size() == n - inside.front();
}

// A region found from the indices is a place only when enough elements say
// so: a few elements fit some region by coincidence, except at the
// output's end (a remainder of 4, however the region is spelt: the last
// indices, or the even split's remainder as offsets in the last core).
bool Meaningful(const std::vector<uint64_t>& inside, uint64_t members, uint64_t n) {
  return members >= 8 || OutputsEnd(inside, n);
}

// A confined region in words: a suffix of the output as the plan's end
// (the even split's remainder, when the model holds from its start), any
// other as the inferred region's constraints.
std::string WhereConfined(Analysis& s, const Region& region, const std::vector<uint64_t>& inside,
                          const std::vector<char>& ok, json* where) {
  if (!OutputsEnd(inside, s.n) || !s.in.plan) return DescribeInferred(*s.Features(), region, where);
  uint64_t first = inside.front();
  const uint64_t remainder = RemainderStart(*s.in.plan);
  if (remainder < first && std::all_of(ok.begin() + static_cast<int64_t>(remainder),
                                       ok.begin() + static_cast<int64_t>(first),
                                       [](char v) { return v != 0; })) {
    first = remainder;
  }
  return DescribeRegion(&*s.in.plan, s.n, {{first, s.n}}, where);
}

// What a region never written holds, that no value model may claim.
constexpr Leftover kLeftovers[] = {Leftover::kZero, Leftover::kInput, Leftover::kDy};

// Value faults confined to a region: a model that predicts every element of
// a region - found from the elements it explains, never from a list of
// shapes - bit for bit, and nothing a place explanation claims. One finding
// per region, at most three.
void FindConfinedValues(Analysis& s, const std::vector<char>& in_place) {
  const RegionFeatures* features = s.Features();
  if (!features) return;
  int parts = 0;      // findings made here
  std::string cause;  // the last one's closing sentence, after its parts
  for (int round = 0; round < 4; ++round) {
    std::vector<uint64_t> open;
    for (uint64_t i : s.Open()) {
      if (!in_place[i]) open.push_back(i);
    }
    if (open.size() < 2) return;
    struct Tried {
      ValueModel model;
      std::vector<uint64_t> members;
    };
    std::vector<Tried> tried;
    for (const ValueModel& m : ValueCandidates(s.values, open)) {
      Tried t{m, {}};
      for (uint64_t i : open) {
        const uint64_t p = Predict(s.values, m, i);
        if (SameValue(s.in.dtype, p, s.in.output.bits[i]) &&
            !SameValue(s.in.dtype, p, s.in.golden.bits[i])) {
          t.members.push_back(i);
        }
      }
      if (t.members.size() >= 2) tried.push_back(std::move(t));
    }
    std::stable_sort(tried.begin(), tried.end(), [](const Tried& a, const Tried& b) {
      if (a.members.size() != b.members.size()) return a.members.size() > b.members.size();
      return a.model.Cost() < b.model.Cost();
    });
    bool found = false;
    for (size_t k = 0; k < tried.size() && k < 6 && !found; ++k) {
      const Tried& t = tried[k];
      std::vector<char> ok(s.n, 0);
      for (uint64_t i = 0; i < s.n; ++i) {
        ok[i] = SameValue(s.in.dtype, Predict(s.values, t.model, i), s.in.output.bits[i]);
      }
      const auto allowed = [&](uint64_t i) { return ok[i] != 0; };
      std::vector<uint64_t> members = t.members;
      std::optional<Region> region = InferRegion(*features, members, allowed);
      if (!region) region = InferPartRegion(*features, t.members, allowed, &members);
      if (!region) continue;
      const std::vector<uint64_t> inside = features->Elements(*region);
      if (!Meaningful(inside, members.size(), s.n)) continue;
      // A region whose every element holds one leftover (zeros, the input,
      // dy) is a region never written, however a model also predicts it:
      // the place detectors name it.
      const bool leftover = std::any_of(
          std::begin(kLeftovers), std::end(kLeftovers), [&](Leftover c) {
            return std::all_of(inside.begin(), inside.end(),
                               [&](uint64_t i) { return HoldsLeftover(s.values, c, 0, i); });
          });
      if (leftover) continue;
      Finding f = ValueFinding(s, ExplainWith(s.values, t.model, members));
      json where;
      f.message = "in " + WhereConfined(s, *region, inside, ok, &where) + " only: " + f.message;
      f.details["where"] = where;
      s.Explain(members);
      // And what it predicts inside its region that a place explanation
      // would otherwise take (runs of dy from the other slot look moved).
      for (uint64_t i : inside) {
        if (ok[i] && !SameValue(s.in.dtype, s.in.output.bits[i], s.in.golden.bits[i])) {
          s.explained[i] = 1;
        }
      }
      found = true;
      // The same kind of fault in another region (dy from the next slot
      // here, from the previous one there): one finding, in parts.
      if (parts > 0 && s.findings.back().kind == f.kind) {
        Finding& last = s.findings.back();
        last.message.resize(last.message.size() - cause.size());
        last.message += "; and " + f.message + cause;
        last.details["parts"].push_back(f.details);
        continue;
      }
      cause = t.model.dy_shift != 0
                  ? ""
                  : ". Only there: the code path for that region (a tail or remainder loop, a "
                    "separate branch, some of the work-items) computes it this way";
      f.message += cause;
      f.details["parts"] = json::array({f.details});
      s.findings.push_back(std::move(f));
      ++parts;
    }
    if (!found) return;
  }
}

}  // namespace

void FindValues(Analysis& s) {
  if (s.in.eight_bit) return;  // findings_eight_bit.cc's models
  if (!s.in.leaky_relu_values) return;
  // The op computed another way - unless what it explains lies mostly
  // inside regions that hold something else (a block of zeros also
  // "flushes" the tiny results inside it).
  const std::optional<ValueExplanation> v = ExplainValues(s.values, s.differing);
  const PlaceExplanation regions = s.PlacesOf(s.differing);
  std::vector<char> in_region(s.n, 0);
  for (uint64_t i : regions.explained) in_region[i] = 1;
  // Results found at other indices: no value model may claim them (a
  // region never written may be a value fault's footprint - a ReLU path's
  // zeros - and is judged by the region's other elements).
  std::vector<char> moved(s.n, 0);
  auto mark = [&](ElementRange r) {
    for (uint64_t i = r.begin; i < r.end; ++i) moved[i] = in_region[i];
  };
  for (const Moved& m : regions.moved) mark(m.span);
  for (const PermutedTile& t : regions.permuted) mark(t.span);
  const auto inside = [&] {
    return std::count_if(v->explained.begin(), v->explained.end(),
                         [&](uint64_t i) { return in_region[i]; });
  };
  if (v && static_cast<uint64_t>(inside()) * 2 < v->explained.size()) {
    const bool rounding = v->model.rounding != ValueModel::Rounding::kNearestEven;
    const bool counts = !rounding || !s.in.allow_rounding;
    if (rounding && counts && v->rounded >= 4) s.fails_anyway = true;  // never hidden by --max-ulp
    if (!(rounding && v->rounded < 4)) {
      s.findings.push_back(ValueFinding(s, *v));
      s.Explain(v->explained);
      for (uint64_t i : s.zero_sign) {  // the same model's zeros of the other sign
        if (Predict(s.values, v->model, i) == s.in.output.bits[i]) s.explained[i] = 1;
      }
    }
  }
  // What the whole-output model leaves: faults confined to a region.
  FindConfinedValues(s, moved);
}

// What the value models miss: only negative-side elements wrong, near one
// slope but not exactly (the slope computed another way too).
void FindApproximateSlope(Analysis& s) {
  using SlopeKind = ReportedKind<FindingDetector::kApproximateSlope>;
  const CheckInput& in = s.in;
  const std::vector<uint64_t> open = s.Open();
  if (open.empty() || in.eight_bit || !in.leaky_relu_values) return;
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
  // Within the band of the right slope itself, the products are near-right:
  // a rounding or conversion of them (round to odd, a truncating subnormal
  // branch), which no slope explains. Left unexplained, never blamed on the
  // slope.
  if (std::fabs(slope - in.negative_slope) <= 0.02 * scale) return;
  s.Explain(open);
  json details = {{"estimated_slope", slope}, {"expected_slope", in.negative_slope}};
  const std::string relation = SlopeRelation(in.dtype, slope, in.negative_slope, 1e-3);
  if (!relation.empty()) details["relation"] = relation;
  s.findings.push_back({SlopeKind("slope_mismatch"),
                        "only the negative side is wrong, close to slope " + Number(slope) +
                            " instead of " + Number(in.negative_slope) +
                            " (not exactly any slope: computed another way too): " +
                            (relation.empty() ? "the slope did not reach the kernel as given"
                                              : "it is about " + relation),
                        details});
}

}  // namespace leaky::toolkit

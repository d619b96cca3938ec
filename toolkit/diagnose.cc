// Diagnosis by explanation: every wrong element is first asked what it holds
// (explain_values: the op computed another way; explain_places: something
// never replaced, or a correct result at another index), and the
// explanations become findings in the plan's terms, one per fault. What no
// explanation covers is said to be unexplained, never guessed at. The
// detectors that ask (findings_*.cc) run in the order finding_kinds.inc
// lists them; this file compares and runs them.
#include "diagnose.h"

#include <algorithm>
#include <cmath>

#include "findings.h"

namespace leaky::toolkit {

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

Analysis::Analysis(const CheckInput& input)
    : in(input),
      n(input.golden.bits.size()),
      values{in.dtype,   in.backward, in.negative_slope, &in.input,
             &in.dy,     &in.golden,  &in.output,       in.eight_bit ? &*in.eight_bit : nullptr},
      places{values, in.plan ? &*in.plan : nullptr},
      explained(n, 0) {}

std::vector<uint64_t> Analysis::Open() const {
  std::vector<uint64_t> open;
  for (uint64_t i : wrong) {
    if (!explained[i]) open.push_back(i);
  }
  return open;
}

void Analysis::Explain(const std::vector<uint64_t>& indices) {
  for (uint64_t i : indices) explained[i] = 1;
}

void Analysis::Explain(ElementRange s) {
  for (uint64_t i = s.begin; i < s.end; ++i) explained[i] = 1;
}

PlaceExplanation Analysis::PlacesOf(const std::vector<uint64_t>& open) {
  if (!grams_) grams_.emplace(in.golden);
  return ExplainPlaces(places, *grams_, open);
}

const RegionFeatures* Analysis::Features() {
  if (n > kMaxRegionElements) return nullptr;
  if (!features_) features_.emplace(places.plan, n);
  return &*features_;
}

PlaceExplanation& Analysis::OpenPlaces() {
  if (!open_places_) open_places_ = PlacesOf(Open());
  return *open_places_;
}

namespace {

// Float data: NaN against NaN is equal, -0 against +0 a note (unless
// strict), and a difference within max_ulp tolerated.
void CompareValues(Analysis& s, CheckResult* r) {
  const CheckInput& in = s.in;
  for (uint64_t i = 0; i < s.n; ++i) {
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
    r->max_ulp = std::max(r->max_ulp, ulp);
    const double abs_error = std::fabs(in.output.values[i] - in.golden.values[i]);
    if (std::isfinite(abs_error)) {
      r->max_abs_error = std::max(r->max_abs_error, abs_error);
      if (in.golden.values[i] != 0) {
        r->max_rel_error = std::max(r->max_rel_error, abs_error / std::fabs(in.golden.values[i]));
      }
    }
    if (ulp > in.max_ulp) s.wrong.push_back(i);
  }
}

}  // namespace

CheckResult Diagnose(const CheckInput& in) {
  CheckResult r;
  Analysis s(in);
  r.elements = s.n;
  if (in.eight_bit) {
    CompareBytes(s, &r);
  } else {
    CompareValues(s, &r);
  }
  r.mismatches = s.wrong.size();
  r.zero_sign_differences = s.zero_sign.size();
  r.pass = s.wrong.empty();
  if (s.differing.empty() && s.zero_sign.empty()) return r;
  if (!s.wrong.empty()) r.first_mismatch = static_cast<int64_t>(s.wrong.front());

  // Each detector on what those before it left open.
#define LEAKY_DETECTOR(name, looks_for) Find##name(s);
#define LEAKY_KIND(kind, looks_like)
#define LEAKY_ALSO(kind)
#include "finding_kinds.inc"
#undef LEAKY_DETECTOR
#undef LEAKY_KIND
#undef LEAKY_ALSO
  if (s.fails_anyway) r.pass = false;
  r.findings = std::move(s.findings);
  return r;
}

}  // namespace leaky::toolkit

#include "claims.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <vector>

#include "config.h"
#include "measures.h"
#include "stats.h"

namespace leaky::gan {
namespace {

constexpr double kLn2 = 0.69314718055994531;
// Bounds "> 0" and "< 0": an interval that reaches 0 does not hold.
constexpr double kAboveZero = 1e-300;

enum class Result { kHolds, kFails, kUnclear, kTooFew };

// Below this many seeds no part gets a result (a t-interval over 2 values
// has 1 degree of freedom: 12.7 standard errors wide).
constexpr int kMinSeeds = 3;

const char* Name(Result r) {
  return r == Result::kHolds   ? "holds"
         : r == Result::kFails ? "fails"
         : r == Result::kUnclear ? "unclear"
                                 : "no result (fewer than 3 seeds)";
}

// Whether the (Student-t) interval lies within [low, high], outside it, or across.
Result Check(const Summary& s, double low, double high) {
  if (s.n < kMinSeeds) return Result::kTooFew;
  if (s.ci_low >= low && s.ci_high <= high) return Result::kHolds;
  if (s.ci_high < low || s.ci_low > high) return Result::kFails;
  return Result::kUnclear;
}

// The one rule of every row, every claim over norm settings, and every claim
// over setups.
std::string Verdict(const std::vector<Result>& parts) {
  const auto count = [&](Result r) { return std::count(parts.begin(), parts.end(), r); };
  const auto n = static_cast<long>(parts.size());
  if (count(Result::kTooFew) > 0) return "no verdict";
  if (count(Result::kHolds) == n) return "reproduced";
  if (count(Result::kFails) == n) return "not reproduced";
  if (count(Result::kHolds) > 0 && count(Result::kFails) > 0) return "mixed";
  return "unclear";
}

Result FromVerdict(const std::string& v) {
  return v == "reproduced"       ? Result::kHolds
         : v == "not reproduced" ? Result::kFails
         : v == "no verdict"     ? Result::kTooFew
                                 : Result::kUnclear;
}

// Per seed present in both variants (same seed: same weights, data, noise),
// a's value minus b's: the paired t-interval and the sign test.
struct PairedResult {
  Summary summary;
  SignTest sign;
};
PairedResult Paired(const VariantResults& a, const VariantResults& b, const PerRun& f) {
  const std::vector<double> diff = PairedDifferences(a, b, f);
  return {Summarize(diff), SignTestOf(diff)};
}

IntervalPart Part(const std::string& what, const Summary& s, const std::string& bound, Result r) {
  return {what, s.mean, s.ci_low, s.ci_high, s.n, bound, Name(r), std::nullopt, std::nullopt};
}

IntervalPart PairedPart(const std::string& what, const PairedResult& p, const std::string& bound,
                        Result r) {
  IntervalPart part = Part(what, p.summary, bound, r);
  part.sign_test = p.sign;
  return part;
}

// The first quality point's FCD.
double FirstFcd(const Run& run) { return run.quality_history.front().quality.fcd.value(); }

struct Setting {
  std::string suffix, label;
};

// Lab version 4's registered claims (docs/study/PLAN-4.md): one primary
// measure per claim, two one-sided t-tests (the bound met; the refutation
// margin passed), Holm's step-down over the study's family, and the words
// reproduced / refuted / not shown; secondary measures reported beside
// them without a verdict.
constexpr double kAlpha = 0.05;

struct Primary {
  std::string setting;  // the norm setting's label
  std::string id, text, what;
  std::vector<double> values;  // per seed (paired: per seed's difference)
  double low, high;            // reproduced: the mean within [low, high]
  double refute_low, refute_high;  // refuted: the mean below refute_low or above refute_high
  std::string bound, refute_bound;
  std::optional<SignTest> sign;
  std::vector<ClaimPart> secondary;
};

// p for "the mean is within [low, high]": both edges passed (an
// intersection-union test), so the larger one-sided p.
double PWithin(const Summary& s, double low, double high) {
  return std::max(std::isinf(low) ? 0.0 : PAbove(s, low), std::isinf(high) ? 0.0 : PBelow(s, high));
}

// p for "the mean is beyond the margin" on a finite side; two sides:
// Bonferroni over them.
double PBeyond(const Summary& s, double refute_low, double refute_high) {
  const bool below = !std::isinf(refute_low), above = !std::isinf(refute_high);
  const double p = std::min(below ? PBelow(s, refute_low) : 1.0, above ? PAbove(s, refute_high) : 1.0);
  return std::min(1.0, (below && above ? 2.0 : 1.0) * p);
}

// The probe nearest `step` (none before lab version 3).
const Probe* ProbeNear(const Run& run, double step) {
  const Probe* best = nullptr;
  if (!run.probe_history) return best;
  for (const Probe& p : *run.probe_history) {
    if (!best || std::abs(p.step - step) < std::abs(best->step - step)) best = &p;
  }
  return best;
}

IntervalPart Secondary(const std::string& what, const Summary& s) {
  return {what, s.mean, s.ci_low, s.ci_high, s.n, "-", "secondary", std::nullopt, std::nullopt};
}

std::vector<Claim> RegisteredClaims(const Results& results) {
  const double steps = results.study.steps;
  const Window w = Around2000(steps);
  const double centre = (w.from + w.to) / 2, last_third = steps * 2 / 3;
  const bool hinge = results.study.loss.value_or("non-saturating") == "hinge";
  const std::string window = "steps " + Format(w.from) + "-" + Format(w.to);
  const auto per_seed = [](const VariantResults& v, const PerRun& f) {
    std::vector<double> values;
    for (const Run& r : v.runs) values.push_back(f(r));
    return values;
  };
  const PerRun zero2 = [&](const Run& r) { return WindowMean(r.history, {&Row::zero, 1}, w.from, w.to); };
  const PerRun nonpos2 = [&](const Run& r) {
    return WindowMean(r.history, {&Row::nonpos, 1}, w.from, w.to);
  };
  const PerRun d_term = [&](const Run& r) {
    return WindowMean(r.history, &Row::d_loss, last_third + 1, steps) / 2;
  };
  const PerRun g_slope = [&](const Run& r) {
    return SlopeBetween(r.history, &Row::g_loss, steps / 3, steps);
  };
  const auto probe_field = [&](PerLayer Probe::*field) -> PerRun {
    return [&, field](const Run& r) {
      const Probe* p = ProbeNear(r, centre);
      return p ? (p->*field)[1] : NAN;
    };
  };
  const auto eval_parts = [&](const VariantResults& v, const std::string& label, bool zero) {
    std::vector<ClaimPart> parts;
    if (!Probed(v)) return parts;
    const std::string what = zero ? "exactly 0" : "<= 0";
    parts.push_back(Secondary(label + " layer 2, fraction " + what + ", eval mode on reference images, probe nearest step " + Format(centre),
                              PerSeed(v.runs, probe_field(zero ? &Probe::zero_real : &Probe::nonpos_real))));
    parts.push_back(Secondary(label + " layer 2, fraction " + what + ", eval mode on generated images, same probe",
                              PerSeed(v.runs, probe_field(zero ? &Probe::zero_fake : &Probe::nonpos_fake))));
    return parts;
  };

  std::vector<Claim> out;
  // The family: every primary measure of the study, both norm settings.
  std::vector<Primary> family;
  for (const Setting& setting : {Setting{"", "no norm"}, Setting{"+bn", "batch norm"}}) {
    const VariantResults* relu = FindVariant(results, "relu" + setting.suffix);
    const VariantResults* lrelu = FindVariant(results, "lrelu:0.2" + setting.suffix);
    if (!relu || !lrelu) continue;
    {
      Primary p{setting.label, "relu_sparsity",
                "ReLU: more than 85% of layer 2's activations exactly zero by about step 2,000",
                "ReLU layer 2, fraction exactly 0, " + window + " (train mode)",
                per_seed(*relu, zero2), 0.85, INFINITY, 0.80, INFINITY, "> 0.85", "< 0.80",
                std::nullopt, {}};
      IntervalPart eighty_two = Secondary("the same against the text's other figure", PerSeed(relu->runs, zero2));
      eighty_two.bound = "> 0.82";
      p.secondary.push_back(eighty_two);
      for (ClaimPart& part : eval_parts(*relu, "ReLU", true)) p.secondary.push_back(part);
      family.push_back(std::move(p));
    }
    {
      Primary p{setting.label, "lrelu_sparsity", "LeakyReLU: about 30% sparsity",
                "LeakyReLU layer 2, fraction <= 0, " + window + " (train mode)",
                per_seed(*lrelu, nonpos2), 0.25, 0.35, 0.20, 0.40, "0.25-0.35", "outside 0.20-0.40",
                std::nullopt, {}};
      p.secondary.push_back(Secondary("LeakyReLU layer 2, fraction exactly 0 (the literal reading), " + window,
                                      PerSeed(lrelu->runs, zero2)));
      for (ClaimPart& part : eval_parts(*lrelu, "LeakyReLU", false)) p.secondary.push_back(part);
      family.push_back(std::move(p));
    }
    if (!hinge) {  // chance is ln 2 per term only under the non-saturating loss
      Primary stuck{setting.label, "relu_stuck", "ReLU: the discriminator loss stuck near 0.69",
                    "ReLU D loss per term (sum / 2), last third", per_seed(*relu, d_term),
                    kLn2 - 0.05, kLn2 + 0.05, kLn2 - 0.10, kLn2 + 0.10, "0.643-0.743",
                    "outside 0.593-0.793", std::nullopt, {}};
      stuck.secondary.push_back(Secondary("ReLU G loss slope per 1000 steps, last two thirds", PerSeed(relu->runs, g_slope)));
      family.push_back(std::move(stuck));
      Primary learns{setting.label, "lrelu_learns", "LeakyReLU: the discriminator loss falling to about 0.45",
                     "LeakyReLU D loss per term (sum / 2), last third", per_seed(*lrelu, d_term),
                     0.40, 0.50, 0.35, 0.55, "0.40-0.50", "outside 0.35-0.55", std::nullopt, {}};
      learns.secondary.push_back(Secondary("LeakyReLU G loss slope per 1000 steps, last two thirds", PerSeed(lrelu->runs, g_slope)));
      learns.secondary.push_back(Secondary("LeakyReLU classes in the final samples", PerSeed(lrelu->runs, [](const Run& r) {
        return r.quality_history.back().quality.class_coverage.value_or(NAN);
      })));
      family.push_back(std::move(learns));
    }
    {
      const std::vector<double> gap = PairedDifferences(*relu, *lrelu, FinalFcd);
      Primary better{setting.label, "lrelu_better_than_relu", "LeakyReLU trains a better generator than ReLU",
                     "final FCD, ReLU minus LeakyReLU (paired)", gap, 0.0, INFINITY, 0.0, INFINITY,
                     "> 0", "< 0", SignTestOf(gap), {}};
      better.refute_high = INFINITY;
      better.refute_low = 0.0;
      const std::vector<double> kid = PairedDifferences(*relu, *lrelu, FinalKid);
      if (!kid.empty() && !std::isnan(kid.front())) {
        IntervalPart part = Secondary("final KID, ReLU minus LeakyReLU (paired)", Summarize(kid));
        part.sign_test = SignTestOf(kid);
        better.secondary.push_back(part);
      }
      family.push_back(std::move(better));
    }
  }
  {
    // A shard may hold no seed of a pair, a run too short for the window
    // no value in it: what was not measured is not a part (JSON has no
    // NaN, and a NaN test would join the family as "not shown").
    family.erase(std::remove_if(family.begin(), family.end(),
                                [](const Primary& c) {
                                  return c.values.empty() ||
                                         std::any_of(c.values.begin(), c.values.end(),
                                                     [](double v) { return !std::isfinite(v); });
                                }),
                 family.end());
    for (Primary& c : family) {
      std::erase_if(c.secondary, [](const ClaimPart& part) {
        const auto* interval = std::get_if<IntervalPart>(&part);
        return interval != nullptr && !std::isfinite(interval->mean);
      });
    }
    // The tests, then Holm over the family (claims with fewer than 3 seeds
    // are outside it and get no verdict).
    std::vector<double> p;
    std::vector<size_t> members;
    std::vector<Summary> summaries;
    std::vector<IntervalPart::Test> tests;
    for (size_t i = 0; i < family.size(); ++i) {
      const Primary& c = family[i];
      summaries.push_back(Summarize(c.values));
      const Summary& s = summaries.back();
      IntervalPart::Test t{PWithin(s, c.low, c.high), PBeyond(s, c.refute_low, c.refute_high), 1,
                           c.refute_bound};
      tests.push_back(t);
      if (s.n >= kMinSeeds) {
        p.push_back(std::min(1.0, 2 * std::min(t.p_hold, t.p_refute)));
        members.push_back(i);
      }
    }
    const std::vector<double> holm = HolmAdjusted(p);
    for (size_t k = 0; k < members.size(); ++k) tests[members[k]].p_holm = holm[k];
    for (size_t i = 0; i < family.size(); ++i) {
      const Primary& c = family[i];
      const Summary& s = summaries[i];
      const IntervalPart::Test& t = tests[i];
      const std::string verdict = s.n < kMinSeeds      ? "no verdict"
                                  : t.p_holm >= kAlpha ? "not shown"
                                  : t.p_hold < t.p_refute ? "reproduced"
                                                          : "refuted";
      IntervalPart primary{c.what, s.mean, s.ci_low, s.ci_high, s.n, c.bound, verdict, c.sign, t};
      std::vector<ClaimPart> parts = {primary};
      for (const ClaimPart& part : c.secondary) parts.push_back(part);
      ClaimSetting cs{c.setting, std::move(parts), verdict};
      auto found = std::find_if(out.begin(), out.end(), [&](const Claim& x) { return x.id == c.id; });
      if (found == out.end()) {
        out.push_back({c.id, c.text, {std::move(cs)}, verdict});
      } else {
        if (found->verdict != verdict) found->verdict = "mixed";
        found->settings.push_back(std::move(cs));
      }
    }
  }
  if (out.empty()) return out;
  // f16, a count over every seed's batches: the first LeakyReLU variant's
  // runs (merge.cc's choice), outside the Holm family.
  for (const VariantResults& v : results.variants) {
    const bool counted = !v.runs.empty() && std::all_of(v.runs.begin(), v.runs.end(), [](const Run& r) {
      return r.precision_history.has_value();
    });
    if (!counted || v.plan.layer_activations.size() < 2 ||
        ParseActivation(v.plan.layer_activations[1]).kind != ActivationKind::kLeakyRelu) {
      continue;
    }
    long long seeds_native = 0, native = 0, ours = 0, negatives = 0, batches = 0;
    for (const Run& r : v.runs) {
      long long run_native = 0;
      for (const PrecisionPoint& point : *r.precision_history) {
        ++batches;
        for (const PrecisionRow& row : point.rows) {
          if (row.format == "f16, native f16 arithmetic") {
            run_native += row.flushed_to_zero;
            negatives += row.negatives;
          }
          if (row.format == "f16, leaky (f32 compute)") ours += row.flushed_to_zero;
        }
      }
      native += run_native;
      seeds_native += run_native > 0;
    }
    const long long seeds = static_cast<long long>(v.runs.size());
    // As registered (PLAN-4.md): refuted when native f16 flushed nothing
    // in any seed, whatever ours did.
    const std::string verdict = seeds < kMinSeeds ? "no verdict"
                                : seeds_native == seeds && ours == 0 ? "reproduced"
                                : seeds_native == 0                  ? "refuted"
                                                                     : "not shown";
    out.push_back({"f16_underflow",
                   "f16: small negative products underflow to zero unless computed in f32",
                   {{"every seed's training batches",
                     {CountPart{"seeds in which native f16 flushed a negative product to 0 (" +
                                    v.plan.name + "'s layer-2 pre-activations, " +
                                    std::to_string(batches) + " batches at the probe steps)",
                                seeds_native, seeds},
                      CountPart{"negative inputs flushed to 0, native f16 arithmetic", native, negatives},
                      CountPart{"negative inputs flushed to 0, this library's f16 (f32 compute)", ours, negatives}},
                     verdict}},
                   verdict});
    break;
  }
  return out;
}

}  // namespace

std::optional<std::vector<Claim>> MeasureClaims(const Results& results) {
  if (!results.study.images() || !FindVariant(results, "relu") ||
      !FindVariant(results, "lrelu:0.2")) {
    return std::nullopt;
  }
  if (results.study.lab_version >= 4) return RegisteredClaims(results);
  const double steps = results.study.steps;
  // "by about step 2,000".
  const Window w = Around2000(steps);
  const double last_third = steps * 2 / 3, last_two_thirds = steps / 3;
  const auto layer2_zero = [&](const Run& r) {
    return WindowMean(r.history, {&Row::zero, 1}, w.from, w.to);
  };
  const auto layer2_nonpos = [&](const Run& r) {
    return WindowMean(r.history, {&Row::nonpos, 1}, w.from, w.to);
  };
  const auto d_per_term_last_third = [&](const Run& r) {
    return WindowMean(r.history, &Row::d_loss, last_third + 1, steps) / 2;
  };
  const auto g_slope = [&](const Run& r) {
    return SlopeBetween(r.history, &Row::g_loss, last_two_thirds, steps);
  };
  const auto fcd_ratio = [](const Run& r) { return FinalFcd(r) / FirstFcd(r); };
  const auto d_std = [&](const Run& r) { return StdAfter(r.history, &Row::d_loss, last_third); };
  const std::string window = "steps " + Format(w.from) + "-" + Format(w.to);

  // A claim in one norm setting (its variants' names end in `suffix`);
  // none if its variants are absent.
  using Measure = std::function<std::optional<ClaimSetting>(const std::string& suffix)>;
  struct ClaimDef {
    std::string id, text;
    Measure measure;
  };
  // A one-part claim on a variant's layer-2 fraction in the window.
  const auto layer2_fraction = [&](std::string variant, std::string label, PerRun fraction,
                                   std::string what, double low, double high,
                                   std::string bound) -> Measure {
    return [&results, &window, variant, label, fraction, what, low, high,
            bound](const std::string& sfx) -> std::optional<ClaimSetting> {
      const VariantResults* v = FindVariant(results, variant + sfx);
      if (!v) return std::nullopt;
      const Summary s = PerSeed(v->runs, fraction);
      const Result r = Check(s, low, high);
      return ClaimSetting{
          "", {Part(label + " layer 2, fraction " + what + ", " + window, s, bound, r)}, Verdict({r})};
    };
  };
  const std::vector<ClaimDef> claims = {
      {"relu_sparsity",
       "ReLU: more than 85% of layer 2's activations exactly zero by about step 2,000",
       layer2_fraction("relu", "ReLU", layer2_zero, "exactly 0", 0.85, 1.0, "> 0.85")},
      {"relu_sparsity_82",
       "ReLU: more than 82% of layer 2's activations exactly zero (the text's other figure)",
       layer2_fraction("relu", "ReLU", layer2_zero, "exactly 0", 0.82, 1.0, "> 0.82")},
      {"lrelu_sparsity",
       "LeakyReLU: about 30% sparsity, as the fraction <= 0 (the only reading that can give 30%)",
       layer2_fraction("lrelu:0.2", "LeakyReLU", layer2_nonpos, "<= 0", 0.25, 0.35, "0.25-0.35")},
      {"lrelu_sparsity_zero",
       "LeakyReLU: about 30% sparsity, as the fraction exactly 0 (the literal reading)",
       layer2_fraction("lrelu:0.2", "LeakyReLU", layer2_zero, "exactly 0", 0.25, 0.35, "0.25-0.35")},
      {"relu_stuck",
       "ReLU: the discriminator loss stuck near 0.69, the generator loss climbing, samples that "
       "look like noise",
       [&](const std::string& sfx) -> std::optional<ClaimSetting> {
         const VariantResults* relu = FindVariant(results, "relu" + sfx);
         if (!relu) return std::nullopt;
         const std::vector<Run>& runs = relu->runs;
         const Summary d = PerSeed(runs, d_per_term_last_third), g = PerSeed(runs, g_slope),
                       q = PerSeed(runs, fcd_ratio);
         const Result rd = Check(d, kLn2 - 0.05, kLn2 + 0.05), rg = Check(g, kAboveZero, INFINITY),
                      rq = Check(q, 0.5, INFINITY);
         return ClaimSetting{
             "",
             {Part("ReLU D loss per term (sum / 2), last third", d, "0.643-0.743 (ln 2 +- 0.05)", rd),
              Part("ReLU G loss slope per 1000 steps, last two thirds", g, "> 0", rg),
              Part("ReLU final FCD / first measured FCD", q, ">= 0.5", rq)},
             Verdict({rd, rg, rq})};
       }},
      {"lrelu_learns",
       "LeakyReLU: the discriminator loss falling from 0.69 to about 0.45, the generator loss "
       "falling, digits with clear outlines",
       [&](const std::string& sfx) -> std::optional<ClaimSetting> {
         const VariantResults* lrelu = FindVariant(results, "lrelu:0.2" + sfx);
         if (!lrelu) return std::nullopt;
         const std::vector<Run>& runs = lrelu->runs;
         const Summary d = PerSeed(runs, d_per_term_last_third), g = PerSeed(runs, g_slope),
                       q = PerSeed(runs, fcd_ratio);
         const Summary classes = PerSeed(runs, [](const Run& r) {
           return r.quality_history.back().quality.class_coverage.value();
         });
         const Result rd = Check(d, 0.40, 0.50), rg = Check(g, -INFINITY, -kAboveZero);
         const Result rq = Check(q, 0, 0.5);
         // "10 in every seed": a count, not a mean, so no interval.
         const Result rc = classes.n < kMinSeeds                        ? Result::kTooFew
                           : classes.mean == 10 && classes.std == 0     ? Result::kHolds
                           : classes.ci_high < 10                       ? Result::kFails
                                                                        : Result::kUnclear;
         return ClaimSetting{
             "",
             {Part("LeakyReLU D loss per term (sum / 2), last third", d, "0.40-0.50", rd),
              Part("LeakyReLU G loss slope per 1000 steps, last two thirds", g, "< 0", rg),
              Part("LeakyReLU final FCD / first measured FCD", q, "< 0.5", rq),
              Part("LeakyReLU classes in the final samples", classes, "10 in every seed", rc)},
             Verdict({rd, rg, rq, rc})};
       }},
      {"lrelu_better_than_relu",
       "LeakyReLU trains a better generator than ReLU (ReLU's samples like noise, LeakyReLU's "
       "clear digits)",
       [&](const std::string& sfx) -> std::optional<ClaimSetting> {
         const VariantResults* relu = FindVariant(results, "relu" + sfx);
         const VariantResults* lrelu = FindVariant(results, "lrelu:0.2" + sfx);
         if (!relu || !lrelu) return std::nullopt;
         const PairedResult gap = Paired(*relu, *lrelu, FinalFcd);
         const Result r = Check(gap.summary, kAboveZero, INFINITY);
         return ClaimSetting{
             "", {PairedPart("final FCD, ReLU minus LeakyReLU (paired)", gap, "> 0", r)}, Verdict({r})};
       }},
      {"prelu_oscillates",
       "PReLU: larger loss oscillation and slower convergence than LeakyReLU",
       [&](const std::string& sfx) -> std::optional<ClaimSetting> {
         const VariantResults* prelu = FindVariant(results, "prelu" + sfx);
         const VariantResults* lrelu = FindVariant(results, "lrelu:0.2" + sfx);
         if (!prelu || !lrelu) return std::nullopt;
         const double threshold = 1.5 * lrelu->final.quality.fcd.value();
         const auto reach = [&](const Run& r) {
           for (const QualityPoint& point : r.quality_history) {
             if (point.quality.fcd.value() <= threshold) return static_cast<double>(point.step);
           }
           return steps;
         };
         const PairedResult osc = Paired(*prelu, *lrelu, d_std), conv = Paired(*prelu, *lrelu, reach);
         const Result ro = Check(osc.summary, kAboveZero, INFINITY),
                      rc = Check(conv.summary, kAboveZero, INFINITY);
         return ClaimSetting{
             "",
             {PairedPart("D loss std over the last third, PReLU minus LeakyReLU (paired)", osc, "> 0", ro),
              PairedPart("first step with FCD <= " + Format(threshold) +
                             " (1.5x LeakyReLU's final), PReLU minus LeakyReLU (paired)",
                         conv, "> 0", rc)},
             Verdict({ro, rc})};
       }},
  };

  std::vector<Claim> out;
  for (const ClaimDef& claim : claims) {
    std::vector<ClaimSetting> settings;
    std::vector<Result> verdicts;
    for (const Setting& s : {Setting{"", "no norm"}, Setting{"+bn", "batch norm"}}) {
      std::optional<ClaimSetting> measured = claim.measure(s.suffix);
      if (!measured) continue;
      measured->setting = s.label;
      verdicts.push_back(FromVerdict(measured->verdict));
      settings.push_back(std::move(*measured));
    }
    if (settings.empty()) continue;
    out.push_back({claim.id, claim.text, std::move(settings), Verdict(verdicts)});
  }

  // f16: from the precision table (captured layer-2 pre-activations).
  if (results.precision) {
    const PrecisionTable& precision = *results.precision;
    const auto row = [&](const char* format) -> const PrecisionRow* {
      for (const PrecisionRow& r : precision.rows) {
        if (r.format == format) return &r;
      }
      return nullptr;
    };
    const auto zeros = [&](const char* format) {
      return row(format) ? row(format)->flushed_to_zero : -1;
    };
    const long long native = zeros("f16, native f16 arithmetic"),
                    ftz = zeros("f16, native, flush-to-zero"), ours = zeros("f16, leaky (f32 compute)");
    if (native >= 0 && ftz >= 0 && ours >= 0) {
      const long long negatives = row("f16, native f16 arithmetic")->negatives;
      const std::string verdict = ours == 0 && native > 0 ? "reproduced"
                                  : ours == 0 && ftz > 0  ? "mixed"
                                                          : "not reproduced";
      const auto part = [&](const std::string& what, long long n) -> ClaimPart {
        return CountPart{what, n, negatives};
      };
      out.push_back(
          {"f16_underflow",
           "f16: small negative products underflow to zero unless computed in f32",
           {{"layer-2 pre-activations of " + precision.source + ", slope " + Format(precision.slope),
             {part("negative inputs whose product became 0: native f16 arithmetic", native),
              part("the same with flush-to-zero", ftz),
              part("this library's f16 (computed in f32, rounded once)", ours)},
             verdict}},
           verdict});
    }
  }
  return out;
}

std::string ClaimPartText(const ClaimPart& part) {
  if (const auto* c = std::get_if<CountPart>(&part)) {
    return c->what + ": " + std::to_string(c->count) + " of " + std::to_string(c->of);
  }
  const auto& p = std::get<IntervalPart>(part);
  // One seed has no interval: "[x, x]" would read as a certain value.
  std::string text = p.what + ": " + Format(p.mean) +
                     (p.n < 2 ? " (1 seed: no interval)"
                              : " [" + Format(p.ci_low) + ", " + Format(p.ci_high) + "], n=" +
                                    std::to_string(p.n));
  if (p.sign_test) {
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "; sign test %d+ %d-, p = %.3g", p.sign_test->positive,
                  p.sign_test->negative, p.sign_test->p);
    text += buffer;
  }
  if (p.test) {
    char buffer[128];
    std::snprintf(buffer, sizeof(buffer), "; p(bound met) %.3g, p(%s) %.3g, Holm p ",
                  p.test->p_hold, p.test->refute_bound.c_str(), p.test->p_refute);
    text += buffer;
    // Outside the family (fewer than 3 seeds): no Holm p.
    std::snprintf(buffer, sizeof(buffer), "%.3g", p.test->p_holm);
    if (p.n < kMinSeeds) buffer[0] = '-', buffer[1] = '\0';
    text += buffer;
  }
  if (p.result == "secondary") return text + " (secondary)";
  return text + "; bound " + p.bound + ": " + p.result;
}

std::string ClaimsMarkdown(const std::vector<Claim>& claims) {
  std::ostringstream md;
  md << "| claim | setting | measured: mean [95% Student-t interval over seeds] | verdict |\n"
     << "|---|---|---|---|\n";
  for (const Claim& c : claims) {
    for (const ClaimSetting& s : c.settings) {
      md << "| " << c.text << " | " << s.setting << " | ";
      bool first = true;
      for (const ClaimPart& p : s.parts) {
        md << (first ? "" : "<br>") << ClaimPartText(p);
        first = false;
      }
      md << " | **" << s.verdict << "** |\n";
    }
    md << "| | **overall** | | **" << c.verdict << "** |\n";
  }
  return md.str();
}

namespace {

// A registered claim (lab version 4) leads with its primary measure: an
// interval part carrying its test, or the f16 claim's count of seeds.
bool Registered(const Claim& c) {
  for (const ClaimSetting& s : c.settings) {
    if (s.parts.empty()) return false;
    const auto* p = std::get_if<IntervalPart>(&s.parts.front());
    if (p != nullptr && !p->test) return false;
  }
  return true;
}

// The primary measure's name, without what differs between setups (the
// f16 count's variant and number of batches).
std::string PrimaryName(const ClaimPart& part) {
  if (const auto* c = std::get_if<CountPart>(&part)) return c->what.substr(0, c->what.find(" ("));
  const auto& p = std::get<IntervalPart>(part);
  return p.what + "; bound " + p.bound;
}

// The primary measure's value in one setup: the mean with its uncorrected
// interval, or the count.
std::string PrimaryValue(const ClaimPart& part) {
  if (const auto* c = std::get_if<CountPart>(&part)) {
    return std::to_string(c->count) + " of " + std::to_string(c->of);
  }
  const auto& p = std::get<IntervalPart>(part);
  return Format(p.mean) + " [" + Format(p.ci_low) + ", " + Format(p.ci_high) + "], n=" +
         std::to_string(p.n);
}

// Lab version 4 (docs/study/PLAN-4.md, "The tables registered for the
// README", 1): per claim, its primary measure, the setups where its
// Holm-corrected verdict is reproduced / refuted / not shown, and per
// setup the mean with its uncorrected interval.
std::string RegisteredBySetupMarkdown(
    const std::vector<std::pair<std::string, std::vector<Claim>>>& setups) {
  std::vector<std::pair<std::string, std::string>> rows;  // (claim id, setting)
  std::vector<std::string> texts, measures;
  for (const auto& [label, claims] : setups) {
    for (const Claim& c : claims) {
      for (const ClaimSetting& s : c.settings) {
        const std::pair<std::string, std::string> key{c.id, s.setting};
        if (std::find(rows.begin(), rows.end(), key) == rows.end()) {
          rows.push_back(key);
          texts.push_back(s.setting == "no norm" ? c.text : c.text + " (" + s.setting + ")");
          measures.push_back(PrimaryName(s.parts.front()));
        }
      }
    }
  }
  static constexpr const char* kVerdicts[] = {"reproduced", "refuted", "not shown"};
  std::ostringstream md;
  md << "| claim | primary measure | reproduced in | refuted in | not shown in |";
  for (const auto& setup : setups) md << " " << setup.first << " |";
  md << "\n|---|---|---|---|---|";
  for (size_t i = 0; i < setups.size(); ++i) md << "---|";
  md << "\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    std::vector<std::string> in[3], cells;
    for (const auto& [label, claims] : setups) {
      std::string cell = "-";
      for (const Claim& c : claims) {
        for (const ClaimSetting& s : c.settings) {
          if (c.id != rows[r].first || s.setting != rows[r].second) continue;
          cell = PrimaryValue(s.parts.front());
          for (int v = 0; v < 3; ++v) {
            if (s.verdict == kVerdicts[v]) in[v].push_back(label);
          }
          if (s.verdict == "no verdict") cell += " (no verdict)";
        }
      }
      cells.push_back(cell);
    }
    md << "| " << texts[r] << " | " << measures[r] << " |";
    for (const auto& names : in) {
      std::string list;
      for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
      md << " " << (names.empty() ? std::string("-") : list) << " |";
    }
    for (const std::string& cell : cells) md << " " << cell << " |";
    md << "\n";
  }
  return md.str();
}

}  // namespace

std::string ClaimsBySetupMarkdown(
    const std::vector<std::pair<std::string, std::vector<Claim>>>& setups) {
  const bool registered = std::all_of(setups.begin(), setups.end(), [](const auto& setup) {
    return !setup.second.empty() &&
           std::all_of(setup.second.begin(), setup.second.end(), Registered);
  });
  if (registered) return RegisteredBySetupMarkdown(setups);
  // Rows in the order the claims first appear; (claim id, setting).
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<std::string> texts;
  for (const auto& [label, claims] : setups) {
    for (const Claim& c : claims) {
      for (const ClaimSetting& s : c.settings) {
        const std::pair<std::string, std::string> key{c.id, s.setting};
        if (std::find(rows.begin(), rows.end(), key) == rows.end()) {
          rows.push_back(key);
          texts.push_back(c.text);
        }
      }
    }
  }
  std::ostringstream md;
  md << "| claim | setting |";
  for (const auto& setup : setups) md << " " << setup.first << " |";
  md << " reproduced in |\n|---|---|";
  for (size_t i = 0; i < setups.size(); ++i) md << "---|";
  md << "---|\n";
  for (size_t r = 0; r < rows.size(); ++r) {
    md << "| " << texts[r] << " | " << rows[r].second << " |";
    int reproduced = 0, measured = 0;
    for (const auto& setup : setups) {
      std::string verdict = "-";
      for (const Claim& c : setup.second) {
        if (c.id != rows[r].first) continue;
        for (const ClaimSetting& s : c.settings) {
          if (s.setting == rows[r].second) verdict = s.verdict;
        }
      }
      if (verdict != "-") ++measured;
      if (verdict == "reproduced") ++reproduced;
      md << " " << verdict << " |";
    }
    md << " " << reproduced << " of " << measured << " |\n";
  }
  return md.str();
}

}  // namespace leaky::gan

#include "claims.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <vector>

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
  std::vector<double> diff;
  for (const Run& ra : a.runs) {
    for (const Run& rb : b.runs) {
      if (ra.seed == rb.seed) diff.push_back(f(ra) - f(rb));
    }
  }
  return {Summarize(diff), SignTestOf(diff)};
}

IntervalPart Part(const std::string& what, const Summary& s, const std::string& bound, Result r) {
  return {what, s.mean, s.ci_low, s.ci_high, s.n, bound, Name(r), std::nullopt};
}

IntervalPart PairedPart(const std::string& what, const PairedResult& p, const std::string& bound,
                        Result r) {
  IntervalPart part = Part(what, p.summary, bound, r);
  part.sign_test = p.sign;
  return part;
}

// The last quality point's FCD; the first's.
double FinalFcd(const Run& run) { return run.quality_history.back().quality.fcd.value(); }
double FirstFcd(const Run& run) { return run.quality_history.front().quality.fcd.value(); }

struct Setting {
  std::string suffix, label;
};

}  // namespace

std::optional<std::vector<Claim>> MeasureClaims(const Results& results) {
  if (results.study.dataset != "mnist" || !FindVariant(results, "relu") ||
      !FindVariant(results, "lrelu:0.2")) {
    return std::nullopt;
  }
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

std::string ClaimsBySetupMarkdown(
    const std::vector<std::pair<std::string, std::vector<Claim>>>& setups) {
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

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

using json = nlohmann::json;

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
PairedResult Paired(const json& a, const json& b,
                    const std::function<double(const json&, const json&)>& f) {
  std::vector<double> diff;
  for (size_t i = 0; i < a["seeds_run"].size(); ++i) {
    for (size_t j = 0; j < b["seeds_run"].size(); ++j) {
      if (a["seeds_run"][i] != b["seeds_run"][j]) continue;
      diff.push_back(f(a["history"][i], a["quality_history"][i]) -
                     f(b["history"][j], b["quality_history"][j]));
    }
  }
  return {Summarize(diff), SignTestOf(diff)};
}

json Part(const std::string& what, const Summary& s, const std::string& bound, Result r) {
  return {{"what", what}, {"mean", s.mean}, {"ci_low", s.ci_low}, {"ci_high", s.ci_high},
          {"n", s.n},     {"bound", bound}, {"result", Name(r)}};
}

json PairedPart(const std::string& what, const PairedResult& p, const std::string& bound, Result r) {
  json part = Part(what, p.summary, bound, r);
  part["sign_test"] = {{"positive", p.sign.positive}, {"negative", p.sign.negative},
                       {"ties", p.sign.ties}, {"p", p.sign.p}};
  return part;
}

struct Setting {
  std::string suffix, label;
};

}  // namespace

json MeasureClaims(const json& results) {
  if (results["dataset"] != "mnist" || !FindVariant(results, "relu") || !FindVariant(results, "lrelu:0.2")) {
    return nullptr;
  }
  const double steps = results["steps"].get<double>();
  // "by about step 2,000".
  const Window w = Around2000(steps);
  const double last_third = steps * 2 / 3, last_two_thirds = steps / 3;
  const auto layer2_zero = [&](const json& rows, const json&) {
    return WindowMean(rows, "sparsity_zero", 1, w.from, w.to);
  };
  const auto layer2_nonpos = [&](const json& rows, const json&) {
    return WindowMean(rows, "sparsity_nonpos", 1, w.from, w.to);
  };
  const auto d_per_term_last_third = [&](const json& rows, const json&) {
    return WindowMean(rows, "d_loss", -1, last_third + 1, steps) / 2;
  };
  const auto g_slope = [&](const json& rows, const json&) {
    return SlopeBetween(rows, "g_loss", -1, last_two_thirds, steps);
  };
  const auto fcd_ratio = [](const json&, const json& q) {
    return q.back()["fcd"].get<double>() / q.front()["fcd"].get<double>();
  };
  const auto d_std = [&](const json& rows, const json&) { return StdAfter(rows, "d_loss", last_third); };
  const std::string window = "steps " + Format(w.from) + "-" + Format(w.to);

  using Measure = std::function<json(const std::string& suffix)>;  // null if its variants are absent
  struct Claim {
    std::string id, text;
    Measure measure;
  };
  // A one-part claim on a variant's layer-2 fraction in the window.
  const auto layer2_fraction = [&](std::string variant, std::string label, PerRun fraction,
                                   std::string what, double low, double high,
                                   std::string bound) -> Measure {
    return [&results, &window, variant, label, fraction, what, low, high,
            bound](const std::string& sfx) -> json {
      const json* v = FindVariant(results, variant + sfx);
      if (!v) return nullptr;
      const Summary s = PerSeed(RunsOf(*v), fraction);
      const Result r = Check(s, low, high);
      return {{"parts", {Part(label + " layer 2, fraction " + what + ", " + window, s, bound, r)}},
              {"verdict", Verdict({r})}};
    };
  };
  const std::vector<Claim> claims = {
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
       [&](const std::string& sfx) -> json {
         const json* relu = FindVariant(results, "relu" + sfx);
         if (!relu) return nullptr;
         const Runs runs = RunsOf(*relu);
         const Summary d = PerSeed(runs, d_per_term_last_third), g = PerSeed(runs, g_slope),
                       q = PerSeed(runs, fcd_ratio);
         const Result rd = Check(d, kLn2 - 0.05, kLn2 + 0.05), rg = Check(g, kAboveZero, INFINITY),
                      rq = Check(q, 0.5, INFINITY);
         return {{"parts", {Part("ReLU D loss per term (sum / 2), last third", d, "0.643-0.743 (ln 2 +- 0.05)", rd),
                            Part("ReLU G loss slope per 1000 steps, last two thirds", g, "> 0", rg),
                            Part("ReLU final FCD / first measured FCD", q, ">= 0.5", rq)}},
                 {"verdict", Verdict({rd, rg, rq})}};
       }},
      {"lrelu_learns",
       "LeakyReLU: the discriminator loss falling from 0.69 to about 0.45, the generator loss "
       "falling, digits with clear outlines",
       [&](const std::string& sfx) -> json {
         const json* lrelu = FindVariant(results, "lrelu:0.2" + sfx);
         if (!lrelu) return nullptr;
         const Runs runs = RunsOf(*lrelu);
         const Summary d = PerSeed(runs, d_per_term_last_third), g = PerSeed(runs, g_slope),
                       q = PerSeed(runs, fcd_ratio);
         const Summary classes = PerSeed(runs, [](const json&, const json& quality) {
           return quality.back()["class_coverage"].get<double>();
         });
         const Result rd = Check(d, 0.40, 0.50), rg = Check(g, -INFINITY, -kAboveZero);
         const Result rq = Check(q, 0, 0.5);
         // "10 in every seed": a count, not a mean, so no interval.
         const Result rc = classes.n < kMinSeeds                        ? Result::kTooFew
                           : classes.mean == 10 && classes.std == 0     ? Result::kHolds
                           : classes.ci_high < 10                       ? Result::kFails
                                                                        : Result::kUnclear;
         return {{"parts", {Part("LeakyReLU D loss per term (sum / 2), last third", d, "0.40-0.50", rd),
                            Part("LeakyReLU G loss slope per 1000 steps, last two thirds", g, "< 0", rg),
                            Part("LeakyReLU final FCD / first measured FCD", q, "< 0.5", rq),
                            Part("LeakyReLU classes in the final samples", classes, "10 in every seed", rc)}},
                 {"verdict", Verdict({rd, rg, rq, rc})}};
       }},
      {"lrelu_better_than_relu",
       "LeakyReLU trains a better generator than ReLU (ReLU's samples like noise, LeakyReLU's "
       "clear digits)",
       [&](const std::string& sfx) -> json {
         const json* relu = FindVariant(results, "relu" + sfx);
         const json* lrelu = FindVariant(results, "lrelu:0.2" + sfx);
         if (!relu || !lrelu) return nullptr;
         const PairedResult gap = Paired(*relu, *lrelu, [](const json&, const json& q) {
           return q.back()["fcd"].get<double>();
         });
         const Result r = Check(gap.summary, kAboveZero, INFINITY);
         return {{"parts", {PairedPart("final FCD, ReLU minus LeakyReLU (paired)", gap, "> 0", r)}},
                 {"verdict", Verdict({r})}};
       }},
      {"prelu_oscillates",
       "PReLU: larger loss oscillation and slower convergence than LeakyReLU",
       [&](const std::string& sfx) -> json {
         const json* prelu = FindVariant(results, "prelu" + sfx);
         const json* lrelu = FindVariant(results, "lrelu:0.2" + sfx);
         if (!prelu || !lrelu) return nullptr;
         const double threshold = 1.5 * (*lrelu)["final"]["fcd"].get<double>();
         const auto reach = [&](const json&, const json& q) {
           for (const json& point : q) {
             if (point["fcd"].get<double>() <= threshold) return point["step"].get<double>();
           }
           return steps;
         };
         const PairedResult osc = Paired(*prelu, *lrelu, d_std), conv = Paired(*prelu, *lrelu, reach);
         const Result ro = Check(osc.summary, kAboveZero, INFINITY),
                      rc = Check(conv.summary, kAboveZero, INFINITY);
         return {{"parts", {PairedPart("D loss std over the last third, PReLU minus LeakyReLU (paired)", osc, "> 0", ro),
                            PairedPart("first step with FCD <= " + Format(threshold) +
                                     " (1.5x LeakyReLU's final), PReLU minus LeakyReLU (paired)",
                                 conv, "> 0", rc)}},
                 {"verdict", Verdict({ro, rc})}};
       }},
  };

  json out = json::array();
  for (const Claim& claim : claims) {
    json settings = json::array();
    std::vector<Result> verdicts;
    for (const Setting& s : {Setting{"", "no norm"}, Setting{"+bn", "batch norm"}}) {
      json measured = claim.measure(s.suffix);
      if (measured.is_null()) continue;
      measured["setting"] = s.label;
      verdicts.push_back(FromVerdict(measured["verdict"]));
      settings.push_back(measured);
    }
    if (settings.empty()) continue;
    out.push_back({{"id", claim.id}, {"claim", claim.text}, {"settings", settings},
                   {"verdict", Verdict(verdicts)}});
  }

  // f16: from the precision table (captured layer-2 pre-activations).
  if (results.contains("precision")) {
    json counts;
    for (const json& row : results["precision"]["rows"]) {
      counts[row["format"].get<std::string>()] = {row["flushed_to_zero"], row["negatives"]};
    }
    const auto zeros = [&](const char* format) {
      return counts.contains(format) ? counts[format][0].get<long long>() : -1;
    };
    const long long native = zeros("f16, native f16 arithmetic"),
                    ftz = zeros("f16, native, flush-to-zero"), ours = zeros("f16, leaky (f32 compute)");
    if (native >= 0 && ftz >= 0 && ours >= 0) {
      const long long negatives = counts["f16, native f16 arithmetic"][1].get<long long>();
      const std::string verdict = ours == 0 && native > 0 ? "reproduced"
                                  : ours == 0 && ftz > 0  ? "mixed"
                                                          : "not reproduced";
      const auto part = [&](const std::string& what, long long n) {
        return json{{"what", what}, {"count", n}, {"of", negatives}};
      };
      out.push_back(
          {{"id", "f16_underflow"},
           {"claim", "f16: small negative products underflow to zero unless computed in f32"},
           {"settings",
            {{{"setting", "layer-2 pre-activations of " + results["precision"]["source"].get<std::string>() +
                              ", slope " + Format(results["precision"]["slope"].get<double>())},
              {"parts", {part("negative inputs whose product became 0: native f16 arithmetic", native),
                         part("the same with flush-to-zero", ftz),
                         part("this library's f16 (computed in f32, rounded once)", ours)}},
              {"verdict", verdict}}}},
           {"verdict", verdict}});
    }
  }
  return out;
}

std::string ClaimPartText(const json& p) {
  if (p.contains("count")) {
    return p["what"].get<std::string>() + ": " + std::to_string(p["count"].get<long long>()) +
           " of " + std::to_string(p["of"].get<long long>());
  }
  std::string text = p["what"].get<std::string>() + ": " + Format(p["mean"].get<double>()) + " [" +
                     Format(p["ci_low"].get<double>()) + ", " + Format(p["ci_high"].get<double>()) +
                     "], n=" + std::to_string(p["n"].get<int>());
  if (p.contains("sign_test")) {
    const json& t = p["sign_test"];
    char buffer[96];
    std::snprintf(buffer, sizeof(buffer), "; sign test %d+ %d-, p = %.3g", t["positive"].get<int>(),
                  t["negative"].get<int>(), t["p"].get<double>());
    text += buffer;
  }
  return text + "; bound " + p["bound"].get<std::string>() + ": " + p["result"].get<std::string>();
}

std::string ClaimsMarkdown(const json& claims) {
  std::ostringstream md;
  md << "| claim | setting | measured: mean [95% Student-t interval over seeds] | verdict |\n"
     << "|---|---|---|---|\n";
  for (const json& c : claims) {
    for (const json& s : c["settings"]) {
      md << "| " << c["claim"].get<std::string>() << " | " << s["setting"].get<std::string>() << " | ";
      bool first = true;
      for (const json& p : s["parts"]) {
        md << (first ? "" : "<br>") << ClaimPartText(p);
        first = false;
      }
      md << " | **" << s["verdict"].get<std::string>() << "** |\n";
    }
    md << "| | **overall** | | **" << c["verdict"].get<std::string>() << "** |\n";
  }
  return md.str();
}

std::string ClaimsBySetupMarkdown(const std::vector<std::pair<std::string, json>>& setups) {
  // Rows in the order the claims first appear; (claim id, setting).
  std::vector<std::pair<std::string, std::string>> rows;
  std::vector<std::string> texts;
  for (const auto& [label, claims] : setups) {
    for (const json& c : claims) {
      for (const json& s : c["settings"]) {
        const std::pair<std::string, std::string> key{c["id"], s["setting"]};
        if (std::find(rows.begin(), rows.end(), key) == rows.end()) {
          rows.push_back(key);
          texts.push_back(c["claim"]);
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
      for (const json& c : setup.second) {
        if (c["id"] != rows[r].first) continue;
        for (const json& s : c["settings"]) {
          if (s["setting"] == rows[r].second) verdict = s["verdict"];
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

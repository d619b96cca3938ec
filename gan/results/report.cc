#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

#include "charts.h"
#include "claims.h"
#include "grid_ink.h"
#include "measures.h"

namespace leaky::gan {
namespace {

using toolkit::HtmlEscape;

std::string Number(double v, const char* format = "%.4g") {
  if (!std::isfinite(v)) return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), format, v);
  return buffer;
}

// "mean ± std [interval]" over seeds, or the one seed's value said so.
std::string SummaryCell(const Summary& s, double scale = 1) {
  std::string cell = "<td class=\"num\">" + Number(s.mean * scale);
  if (s.n < 2) return cell + "<br><small>1 seed: no interval</small></td>";
  return cell + " &plusmn; " + Number(s.std * scale, "%.2g") + "<br><small>[" +
         Number(s.ci_low * scale) + ", " + Number(s.ci_high * scale) + "]</small></td>";
}

std::string SummaryTable(const Results& results) {
  const bool mnist = results.study.images();
  std::vector<std::pair<std::string, std::string>> metrics = {
      {"d_loss", "D loss"}, {"g_loss", "G loss"}, {"d_real", "D(x)"}, {"d_fake", "D(G(z))"},
      {"grad_norm_first_layer", "|grad| layer 1"}};
  if (mnist) {
    metrics.insert(metrics.end(), {{"fcd", "FCD"}, {"class_coverage", "classes"},
                                   {"class_kl", "class KL"}});
    // KID from lab version 4 on (earlier studies have none).
    const bool kid = std::all_of(results.variants.begin(), results.variants.end(),
                                 [](const VariantResults& v) { return v.summary.count("kid") > 0; });
    if (kid) metrics.insert(metrics.begin() + 6, {"kid", "KID"});
  } else {
    metrics.insert(metrics.end(), {{"modes_covered", "modes"}, {"high_quality_share", "HQ share"}});
  }
  metrics.push_back({"step_ms", "ms/step"});
  std::ostringstream out;
  out << "<table><thead><tr><th>variant</th><th class=\"right\">seeds</th>";
  for (const auto& m : metrics) out << "<th class=\"right\">" << HtmlEscape(m.second) << "</th>";
  out << "<th class=\"right\">D loss per term</th></tr></thead><tbody>";
  for (const VariantResults& v : results.variants) {
    out << "<tr><td>" << HtmlEscape(v.plan.name) << "</td><td class=\"num\">" << v.runs.size() << "</td>";
    for (const auto& m : metrics) out << SummaryCell(v.summary.at(m.first));
    out << SummaryCell(v.summary.at("d_loss"), 0.5) << "</tr>";
  }
  out << "</tbody></table><p class=\"note\">mean &plusmn; sample std over seeds, with the "
         "Student-t 95% interval of the mean (n - 1 degrees of freedom) below; D loss is the sum "
         "of the real and fake terms (chance: 2 ln 2 = 1.386), D loss per term is half of it "
         "(chance: ln 2 = 0.693, the article's 0.69); the final "
         "values average the last tenth of the logged steps; quality metrics use "
      << "generated samples from the final generator.</p>";
  return out.str();
}

}  // namespace

// What the run found, in words, before any table: which variant reached
// the better final sample quality (FCD on images, lower is better; modes
// covered on ring8) and whether the seeds can tell. With fewer than 3 seeds
// a variant has no interval, and one seed of a few hundred steps says
// nothing of which activation trains the better generator: the registered
// study measured paired FCD differences with intervals tens wide at 10-20
// seeds of 3,000 steps.
std::string Headline(const Results& results) {
  const bool images = results.study.images();
  const std::string key = images ? "fcd" : "modes_covered";
  // The variants that measured it, and the best finite one among them.
  std::vector<const VariantResults*> measured;
  const VariantResults* best = nullptr;
  for (const VariantResults& v : results.variants) {
    if (v.runs.empty() || !v.summary.count(key)) continue;
    measured.push_back(&v);
    const double m = v.summary.at(key).mean;
    if (!std::isfinite(m)) continue;
    const double b = best ? best->summary.at(key).mean : 0;
    if (!best || (images ? m < b : m > b)) best = &v;
  }
  if (!best) return "";
  std::ostringstream out;
  const int steps = results.study.steps;
  out << "<p class=\"headline\"><b>What this run found.</b> ";
  const std::string measure = images ? "final FCD (lower is better)" : "modes covered (more is better)";
  const double best_mean = best->summary.at(key).mean;
  const bool tie = std::all_of(measured.begin(), measured.end(), [&](const VariantResults* v) {
    return v->summary.at(key).mean == best_mean;
  });
  out << "By " << measure << ", "
      << (tie ? std::string("the variants tie") : HtmlEscape(best->plan.name) + " did best")
      << ": ";
  size_t fewest = SIZE_MAX;
  for (const VariantResults* v : measured) {
    fewest = std::min(fewest, v->runs.size());
    out << (v == measured.front() ? "" : ", ") << HtmlEscape(v->plan.name) << " "
        << Number(v->summary.at(key).mean, images ? "%.0f" : "%.3g");
  }
  out << ". ";
  if (!images && best_mean == 0) {
    // A mode counts once 1% of the samples land within 3 standard
    // deviations of its centre (Ring8Quality): none does before the
    // generator has spread out to the ring.
    out << "No variant covers any of the 8 modes yet (a mode counts once 1% of the samples land "
           "within 3 standard deviations of its centre): after "
        << steps << " steps the generator has not reached the ring, which takes thousands of "
        << "steps (docs/gan-lab.md, ring8). ";
  }
  if (fewest < 3) {
    out << "With " << fewest << (fewest == 1 ? " seed" : " seeds") << " of " << steps
        << " steps per variant this cannot tell which activation trains the better generator: "
           "the same setup's seeds differ by more than that, so the claims below give no "
           "verdict. Run <code>--seeds 5</code> or more (docs/study uses 10-20 seeds of "
           "3,000 steps) for intervals that can.";
  } else {
    const Summary& b = best->summary.at(key);
    const bool overlap = std::any_of(measured.begin(), measured.end(), [&](const VariantResults* v) {
      const Summary& o = v->summary.at(key);
      return v != best && o.ci_low <= b.ci_high && b.ci_low <= o.ci_high;
    });
    out << (overlap ? "The 95% intervals over seeds overlap: the seeds cannot tell the "
                      "variants apart on this measure."
                    : "The 95% intervals over seeds do not overlap.");
  }
  out << "</p>";
  return out.str();
}

namespace {

// The final per-layer values, a labelled column per layer of D, each
// layer's activation named in the variant's row.
std::string LayerTable(const Results& results) {
  const char* groups[] = {"fraction exactly 0", "fraction &le; 0", "dead channels"};
  std::ostringstream out;
  out << "<table><thead><tr><th rowspan=\"2\">variant</th><th rowspan=\"2\">activation per "
         "layer (1-4)</th>";
  for (const char* g : groups) out << "<th colspan=\"4\" class=\"group\">" << g << "</th>";
  out << "</tr><tr>";
  for (int g = 0; g < 3; ++g) {
    for (int layer = 1; layer <= 4; ++layer) {
      out << "<th class=\"num" << (layer == 1 ? " group" : "") << "\">layer " << layer << "</th>";
    }
  }
  out << "</tr></thead><tbody>";
  for (const VariantResults& v : results.variants) {
    std::string layers;
    for (const std::string& a : v.plan.layer_activations) layers += (layers.empty() ? "" : ", ") + a;
    out << "<tr><td>" << HtmlEscape(v.plan.name) << "</td><td>" << HtmlEscape(layers)
        << (v.plan.d_norm == "batch" ? " (batch norm)" : "") << "</td>";
    for (const PerLayer* values : {&v.final.sparsity_zero, &v.final.sparsity_nonpos, &v.final.dead_channels}) {
      for (size_t layer = 0; layer < 4; ++layer) {
        out << "<td class=\"num" << (layer == 0 ? " group" : "") << "\">"
            << (layer < values->size() ? Number((*values)[layer], "%.2f") : "-") << "</td>";
      }
    }
    out << "</tr>";
  }
  out << "</tbody></table><p class=\"note\">Means over seeds of the last tenth of the logged "
         "steps, on the logged real batches; dead channels: the fraction of a layer's channels "
         "never above 0 on the logged batch.</p>";
  return out.str();
}

std::string ClaimsTable(const std::vector<Claim>& claims) {
  std::ostringstream html;
  html << "<table><thead><tr><th>claim</th><th>setting</th><th>measured: mean [95% Student-t "
          "interval over seeds]</th><th>verdict</th></tr></thead><tbody>";
  for (const Claim& c : claims) {
    for (const ClaimSetting& s : c.settings) {
      html << "<tr><td>" << HtmlEscape(c.text) << "</td><td>" << HtmlEscape(s.setting) << "</td><td>";
      for (const ClaimPart& p : s.parts) html << HtmlEscape(ClaimPartText(p)) << "<br>";
      html << "</td><td><b>" << HtmlEscape(s.verdict) << "</b></td></tr>";
    }
    html << "<tr><td></td><td><b>overall</b></td><td></td><td><b>" << HtmlEscape(c.verdict)
         << "</b></td></tr>";
  }
  // Lab version 4's claims carry their registered tests.
  bool registered = false;
  for (const Claim& c : claims) {
    for (const ClaimSetting& s : c.settings) {
      for (const ClaimPart& p : s.parts) {
        const auto* interval = std::get_if<IntervalPart>(&p);
        registered = registered || (interval != nullptr && interval->test.has_value());
      }
    }
  }
  if (registered) {
    html << "</tbody></table><p class=\"note\">How each claim is measured, its bound and its "
            "refutation margin (registered before the study ran): docs/study/PLAN-4.md. Each "
            "claim's primary measure gets two one-sided Student-t tests (the bound met; the "
            "margin passed) and Holm's correction over the study's claims: reproduced or refuted "
            "when the corrected p is below 0.05, else not shown; the intervals are uncorrected; "
            "secondary measures get no verdict; fewer than 3 seeds give no verdict.</p>";
  } else {
    html << "</tbody></table><p class=\"note\">How each claim is measured, and the bounds (fixed "
            "before the study ran): gan/results/claims.h and docs/study/README.md. A bound holds when the "
            "whole interval satisfies it, fails when none of it does, else is unclear; fewer than 3 "
            "seeds give no verdict.</p>";
  }
  return html.str();
}

// Under a grid with almost no dark pixel (below 1%), why it looks blank:
// the generator drew almost nothing at that step (a study's ELU grids at
// steps 750 and 1,500 had 0.0% and 0.1%, its other grids about 10%).
std::string BlankGridNote(const std::vector<std::optional<double>>& ink, size_t i) {
  constexpr double kBlank = 0.01;
  if (!ink[i] || *ink[i] >= kBlank) return "";
  double low = 1, high = 0;
  for (const std::optional<double>& other : ink) {
    if (other && *other >= kBlank) {
      low = std::min(low, *other);
      high = std::max(high, *other);
    }
  }
  std::string note = "<br><span class=\"note\">almost blank: " + Number(100 * *ink[i], "%.1f") +
                     "% of its pixels dark";
  if (low <= high) {
    note += " (this variant's other grids: " + Number(100 * low, "%.0f") +
            (Number(100 * low, "%.0f") == Number(100 * high, "%.0f")
                 ? ""
                 : "-" + Number(100 * high, "%.0f")) +
            "%)";
  }
  return note + ": the generator drew almost nothing at this step</span>";
}

std::string SampleGrids(const Results& results, const std::string& run_dir) {
  std::ostringstream out;
  for (const VariantResults& v : results.variants) {
    const std::filesystem::path dir = std::filesystem::path(run_dir) / v.plan.name;
    std::vector<std::pair<int, std::filesystem::path>> images;
    if (std::filesystem::exists(dir)) {
      for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string file = entry.path().filename().string();
        if (file.rfind("samples_step", 0) == 0 && entry.path().extension() == ".png") {
          images.push_back({std::stoi(file.substr(12)), entry.path()});
        }
      }
    }
    std::sort(images.begin(), images.end());
    std::vector<std::vector<uint8_t>> files;
    std::vector<std::optional<double>> ink;  // digits and clothes drawn dark on white
    for (const auto& image : images) {
      std::ifstream in(image.second, std::ios::binary);
      files.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      ink.push_back(results.study.images() ? InkShare(files.back()) : std::nullopt);
    }
    out << "<div class=\"grids\"><h3>" << HtmlEscape(v.plan.name) << "</h3>";
    for (size_t i = 0; i < images.size(); ++i) {
      const int step = images[i].first;
      out << "<figure><img alt=\"samples at step " << step << "\" src=\"data:image/png;base64,"
          << Base64(files[i]) << "\"><figcaption>step " << step << BlankGridNote(ink, i)
          << "</figcaption></figure>";
    }
    out << "</div>";
  }
  return out.str();
}

std::string PrecisionSection(const Results& results) {
  if (!results.precision) return "<p>No pre-activations were captured.</p>";
  const PrecisionTable& p = *results.precision;
  std::ostringstream out;
  out << "<p>LeakyReLU(" << Number(p.slope) << ") applied to the discriminator's "
      << "layer-2 pre-activations (" << HtmlEscape(p.source)
      << "), compared with the exact product of the f32 input and the slope.</p><table><thead><tr>"
         "<th>format</th><th>negative inputs</th><th>flushed to exactly 0</th><th>max rel. "
         "error</th><th>mean rel. error</th></tr></thead><tbody>";
  for (const PrecisionRow& r : p.rows) {
    out << "<tr><td>" << HtmlEscape(r.format) << "</td><td class=\"num\">" << r.negatives
        << "</td><td class=\"num\">" << r.flushed_to_zero << "</td><td class=\"num\">"
        << Number(r.max_relative_error, "%.3g") << "</td><td class=\"num\">"
        << Number(r.mean_relative_error, "%.3g") << "</td></tr>";
  }
  out << "</tbody></table>";
  return out.str();
}

}  // namespace

std::string Base64(const std::vector<uint8_t>& bytes) {
  static const char kTable[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t v = static_cast<uint32_t>(bytes[i]) << 16;
    if (i + 1 < bytes.size()) v |= static_cast<uint32_t>(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size()) v |= bytes[i + 2];
    out += kTable[(v >> 18) & 63];
    out += kTable[(v >> 12) & 63];
    out += i + 1 < bytes.size() ? kTable[(v >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kTable[v & 63] : '=';
  }
  return out;
}

std::string ClaimsSection(const std::vector<Claim>& claims) {
  const bool none = std::all_of(claims.begin(), claims.end(),
                                [](const Claim& c) { return c.verdict == "no verdict"; });
  std::string html = "<h2>The article's claims, measured</h2>";
  if (!none) return html + ClaimsTable(claims);
  // A screenful of "no verdict" says one thing: folded to one line, the
  // measurements a click away.
  return html + "<details><summary>" + std::to_string(claims.size()) +
         " claims, none with a verdict: fewer than 3 seeds give none (run --seeds 3 or more; "
         "the study uses 5 to 20). The measurements</summary>" +
         ClaimsTable(claims) + "</details>";
}

std::string RenderReport(const Results& results, const std::string& run_dir,
                         const toolkit::VegaScripts& scripts) {
  const Study& study = results.study;
  std::ostringstream html;
  html << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>leaky GAN lab: "
       << HtmlEscape(study.name) << "</title><style>"
       << "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#222;"
       << "padding:0 12px}table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;"
       << "padding:4px 6px;text-align:left;vertical-align:top}th{background:#f3f3f3}"
       << ".num{text-align:right}.right{text-align:right}th.group{text-align:center}"
       << ".group{border-left:2px solid #999}.grids figure{display:inline-block;margin:4px;vertical-align:top}"
       << ".grids img{image-rendering:pixelated;width:240px}.grids figcaption{width:240px}.note{color:#555;max-width:70em}</style>"
       << toolkit::VegaHead(scripts) << "</head><body>";
  html << "<h1>GAN lab: " << HtmlEscape(study.name) << "</h1><p>Data: <b>" << HtmlEscape(study.dataset)
       << "</b>, " << study.steps << " steps, batch " << study.batch << ", " << study.seeds
       << " seed(s), " << study.threads << " thread(s). Layers a variant does "
       << "not choose use " << HtmlEscape(study.base_activation) << ".</p>"
       << Headline(results) << "<p class=\"note\">Models: " << HtmlEscape(study.models) << "</p>";
  if (study.classifier) {
    const ClassifierInfo& c = *study.classifier;
    html << "<p class=\"note\">Quality classifier: trained on " << c.train_digits
         << " images, accuracy " << Number(100 * c.held_out_accuracy, "%.2f") << "% on the "
         << c.held_out_digits
         << " held out; FCD's real reference is held-out images. <b>Real-vs-real FCD (the floor): "
         << Number(c.real_fcd_floor) << "</b> (two disjoint sets of " << study.samples
         << " real images)";
    if (c.fcd_floor && c.kid_floor) {
      html << "; over " << c.fcd_floor->n << " random halvings of the "
           << c.reference_images.value_or(0) << " reference images, FCD " << Number(c.fcd_floor->mean)
           << " &plusmn; " << Number(c.fcd_floor->std, "%.2g") << " and KID "
           << Number(c.kid_floor->mean) << " &plusmn; " << Number(c.kid_floor->std, "%.2g")
           << " (mean &plusmn; std)";
    }
    html << ".</p>";
  }
  if (study.stopped_early) {
    html << "<p><b>Stopped early (Ctrl-C): only the runs that finished are shown.</b></p>";
  }
  if (study.partial) {
    const Partial& p = *study.partial;
    html << "<p><b>Partial study (merged with --allow-partial): " << p.missing_runs.size()
         << " run(s) missing";
    if (!p.missing_shards.empty()) {
      html << ", from shard(s)";
      for (const std::string& s : p.missing_shards) html << " " << HtmlEscape(s);
    }
    html << ":";
    for (const std::string& r : p.missing_runs) html << " " << HtmlEscape(r) << ";";
    html << "</b></p>";
  }
  if (study.threads_per_part) {
    std::string threads;
    for (int t : *study.threads_per_part) {
      if (!threads.empty()) threads += ",";
      threads += std::to_string(t);
    }
    html << "<p class=\"note\">Merged from parts run at different thread counts ([" << threads
         << "]): results can differ in the last bits from a run at one thread count.</p>";
  }
  if (study.speed_check) {
    const SpeedCheck& s = *study.speed_check;
    html << "<p>Speed check, same run: a discriminator training step with this library's "
            "LeakyReLU took " << Number(s.leaky_ms) << " ms, with "
            "torch::nn::LeakyReLU " << Number(s.torch_ms) << " ms (ratio "
         << Number(s.ratio, "%.3f");
    if (s.ratio_quartiles) {
      html << ", quartiles " << Number((*s.ratio_quartiles)[0], "%.3f") << " to "
           << Number((*s.ratio_quartiles)[1], "%.3f");
    }
    html << "; " << HtmlEscape(s.what) << ").</p>";
  }
  html << "<h2>Summary</h2>" << SummaryTable(results);
  if (results.claims) {
    html << ClaimsSection(*results.claims);
  }
  html << "<h2>Training curves</h2>" << TrainingCharts(results, scripts)
       << "<h2>Activation sparsity and dead channels</h2>" << LayerTable(results)
       << LayerCharts(results, scripts);
  // Grids are written for the run's first seed (--first-seed; 0 unless given).
  html << "<h2>Samples (seed " << study.first_seed << ", fixed noise)</h2>"
       << SampleGrids(results, run_dir)
       << "<h2>Precision of the negative side in 16-bit formats</h2>" << PrecisionSection(results)
       << "</body></html>\n";
  return html.str();
}

}  // namespace leaky::gan

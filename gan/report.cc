#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <vector>

#include "claims.h"
#include "measures.h"

namespace leaky::gan {
namespace {

const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string Number(double v, const char* format = "%.4g") {
  if (!std::isfinite(v)) return "-";
  char buffer[48];
  std::snprintf(buffer, sizeof(buffer), format, v);
  return buffer;
}

// A run's curve: (step, value) at each logged row or quality point.
using Curve = std::function<std::vector<std::pair<double, double>>(const Run&)>;

Curve RowCurve(const RowField& field) {
  return [field](const Run& run) {
    std::vector<std::pair<double, double>> points;
    for (const Row& r : run.history) points.emplace_back(r.step, field(r));
    return points;
  };
}

Curve QualityCurve(std::optional<double> Quality::*measure) {
  return [measure](const Run& run) {
    std::vector<std::pair<double, double>> points;
    for (const QualityPoint& p : run.quality_history) points.emplace_back(p.step, (p.quality.*measure).value());
    return points;
  };
}

// A line per variant (mean over seeds) with a band from the lowest to the
// highest seed.
std::string Chart(const Results& results, const Curve& curve, const std::string& title) {
  const double width = 380, height = 200, left = 48, right = 10, top = 24, bottom = 28;
  struct Series {
    std::vector<double> steps, mean, low, high;
  };
  std::vector<Series> all;
  double x_max = 1, y_min = INFINITY, y_max = -INFINITY;
  for (const VariantResults& v : results.variants) {
    Series s;
    std::vector<std::vector<std::pair<double, double>>> curves;
    for (const Run& run : v.runs) curves.push_back(curve(run));
    const size_t rows = curves.empty() ? 0 : curves[0].size();
    for (size_t r = 0; r < rows; ++r) {
      double sum = 0, low = INFINITY, high = -INFINITY;
      for (const auto& c : curves) {
        const double value = c[r].second;
        sum += value;
        low = std::min(low, value);
        high = std::max(high, value);
      }
      s.steps.push_back(curves[0][r].first);
      s.mean.push_back(sum / static_cast<double>(curves.size()));
      s.low.push_back(low);
      s.high.push_back(high);
      x_max = std::max(x_max, s.steps.back());
      y_min = std::min(y_min, low);
      y_max = std::max(y_max, high);
    }
    all.push_back(s);
  }
  if (!std::isfinite(y_min)) y_min = 0, y_max = 1;
  if (y_max - y_min < 1e-9) y_max = y_min + 1;
  const auto X = [&](double x) { return left + (width - left - right) * x / x_max; };
  const auto Y = [&](double y) { return top + (height - top - bottom) * (1 - (y - y_min) / (y_max - y_min)); };
  std::ostringstream svg;
  svg << "<svg class=\"chart\" viewBox=\"0 0 " << width << " " << height
      << "\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"><title>" << Escape(title)
      << "</title><text x=\"" << left << "\" y=\"15\" class=\"ct\">" << Escape(title) << "</text>";
  for (int t = 0; t <= 4; ++t) {
    const double y = y_min + (y_max - y_min) * t / 4;
    svg << "<line x1=\"" << left << "\" x2=\"" << width - right << "\" y1=\"" << Y(y) << "\" y2=\""
        << Y(y) << "\" class=\"grid\"/><text x=\"" << left - 4 << "\" y=\"" << Y(y) + 4
        << "\" class=\"yl\">" << Number(y, "%.3g") << "</text>";
  }
  svg << "<text x=\"" << width - right << "\" y=\"" << height - 8 << "\" class=\"xl\">step "
      << Number(x_max, "%.0f") << "</text><text x=\"" << left << "\" y=\"" << height - 8
      << "\" class=\"xs\">0</text>";
  for (size_t i = 0; i < all.size(); ++i) {
    const Series& s = all[i];
    const char* colour = kColours[i % std::size(kColours)];
    if (s.steps.empty()) continue;
    std::ostringstream band, line;
    for (size_t r = 0; r < s.steps.size(); ++r) band << X(s.steps[r]) << "," << Y(s.high[r]) << " ";
    for (size_t r = s.steps.size(); r-- > 0;) band << X(s.steps[r]) << "," << Y(s.low[r]) << " ";
    for (size_t r = 0; r < s.steps.size(); ++r) line << X(s.steps[r]) << "," << Y(s.mean[r]) << " ";
    svg << "<polygon points=\"" << band.str() << "\" fill=\"" << colour
        << "\" fill-opacity=\"0.15\" stroke=\"none\"/><polyline points=\"" << line.str()
        << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\"/>";
  }
  svg << "</svg>";
  return svg.str();
}

std::string Legend(const Results& results) {
  std::ostringstream out;
  out << "<p class=\"legend\">";
  size_t i = 0;
  for (const VariantResults& v : results.variants) {
    out << "<span><i style=\"background:" << kColours[i++ % std::size(kColours)] << "\"></i>"
        << Escape(v.plan.name) << "</span> ";
  }
  out << "(lines: mean over seeds; bands: lowest to highest seed)</p>";
  return out.str();
}

std::string SummaryTable(const Results& results) {
  const bool mnist = results.study.dataset == "mnist";
  std::vector<std::pair<std::string, std::string>> metrics = {
      {"d_loss", "D loss"}, {"g_loss", "G loss"}, {"d_real", "D(x)"}, {"d_fake", "D(G(z))"},
      {"grad_norm_first_layer", "|grad| layer 1"}};
  if (mnist) {
    metrics.insert(metrics.end(), {{"fcd", "FCD"}, {"class_coverage", "classes"},
                                   {"class_kl", "class KL"}});
  } else {
    metrics.insert(metrics.end(), {{"modes_covered", "modes"}, {"high_quality_share", "HQ share"}});
  }
  metrics.push_back({"step_ms", "ms/step"});
  std::ostringstream out;
  out << "<table><thead><tr><th>variant</th><th>seeds</th>";
  for (const auto& m : metrics) out << "<th>" << Escape(m.second) << "</th>";
  out << "<th>D loss per term</th>";
  out << "<th>zero fraction per layer</th><th>&le; 0 per layer</th><th>dead channels per layer</th></tr></thead><tbody>";
  for (const VariantResults& v : results.variants) {
    out << "<tr><td>" << Escape(v.plan.name) << "</td><td>" << v.runs.size() << "</td>";
    for (const auto& m : metrics) {
      const Summary& s = v.summary.at(m.first);
      out << "<td>" << Number(s.mean);
      if (s.n < 2) {
        out << "<br><small>(1 seed: no interval)</small></td>";
        continue;
      }
      out << " &plusmn; " << Number(s.std, "%.2g") << "<br><small>[" << Number(s.ci_low) << ", "
          << Number(s.ci_high) << "]</small></td>";
    }
    const Summary& d = v.summary.at("d_loss");
    out << "<td>" << Number(d.mean / 2);
    if (d.n >= 2) out << "<br><small>[" << Number(d.ci_low / 2) << ", " << Number(d.ci_high / 2) << "]</small>";
    out << "</td>";
    for (const PerLayer* values : {&v.final.sparsity_zero, &v.final.sparsity_nonpos, &v.final.dead_channels}) {
      out << "<td>";
      for (double x : *values) out << Number(x, "%.2f") << " ";
      out << "</td>";
    }
    out << "</tr>";
  }
  out << "</tbody></table><p class=\"note\">mean &plusmn; sample std over seeds, with the "
         "Student-t 95% interval of the mean (n - 1 degrees of freedom) below; D loss is the sum "
         "of the real and fake terms (chance: 2 ln 2 = 1.386), D loss per term is half of it "
         "(chance: ln 2 = 0.693, the article's 0.69); the final "
         "values average the last tenth of the logged steps; quality metrics use "
      << "generated samples from the final generator.</p>";
  return out.str();
}

std::string ClaimsTable(const std::vector<Claim>& claims) {
  std::ostringstream html;
  html << "<table><thead><tr><th>claim</th><th>setting</th><th>measured: mean [95% Student-t "
          "interval over seeds]</th><th>verdict</th></tr></thead><tbody>";
  for (const Claim& c : claims) {
    for (const ClaimSetting& s : c.settings) {
      html << "<tr><td>" << Escape(c.text) << "</td><td>" << Escape(s.setting) << "</td><td>";
      for (const ClaimPart& p : s.parts) html << Escape(ClaimPartText(p)) << "<br>";
      html << "</td><td><b>" << Escape(s.verdict) << "</b></td></tr>";
    }
    html << "<tr><td></td><td><b>overall</b></td><td></td><td><b>" << Escape(c.verdict)
         << "</b></td></tr>";
  }
  html << "</tbody></table><p class=\"note\">How each claim is measured, and the bounds (fixed "
          "before the study ran): gan/claims.h and docs/study/README.md. A bound holds when the "
          "whole interval satisfies it, fails when none of it does, else is unclear; fewer than 3 "
          "seeds give no verdict.</p>";
  return html.str();
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
    out << "<div class=\"grids\"><h3>" << Escape(v.plan.name) << "</h3>";
    for (const auto& [step, path] : images) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      out << "<figure><img alt=\"samples at step " << step << "\" src=\"data:image/png;base64,"
          << Base64(bytes) << "\"><figcaption>step " << step << "</figcaption></figure>";
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
      << "layer-2 pre-activations (" << Escape(p.source)
      << "), compared with the exact product of the f32 input and the slope.</p><table><thead><tr>"
         "<th>format</th><th>negative inputs</th><th>flushed to exactly 0</th><th>max rel. "
         "error</th><th>mean rel. error</th></tr></thead><tbody>";
  for (const PrecisionRow& r : p.rows) {
    out << "<tr><td>" << Escape(r.format) << "</td><td>" << r.negatives << "</td><td>"
        << r.flushed_to_zero << "</td><td>" << Number(r.max_relative_error, "%.3g") << "</td><td>"
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

std::string RenderReport(const Results& results, const std::string& run_dir) {
  const Study& study = results.study;
  std::ostringstream html;
  html << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>leaky GAN lab: "
       << Escape(study.name) << "</title><style>"
       << "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#222}"
       << "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:4px 6px;"
       << "text-align:right;vertical-align:top}th{background:#f3f3f3}td:first-child{text-align:left}"
       << ".charts{display:flex;flex-wrap:wrap;gap:8px}.chart{width:380px;height:200px;border:1px "
       << "solid #eee}.ct{font-size:12px;font-weight:600}.yl{font-size:10px;text-anchor:end}"
       << ".xl{font-size:10px;text-anchor:end}.xs{font-size:10px}.grid{stroke:#eee}"
       << ".legend span{margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;"
       << "margin-right:4px;vertical-align:middle}.grids figure{display:inline-block;margin:4px}"
       << ".grids img{image-rendering:pixelated;width:240px}.note{color:#555}</style></head><body>";
  html << "<h1>GAN lab: " << Escape(study.name) << "</h1><p>Data: <b>" << Escape(study.dataset)
       << "</b>, " << study.steps << " steps, batch " << study.batch << ", " << study.seeds
       << " seed(s), " << study.threads << " thread(s). Layers a variant does "
       << "not choose use " << Escape(study.base_activation) << ".</p>"
       << "<p class=\"note\">Models: " << Escape(study.models) << "</p>";
  if (study.classifier) {
    const ClassifierInfo& c = *study.classifier;
    html << "<p class=\"note\">Quality classifier: trained on " << c.train_digits
         << " digits, accuracy " << Number(100 * c.held_out_accuracy, "%.2f") << "% on the "
         << c.held_out_digits
         << " held out; FCD's real reference is held-out digits. <b>Real-vs-real FCD (the floor): "
         << Number(c.real_fcd_floor) << "</b> (two disjoint sets of " << study.samples
         << " real digits).</p>";
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
      for (const std::string& s : p.missing_shards) html << " " << Escape(s);
    }
    html << ":";
    for (const std::string& r : p.missing_runs) html << " " << Escape(r) << ";";
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
    html << "; " << Escape(s.what) << ").</p>";
  }
  html << "<h2>Summary</h2>" << SummaryTable(results);
  if (results.claims) {
    html << "<h2>The article's claims, measured</h2>" << ClaimsTable(*results.claims);
  }
  html << "<h2>Training curves</h2>"
       << Legend(results) << "<div class=\"charts\">";
  for (const auto& [field, title] : std::vector<std::pair<double Row::*, std::string>>{
           {&Row::d_loss, "D loss"}, {&Row::g_loss, "G loss"}, {&Row::d_real, "D(x)"},
           {&Row::d_fake, "D(G(z))"}, {&Row::grad_norm, "gradient norm at D layer 1"},
           {&Row::step_ms, "ms per step"}}) {
    html << Chart(results, RowCurve(field), title);
  }
  if (study.dataset == "mnist") {
    html << Chart(results, QualityCurve(&Quality::fcd), "FCD (lower is better)")
         << Chart(results, QualityCurve(&Quality::class_coverage), "classes covered");
  } else {
    html << Chart(results, QualityCurve(&Quality::modes_covered), "modes covered")
         << Chart(results, QualityCurve(&Quality::high_quality_share), "high-quality share");
  }
  html << "</div><h2>Activation sparsity and dead channels</h2><div class=\"charts\">";
  for (int layer = 0; layer < 4; ++layer) {
    const std::string l = " (layer " + std::to_string(layer + 1) + ")";
    html << Chart(results, RowCurve({&Row::zero, layer}), "fraction exactly 0" + l)
         << Chart(results, RowCurve({&Row::nonpos, layer}), "fraction <= 0" + l)
         << Chart(results, RowCurve({&Row::dead, layer}), "dead channels" + l);
  }
  // Grids are written for the run's first seed (--first-seed; 0 unless given).
  html << "</div><h2>Samples (seed " << study.first_seed << ", fixed noise)</h2>"
       << SampleGrids(results, run_dir)
       << "<h2>Precision of the negative side in 16-bit formats</h2>" << PrecisionSection(results)
       << "</body></html>\n";
  return html.str();
}

}  // namespace leaky::gan

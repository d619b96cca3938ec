#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

#include "claims.h"
#include "png.h"

namespace leaky::gan {
namespace {

using json = nlohmann::json;

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

// One value of a history row: a number, or element `layer` of an array.
double Value(const json& row, const std::string& key, int layer) {
  const json& v = row[key];
  return layer < 0 ? v.get<double>() : v[static_cast<size_t>(layer)].get<double>();
}

// A line per variant (mean over seeds) with a band from the lowest to the
// highest seed.
// `history`: "history" (the logged rows) or "quality_history".
std::string Chart(const json& results, const std::string& key, int layer, const std::string& title,
                  const char* history = "history") {
  const double width = 380, height = 200, left = 48, right = 10, top = 24, bottom = 28;
  struct Series {
    std::vector<double> steps, mean, low, high;
  };
  std::vector<Series> all;
  double x_max = 1, y_min = INFINITY, y_max = -INFINITY;
  for (const json& v : results["variants"]) {
    Series s;
    if (!v.contains(history)) continue;
    const json& histories = v[history];
    const size_t rows = histories.empty() ? 0 : histories[0].size();
    for (size_t r = 0; r < rows; ++r) {
      double sum = 0, low = INFINITY, high = -INFINITY;
      for (const json& h : histories) {
        const double value = Value(h[r], key, layer);
        sum += value;
        low = std::min(low, value);
        high = std::max(high, value);
      }
      s.steps.push_back(histories[0][r]["step"].get<double>());
      s.mean.push_back(sum / static_cast<double>(histories.size()));
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

std::string Legend(const json& results) {
  std::ostringstream out;
  out << "<p class=\"legend\">";
  size_t i = 0;
  for (const json& v : results["variants"]) {
    out << "<span><i style=\"background:" << kColours[i++ % std::size(kColours)] << "\"></i>"
        << Escape(v["name"].get<std::string>()) << "</span> ";
  }
  out << "(lines: mean over seeds; bands: lowest to highest seed)</p>";
  return out.str();
}

std::string SummaryTable(const json& results) {
  const bool mnist = results["dataset"] == "mnist";
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
  for (const json& v : results["variants"]) {
    out << "<tr><td>" << Escape(v["name"].get<std::string>()) << "</td><td>"
        << v["seeds_completed"].get<int>() << "</td>";
    for (const auto& m : metrics) {
      const json& s = v["summary"][m.first];
      out << "<td>" << Number(s["mean"].get<double>());
      if (s["n"].get<int>() < 2) {
        out << "<br><small>(1 seed: no interval)</small></td>";
        continue;
      }
      out << " &plusmn; " << Number(s["std"].get<double>(), "%.2g") << "<br><small>["
          << Number(s["ci_low"].get<double>()) << ", " << Number(s["ci_high"].get<double>())
          << "]</small></td>";
    }
    const json& d = v["summary"]["d_loss"];
    out << "<td>" << Number(d["mean"].get<double>() / 2);
    if (d["n"].get<int>() >= 2) {
      out << "<br><small>[" << Number(d["ci_low"].get<double>() / 2) << ", "
          << Number(d["ci_high"].get<double>() / 2) << "]</small>";
    }
    out << "</td>";
    for (const char* key : {"sparsity_zero", "sparsity_nonpos", "dead_channels"}) {
      out << "<td>";
      for (const json& x : v["final"][key]) out << Number(x.get<double>(), "%.2f") << " ";
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

std::string ClaimsTable(const json& claims) {
  std::ostringstream html;
  html << "<table><thead><tr><th>claim</th><th>setting</th><th>measured: mean [95% Student-t "
          "interval over seeds]</th><th>verdict</th></tr></thead><tbody>";
  for (const json& c : claims) {
    for (const json& s : c["settings"]) {
      html << "<tr><td>" << Escape(c["claim"]) << "</td><td>" << Escape(s["setting"]) << "</td><td>";
      for (const json& p : s["parts"]) html << Escape(ClaimPartText(p)) << "<br>";
      html << "</td><td><b>" << Escape(s["verdict"]) << "</b></td></tr>";
    }
    html << "<tr><td></td><td><b>overall</b></td><td></td><td><b>" << Escape(c["verdict"])
         << "</b></td></tr>";
  }
  html << "</tbody></table><p class=\"note\">How each claim is measured, and the bounds (fixed "
          "before the study ran): gan/claims.h and docs/study/README.md. A bound holds when the "
          "whole interval satisfies it, fails when none of it does, else is unclear; fewer than 3 "
          "seeds give no verdict.</p>";
  return html.str();
}

std::string SampleGrids(const json& results, const std::string& run_dir) {
  std::ostringstream out;
  for (const json& v : results["variants"]) {
    const std::filesystem::path dir = std::filesystem::path(run_dir) / v["name"].get<std::string>();
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
    out << "<div class=\"grids\"><h3>" << Escape(v["name"].get<std::string>()) << "</h3>";
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

std::string PrecisionTable(const json& results) {
  if (!results.contains("precision")) return "<p>No pre-activations were captured.</p>";
  const json& p = results["precision"];
  std::ostringstream out;
  out << "<p>LeakyReLU(" << Number(p["slope"].get<double>()) << ") applied to the discriminator's "
      << "layer-2 pre-activations (" << Escape(p["source"].get<std::string>())
      << "), compared with the exact product of the f32 input and the slope.</p><table><thead><tr>"
         "<th>format</th><th>negative inputs</th><th>flushed to exactly 0</th><th>max rel. "
         "error</th><th>mean rel. error</th></tr></thead><tbody>";
  for (const json& r : p["rows"]) {
    out << "<tr><td>" << Escape(r["format"].get<std::string>()) << "</td><td>"
        << r["negatives"].get<long long>() << "</td><td>" << r["flushed_to_zero"].get<long long>()
        << "</td><td>" << Number(r["max_relative_error"].get<double>(), "%.3g") << "</td><td>"
        << Number(r["mean_relative_error"].get<double>(), "%.3g") << "</td></tr>";
  }
  out << "</tbody></table>";
  return out.str();
}

}  // namespace

std::string RenderReport(const json& results, const std::string& run_dir) {
  std::ostringstream html;
  html << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>leaky GAN lab: "
       << Escape(results["name"].get<std::string>()) << "</title><style>"
       << "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1280px;color:#222}"
       << "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:4px 6px;"
       << "text-align:right;vertical-align:top}th{background:#f3f3f3}td:first-child{text-align:left}"
       << ".charts{display:flex;flex-wrap:wrap;gap:8px}.chart{width:380px;height:200px;border:1px "
       << "solid #eee}.ct{font-size:12px;font-weight:600}.yl{font-size:10px;text-anchor:end}"
       << ".xl{font-size:10px;text-anchor:end}.xs{font-size:10px}.grid{stroke:#eee}"
       << ".legend span{margin-right:14px}.legend i{display:inline-block;width:12px;height:12px;"
       << "margin-right:4px;vertical-align:middle}.grids figure{display:inline-block;margin:4px}"
       << ".grids img{image-rendering:pixelated;width:240px}.note{color:#555}</style></head><body>";
  html << "<h1>GAN lab: " << Escape(results["name"].get<std::string>()) << "</h1><p>Data: <b>"
       << Escape(results["dataset"].get<std::string>()) << "</b>, " << results["steps"].get<int>()
       << " steps, batch " << results["batch"].get<int>() << ", " << results["seeds"].get<int>()
       << " seed(s), " << results["threads"].get<int>() << " thread(s). Layers a variant does "
       << "not choose use " << Escape(results["base_activation"].get<std::string>()) << ".</p>"
       << "<p class=\"note\">Models: " << Escape(results["models"].get<std::string>()) << "</p>";
  if (results.contains("classifier")) {
    const json& c = results["classifier"];
    html << "<p class=\"note\">Quality classifier: trained on " << c["train_digits"].get<int>()
         << " digits, accuracy " << Number(100 * c["held_out_accuracy"].get<double>(), "%.2f")
         << "% on the " << c["held_out_digits"].get<int>()
         << " held out; FCD's real reference is held-out digits. <b>Real-vs-real FCD (the floor): "
         << Number(c["real_fcd_floor"].get<double>()) << "</b> (two disjoint sets of "
         << results["samples"].get<int>() << " real digits).</p>";
  }
  if (results["stopped_early"].get<bool>()) {
    html << "<p><b>Stopped early (Ctrl-C): only the runs that finished are shown.</b></p>";
  }
  if (results.contains("partial")) {
    const json& p = results["partial"];
    html << "<p><b>Partial study (merged with --allow-partial): " << p["missing_runs"].size()
         << " run(s) missing";
    if (!p["missing_shards"].empty()) {
      html << ", from shard(s)";
      for (const json& s : p["missing_shards"]) html << " " << Escape(s.get<std::string>());
    }
    html << ":";
    for (const json& r : p["missing_runs"]) html << " " << Escape(r.get<std::string>()) << ";";
    html << "</b></p>";
  }
  if (results.contains("threads_per_part")) {
    html << "<p class=\"note\">Merged from parts run at different thread counts ("
         << Escape(results["threads_per_part"].dump()) << "): results can differ in the last "
         << "bits from a run at one thread count.</p>";
  }
  if (results.contains("speed_check")) {
    const json& s = results["speed_check"];
    html << "<p>Speed check, same run: a discriminator training step with this library's "
            "LeakyReLU took " << Number(s["leaky_ms"].get<double>()) << " ms, with "
            "torch::nn::LeakyReLU " << Number(s["torch_ms"].get<double>()) << " ms (ratio "
         << Number(s["ratio"].get<double>(), "%.3f");
    if (s.contains("ratio_quartiles")) {
      html << ", quartiles " << Number(s["ratio_quartiles"][0].get<double>(), "%.3f") << " to "
           << Number(s["ratio_quartiles"][1].get<double>(), "%.3f");
    }
    html << "; " << Escape(s["what"].get<std::string>()) << ").</p>";
  }
  html << "<h2>Summary</h2>" << SummaryTable(results);
  if (results.contains("claims")) {
    html << "<h2>The article's claims, measured</h2>" << ClaimsTable(results["claims"]);
  }
  html << "<h2>Training curves</h2>"
       << Legend(results) << "<div class=\"charts\">";
  for (const auto& [key, title] : std::vector<std::pair<std::string, std::string>>{
           {"d_loss", "D loss"}, {"g_loss", "G loss"}, {"d_real", "D(x)"}, {"d_fake", "D(G(z))"},
           {"grad_norm_first_layer", "gradient norm at D layer 1"}, {"step_ms", "ms per step"}}) {
    html << Chart(results, key, -1, title);
  }
  if (results["dataset"] == "mnist") {
    html << Chart(results, "fcd", -1, "FCD (lower is better)", "quality_history")
         << Chart(results, "class_coverage", -1, "classes covered", "quality_history");
  } else {
    html << Chart(results, "modes_covered", -1, "modes covered", "quality_history")
         << Chart(results, "high_quality_share", -1, "high-quality share", "quality_history");
  }
  html << "</div><h2>Activation sparsity and dead channels</h2><div class=\"charts\">";
  for (int layer = 0; layer < 4; ++layer) {
    const std::string l = " (layer " + std::to_string(layer + 1) + ")";
    html << Chart(results, "sparsity_zero", layer, "fraction exactly 0" + l)
         << Chart(results, "sparsity_nonpos", layer, "fraction <= 0" + l)
         << Chart(results, "dead_channels", layer, "dead channels" + l);
  }
  // Grids are written for the run's first seed (--first-seed; 0 unless given).
  html << "</div><h2>Samples (seed " << results.value("first_seed", 0)
       << ", fixed noise)</h2>" << SampleGrids(results, run_dir)
       << "<h2>Precision of the negative side in 16-bit formats</h2>" << PrecisionTable(results)
       << "</body></html>\n";
  return html.str();
}

}  // namespace leaky::gan

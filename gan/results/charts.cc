#include "charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "measures.h"

namespace leaky::gan {
namespace {

using json = nlohmann::json;

constexpr const char* kBaselineActivation = "lrelu:0.2";
constexpr const char* kVariantColour = "#1f77b4";
constexpr const char* kBaselineColour = "#7f7f7f";

// A panel: one variant, and the baseline drawn beside it (none when the
// variant is the baseline, or its norm setting has none).
struct Panel {
  const VariantResults* variant;
  const VariantResults* baseline;
};

const VariantResults* BaselineOf(const Results& results, const VariantResults& v) {
  for (const VariantResults& b : results.variants) {
    if (b.plan.activation == kBaselineActivation && b.plan.d_norm == v.plan.d_norm) return &b;
  }
  return nullptr;
}

// Every variant but the baselines gets a panel; a baseline gets one only
// when it is alone in its norm setting (nothing else would show it).
std::vector<Panel> Panels(const Results& results) {
  std::vector<Panel> panels;
  for (const VariantResults& v : results.variants) {
    const VariantResults* baseline = BaselineOf(results, v);
    if (baseline == &v) {
      const bool alone = std::none_of(
          results.variants.begin(), results.variants.end(),
          [&](const VariantResults& o) { return &o != &v && o.plan.d_norm == v.plan.d_norm; });
      if (alone) panels.push_back({&v, nullptr});
      continue;
    }
    panels.push_back({&v, baseline});
  }
  return panels;
}

bool AnyBaseline(const std::vector<Panel>& panels) {
  return std::any_of(panels.begin(), panels.end(), [](const Panel& p) { return p.baseline; });
}

// 4 significant digits: the page's data stays small and no reader needs more.
double Round4(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.4g", v);
  return std::strtod(buffer, nullptr);
}

std::string Short(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", v);
  return buffer;
}

// A run's curve: (step, value) at each logged row or quality point.
using Curve = std::function<std::vector<std::pair<int, double>>(const Run&)>;

Curve RowCurve(const RowField& field) {
  return [field](const Run& run) {
    std::vector<std::pair<int, double>> points;
    for (const Row& r : run.history) points.emplace_back(r.step, field(r));
    return points;
  };
}

Curve QualityCurve(std::optional<double> Quality::*measure) {
  return [measure](const Run& run) {
    std::vector<std::pair<int, double>> points;
    for (const QualityPoint& p : run.quality_history) {
      if (p.quality.*measure) points.emplace_back(p.step, *(p.quality.*measure));
    }
    return points;
  };
}

// A variant's curve over seeds: mean, lowest and highest per step.
struct Point {
  int step;
  double mean, low, high;
};

std::vector<Point> OverSeeds(const VariantResults& v, const Curve& curve) {
  std::map<int, std::vector<double>> by_step;
  for (const Run& run : v.runs) {
    for (const auto& [step, value] : curve(run)) {
      if (std::isfinite(value)) by_step[step].push_back(value);
    }
  }
  std::vector<Point> points;
  for (const auto& [step, values] : by_step) {
    double sum = 0;
    for (double x : values) sum += x;
    points.push_back({step, sum / static_cast<double>(values.size()),
                      *std::min_element(values.begin(), values.end()),
                      *std::max_element(values.begin(), values.end())});
  }
  return points;
}

std::string BaselineLabel(const Panel&) {
  return std::string(kBaselineActivation) + " with the same norm (baseline)";
}
const char* kVariantLabel =
    "the variant named above the panel";  // no quote: a Vega expression holds it

// The y scale: a log scale where `log` asks for it (values that span
// decades: FCD), else linear over the values, or over their 1st-99th
// percentile (widened 5% each way) when a few values would flatten the
// rest; `note` then says what is off the chart.
struct YScale {
  json scale = json::object(), axis = json::object();
  std::string note;
};

YScale ChooseY(const std::vector<std::pair<double, std::string>>& values, bool log) {
  YScale y;
  if (values.empty()) return y;
  std::vector<double> sorted;
  for (const auto& v : values) sorted.push_back(v.first);
  std::sort(sorted.begin(), sorted.end());
  const double lowest = sorted.front(), highest = sorted.back();
  // One value throughout (a flat line at 4 digits): a domain around it, or
  // Vega draws a zero-height scale with a single misleading tick.
  if (highest - lowest <= 1e-9 * std::max(1.0, std::fabs(highest))) {
    const double half = std::max(0.01 * std::fabs(highest), 1e-3);
    y.scale = {{"domain", {Round4(lowest - half), Round4(highest + half)}},
               {"nice", true},
               {"zero", false}};
    return y;
  }
  if (lowest > 0 && log) {
    y.scale = {{"type", "log"}};
    y.axis = {{"values", toolkit::LogTicks(lowest, highest)}, {"format", "~g"}};
    if (y.axis["values"].size() < 2) y.axis.erase("values");
    return y;
  }
  const auto quantile = [&](double p) {
    const double at = p * static_cast<double>(sorted.size() - 1);
    const size_t below = static_cast<size_t>(at);
    const size_t above = std::min(below + 1, sorted.size() - 1);
    return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
  };
  const double q_low = quantile(0.01), q_high = quantile(0.99), pad = 0.05 * (q_high - q_low);
  // Cut only when the full range is over 1.5 times the robust one: a steady
  // trend keeps its whole range.
  if (q_high > q_low && highest - lowest > 1.5 * (q_high - q_low + 2 * pad)) {
    const double from = std::max(lowest, q_low - pad), to = std::min(highest, q_high + pad);
    y.scale = {{"domain", {Round4(from), Round4(to)}}, {"nice", true}, {"zero", false}};
    const auto& top = *std::max_element(values.begin(), values.end());
    const auto& bottom = *std::min_element(values.begin(), values.end());
    y.note =
        "y axis cut to the 1st-99th percentile of the values shown (widened 5%), so that a "
        "few spikes do not flatten the rest: ";
    int off = 0;
    for (double v : sorted) off += v < from || v > to;
    y.note += std::to_string(off) + " of " + std::to_string(sorted.size()) + " values are off it";
    if (top.first > to) y.note += ", the highest " + Short(top.first) + " (" + top.second + ")";
    if (bottom.first < from)
      y.note += ", the lowest " + Short(bottom.first) + " (" + bottom.second + ")";
  } else {
    y.scale = {{"zero", false}};
  }
  return y;
}

// `text` as lines of at most about `width` characters (a chart's subtitle
// does not wrap by itself).
json Lines(const std::string& text, size_t width) {
  json lines = json::array();
  std::string line;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

json ColourScale(const std::vector<Panel>& panels) {
  json domain = {kVariantLabel}, range = {kVariantColour};
  std::vector<std::string> baselines;
  for (const Panel& p : panels) {
    if (p.baseline &&
        std::find(baselines.begin(), baselines.end(), BaselineLabel(p)) == baselines.end()) {
      baselines.push_back(BaselineLabel(p));
    }
  }
  for (const std::string& b : baselines) {
    domain.push_back(b);
    range.push_back(kBaselineColour);
  }
  return {{"domain", domain}, {"range", range}};
}

// The rows of one measure: each variant's points under the panels it
// appears in (a baseline under every panel it stands beside; Vega-Lite's
// flatten gives each panel its copy). `extra` tags every row (a layer).
void AddRows(const std::vector<Panel>& panels, const Curve& curve, const json& extra, json* rows,
             std::vector<std::pair<double, std::string>>* values) {
  std::map<const VariantResults*, std::pair<std::vector<std::string>, std::string>> shown;
  for (const Panel& p : panels) {
    shown[p.variant].first.push_back(p.variant->plan.name);
    shown[p.variant].second = kVariantLabel;
    if (p.baseline) {
      shown[p.baseline].first.push_back(p.variant->plan.name);
      shown[p.baseline].second = BaselineLabel(p);
    }
  }
  for (const auto& [variant, where] : shown) {
    for (const Point& point : OverSeeds(*variant, curve)) {
      json row = {{"panels", where.first},    {"line", where.second},
                  {"step", point.step},       {"mean", Round4(point.mean)},
                  {"low", Round4(point.low)}, {"high", Round4(point.high)}};
      row.update(extra);
      rows->push_back(std::move(row));
      const std::string at = variant->plan.name + ", step " + std::to_string(point.step);
      // The scale is chosen from the values as drawn (rounded).
      values->emplace_back(Round4(point.mean), at);
      values->emplace_back(Round4(point.low), at);
      values->emplace_back(Round4(point.high), at);
    }
  }
}

// The layers of a panel: a band from the lowest to the highest seed (when
// there are several), the mean line, dashed for the baseline.
json PanelLayers(const std::string& y_title, const YScale& y, const json& colour, bool points,
                 int seeds) {
  const json x = {{"field", "step"},
                  {"type", "quantitative"},
                  {"title", "step"},
                  {"axis", {{"tickCount", 4}, {"format", ",d"}}}};
  json y_axis = y.axis;
  y_axis["title"] = y_title;
  y_axis["tickCount"] = 5;
  const json legend = {{"orient", "top"},
                       {"direction", "horizontal"},
                       {"symbolType", "stroke"},
                       {"symbolStrokeWidth", 2},
                       {"symbolSize", 300}};
  const json colour_encoding = {{"field", "line"},
                                {"type", "nominal"},
                                {"scale", colour},
                                {"title", nullptr},
                                {"legend", legend}};
  // The band's colour by condition, not by a scale: a second legend
  // (or a merged one with a disabled half) would not say more.
  const json band_fill = {{"condition",
                           {{"test", "datum.line === '" + std::string(kVariantLabel) + "'"},
                            {"value", kVariantColour}}},
                          {"value", kBaselineColour}};
  json line_mark = {{"type", "line"}, {"clip", true}, {"strokeWidth", 1.6}};
  if (points) line_mark["point"] = {{"size", 14}};
  json layers = json::array();
  if (seeds > 1) {
    layers.push_back(
        {{"mark", {{"type", "area"}, {"opacity", 0.2}, {"clip", true}}},
         {"encoding",
          {{"x", x},
           {"y",
            {{"field", "low"}, {"type", "quantitative"}, {"scale", y.scale}, {"axis", y_axis}}},
           {"y2", {{"field", "high"}}},
           {"fill", band_fill}}}});
  }
  layers.push_back(
      {{"mark", line_mark},
       {"encoding",
        {{"x", x},
         {"y", {{"field", "mean"}, {"type", "quantitative"}, {"scale", y.scale}, {"axis", y_axis}}},
         {"color", colour_encoding},
         {"strokeDash",
          {{"field", "line"},
           {"type", "nominal"},
           {"title", nullptr},
           {"scale",
            {{"domain", colour["domain"]},
             {"range",
              [&] {
                json dashes = json::array({json::array()});
                for (size_t i = 1; i < colour["domain"].size(); ++i) {
                  dashes.push_back({5, 3});
                }
                return dashes;
              }()}}},
           {"legend", legend}}},
         {"tooltip", json::array({{{"field", "step"}},
                                  {{"field", "mean"}, {"format", ".4~g"}},
                                  {{"field", "low"}, {"format", ".4~g"}},
                                  {{"field", "high"}, {"format", ".4~g"}}})}}}});
  return layers;
}

int Seeds(const Results& results) {
  size_t seeds = 0;
  for (const VariantResults& v : results.variants) seeds = std::max(seeds, v.runs.size());
  return static_cast<int>(seeds);
}

std::string Caption(const Results& results, const std::vector<Panel>& panels) {
  const int seeds = Seeds(results);
  std::string text = seeds > 1 ? "Lines: the mean over " + std::to_string(seeds) +
                                     " seeds; bands: the lowest to the highest seed. "
                               : "1 seed: lines are that seed's values (no band). ";
  if (AnyBaseline(panels)) {
    text += "A panel per variant; the grey dashed line in each is " +
            std::string(kBaselineActivation) +
            " with the same norm setting, the baseline every panel compares with.";
  } else {
    text += "A panel per variant (the study has no " + std::string(kBaselineActivation) +
            " baseline to draw beside them).";
  }
  return text;
}

json PanelSort(const std::vector<Panel>& panels) {
  json sort = json::array();
  for (const Panel& p : panels) sort.push_back(p.variant->plan.name);
  return sort;
}

}  // namespace

std::string TrainingCharts(const Results& results, const toolkit::VegaScripts& scripts) {
  if (!scripts.ok()) return "<p class=\"vega-missing\">" + scripts.missing + ".</p>";
  const std::vector<Panel> panels = Panels(results);
  struct Measure {
    Curve curve;
    std::string title, y_title;
    bool log, points;
  };
  std::vector<Measure> measures = {
      {RowCurve(&Row::d_loss), "D loss (real + fake terms; chance 1.386)", "D loss", false, false},
      {RowCurve(&Row::g_loss), "G loss", "G loss", false, false},
      {RowCurve(&Row::d_real), "D(x): D's mean output on real images", "D(x)", false, false},
      {RowCurve(&Row::d_fake), "D(G(z)): D's mean output on generated samples", "D(G(z))", false,
       false},
      {RowCurve(&Row::grad_norm), "Gradient norm at D's layer 1", "|grad|", false, false},
      {RowCurve(&Row::step_ms), "Milliseconds per training step", "ms per step", false, false}};
  if (results.study.images()) {
    measures.push_back(
        {QualityCurve(&Quality::fcd), "FCD (lower is better; log axis)", "FCD", true, true});
    measures.push_back({QualityCurve(&Quality::class_coverage), "Classes covered (of 10)",
                        "classes", false, true});
  } else {
    measures.push_back(
        {QualityCurve(&Quality::modes_covered), "Modes covered (of 8)", "modes", false, true});
    measures.push_back({QualityCurve(&Quality::high_quality_share), "High-quality share of samples",
                        "share", false, true});
  }
  const json colour = ColourScale(panels);
  const int columns = std::min<int>(4, static_cast<int>(panels.size()));
  // Panels share about 1,000 pixels of a laptop's window (the legend and
  // the axes take the rest): two panels are not two small squares at the
  // left of an empty page.
  const int panel_width = std::min(360, 1000 / std::max(1, columns) - 50);
  std::string html = "<p class=\"note\">" + Caption(results, panels) + "</p>";
  int index = 0;
  for (const Measure& m : measures) {
    json rows = json::array();
    std::vector<std::pair<double, std::string>> values;
    AddRows(panels, m.curve, json::object(), &rows, &values);
    if (rows.empty()) continue;
    const YScale y = ChooseY(values, m.log);
    json title = {{"text", m.title}, {"anchor", "start"}, {"fontSize", 14}};
    if (!y.note.empty()) title["subtitle"] = Lines(y.note, 110);
    const json spec = {{"title", title},
                       {"data", {{"values", rows}}},
                       {"transform", json::array({{{"flatten", {"panels"}}, {"as", {"panel"}}}})},
                       {"columns", columns},
                       {"facet",
                        {{"field", "panel"},
                         {"type", "nominal"},
                         {"sort", PanelSort(panels)},
                         {"title", nullptr},
                         {"header", {{"labelFontSize", 12}, {"labelFontWeight", "bold"}}}}},
                       {"spec",
                        {{"width", panel_width},
                         {"height", 140},
                         {"layer", PanelLayers(m.y_title, y, colour, m.points, Seeds(results))}}}};
    html += toolkit::VegaChart(scripts, "training-" + std::to_string(index++), spec);
  }
  return html;
}

namespace {

// Which panels of a per-layer chart are flat at 0 (every seed's value 0 at
// every logged step), said in words under the chart: a flat panel is the
// measure's value, not missing data (a study report had 32 such panels and
// no word on them). Empty when no panel is flat.
std::string FlatPanelsNote(const std::vector<Panel>& panels, PerLayer Row::*field,
                           const std::string& what) {
  std::vector<const VariantResults*> shown;
  for (const Panel& p : panels) {
    for (const VariantResults* v : {p.variant, p.baseline}) {
      if (v != nullptr && std::find(shown.begin(), shown.end(), v) == shown.end()) {
        shown.push_back(v);
      }
    }
  }
  int flat = 0, curves = 0;
  std::string where;
  for (const VariantResults* v : shown) {
    std::string layers;
    for (int layer = 0; layer < 4; ++layer) {
      const std::vector<Point> points = OverSeeds(*v, RowCurve({field, layer}));
      if (points.empty()) continue;
      ++curves;
      const bool zero = std::all_of(points.begin(), points.end(),
                                    [](const Point& p) { return p.low == 0 && p.high == 0; });
      if (!zero) continue;
      ++flat;
      layers += (layers.empty() ? "" : ", ") + std::to_string(layer + 1);
    }
    if (!layers.empty()) {
      where += (where.empty() ? "" : "; ") + v->plan.name +
               (layers.find(',') == std::string::npos ? " layer " : " layers ") + layers;
    }
  }
  if (flat == 0) return "";
  if (flat == curves) {
    return "<p class=\"note\">" + what +
           " at any logged step or seed, in any layer or variant: "
           "the flat lines at 0 are the measure, not missing data.</p>";
  }
  return "<p class=\"note\">" + what + " at any logged step or seed in " + std::to_string(flat) +
         " of " + std::to_string(curves) + " curves (" + toolkit::HtmlEscape(where) +
         "): their flat lines at 0 are the measure, not missing data.</p>";
}

}  // namespace

std::string LayerCharts(const Results& results, const toolkit::VegaScripts& scripts) {
  if (!scripts.ok()) return "<p class=\"vega-missing\">" + scripts.missing + ".</p>";
  const std::vector<Panel> panels = Panels(results);
  const json colour = ColourScale(panels);
  std::string html = "<p class=\"note\">" + Caption(results, panels) +
                     " A row of panels per variant, a column per discriminator layer.</p>";
  struct Measure {
    PerLayer Row::*field;
    std::string title, flat;  // flat: what a curve at 0 throughout means
  };
  const Measure measures[] = {
      {&Row::zero, "Fraction of activations exactly 0", "No activation exactly 0"},
      {&Row::nonpos, "Fraction of activations \u2264 0", "No activation at or below 0"},
      {&Row::dead, "Dead channels (never above 0 on the logged batch)", "No channel died"}};
  int index = 0;
  for (const auto& [field, title, flat] : measures) {
    json rows = json::array();
    std::vector<std::pair<double, std::string>> values;
    for (int layer = 0; layer < 4; ++layer) {
      AddRows(panels, RowCurve({field, layer}), {{"layer", "layer " + std::to_string(layer + 1)}},
              &rows, &values);
    }
    if (rows.empty()) continue;
    // Fractions from 0, one scale for every panel, its top fitted to the
    // largest value (rounded up to a tenth): the whole 0-1 range only
    // when the values reach past 0.9 (a fixed 0-1 axis pressed the
    // curves of a run whose fractions stay under 0.3 against the floor).
    YScale y;
    double top = 0;
    for (const auto& v : values) top = std::max(top, v.first);
    y.scale = {{"domain", {0, std::min(1.0, std::max(0.1, std::ceil(top * 10 - 1e-9) / 10))}}};
    const json spec = {
        {"title", {{"text", title}, {"anchor", "start"}, {"fontSize", 14}}},
        {"data", {{"values", rows}}},
        {"transform", json::array({{{"flatten", {"panels"}}, {"as", {"panel"}}}})},
        {"facet",
         {{"row",
           {{"field", "panel"},
            {"type", "nominal"},
            {"sort", PanelSort(panels)},
            {"title", nullptr},
            {"header", {{"labelFontWeight", "bold"}, {"labelAngle", 0}, {"labelAlign", "left"}}}}},
          {"column",
           {{"field", "layer"},
            {"type", "nominal"},
            {"title", nullptr},
            {"header", {{"labelFontWeight", "bold"}}}}}}},
        {"spec",
         {{"width", 200},
          {"height", 90},
          {"layer", PanelLayers("fraction", y, colour, false, Seeds(results))}}}};
    html += toolkit::VegaChart(scripts, "layers-" + std::to_string(index++), spec) +
            FlatPanelsNote(panels, field, flat);
  }
  return html;
}

json HeadlineChart(const std::vector<std::pair<std::string, Results>>& setups) {
  json rows = json::array();
  for (const auto& [label, study] : setups) {
    const VariantResults* relu = FindVariant(study, "relu");
    if (!relu) continue;
    std::vector<const VariantResults*> leaky;
    for (const VariantResults& v : study.variants) {
      if (v.plan.name.rfind("lrelu:", 0) == 0) leaky.push_back(&v);
    }
    for (const VariantResults* v : leaky) {
      const Summary s = Summarize(PairedDifferences(*relu, *v, FinalFcd));
      const std::string slope = v->plan.name.substr(6);
      std::string row = label;
      if (study.study.dataset == "fashion") row += " (Fashion-MNIST)";
      if (leaky.size() > 1) row += ", slope " + slope;
      rows.push_back({{"setup", row},
                      {"slope", slope == "0.2" ? "0.2 (the article's)" : "other slopes"},
                      {"mean", Round4(s.mean)},
                      {"low", Round4(s.ci_low)},
                      {"high", Round4(s.ci_high)},
                      {"seeds", s.n}});
    }
  }
  const json y = {{"field", "setup"}, {"type", "nominal"}, {"sort", nullptr}, {"title", nullptr},
                  {"axis", {{"labelLimit", 320}}}};
  // Blue and orange (Okabe-Ito): told apart in every common colour
  // blindness; the points' shape says it again. The legend under the chart.
  const json legend = {{"field", "slope"},
                       {"type", "nominal"},
                       {"scale", {{"range", {"#0072b2", "#e69f00"}}}},
                       {"title", "LeakyReLU slope"},
                       {"legend", {{"orient", "bottom"}}}};
  const std::string x_title = "final FCD, ReLU minus LeakyReLU (> 0: LeakyReLU's samples closer)";
  return {
      {"$schema", "https://vega.github.io/schema/vega-lite/v5.json"},
      {"title",
       {{"text", "Does LeakyReLU train a better generator than ReLU?"},
        {"subtitle", {"mean and Student-t 95% interval of the per-seed difference",
                      "(FCD is per dataset: Fashion-MNIST's scale differs)"}}}},
      {"width", 520},
      {"data", {{"values", rows}}},
      {"layer",
       json::array(
           {{{"mark", {{"type", "rule"}, {"color", "#555555"}, {"strokeDash", {4, 3}}}},
             {"encoding", {{"x", {{"datum", 0}, {"type", "quantitative"}}}}}},
            {{"mark", {{"type", "rule"}, {"strokeWidth", 2}}},
             {"encoding",
              {{"y", y},
               {"x", {{"field", "low"}, {"type", "quantitative"}, {"title", x_title}}},
               {"x2", {{"field", "high"}}},
               {"color", legend}}}},
            {{"mark", {{"type", "point"}, {"filled", true}, {"size", 60}}},
             {"encoding",
              {{"y", y},
               {"x", {{"field", "mean"}, {"type", "quantitative"}}},
               {"color", legend},
               // The shape repeats the colour (the colour's legend says both).
               {"shape", {{"field", "slope"}, {"type", "nominal"}, {"legend", nullptr}}},
               {"tooltip", json::array({{{"field", "setup"}}, {{"field", "mean"}},
                                        {{"field", "low"}}, {{"field", "high"}},
                                        {{"field", "seeds"}}})}}}}})},
  };
}

}  // namespace leaky::gan

// Vega-Lite charts in one self-contained HTML page: the page inlines
// vega, vega-lite and vega-embed's minified builds (scripts/fetch_vega.sh
// puts them in data/vega) and each chart's spec with its data as JSON, so
// a report opens offline and alone. Shared by the GAN lab's report.html and
// `leaky bench`'s bench.html.
#ifndef LEAKY_TOOLKIT_VEGA_H_
#define LEAKY_TOOLKIT_VEGA_H_

#include <nlohmann/json.hpp>
#include <string>

namespace leaky::toolkit {

// Where the scripts are: $LEAKY_VEGA_DIR, else the checkout's data/vega
// (scripts/fetch_vega.sh's default), so a report finds them from any
// working directory (the digits' rule: gan_launch.h's DefaultDataDir).
std::string DefaultVegaDir();

// The three scripts, read from `dir`, each checked against the SHA-256 of
// the pinned build (scripts/fetch_vega.sh's versions); when one is missing,
// truncated, damaged or another version, `scripts` is empty and `missing`
// is the one line that names it and says how to fetch them.
struct VegaScripts {
  std::string scripts, missing;
  bool ok() const { return missing.empty(); }
};
VegaScripts LoadVegaScripts(const std::string& dir);

// What goes in the page's <head>: the inlined scripts and the styles of the
// chart boxes. Empty when the scripts are missing.
std::string VegaHead(const VegaScripts& scripts);

// One chart: a box and the script that renders `spec` (a Vega-Lite spec
// with inline data) into it as SVG. Every chart's rendering promise joins
// window.leakyCharts, which a test (tests/charts/check_charts.py) awaits
// before measuring the rendered page. Without the scripts, a box that says
// `scripts.missing`.
std::string VegaChart(const VegaScripts& scripts, const std::string& id,
                      const nlohmann::json& spec);

// `text` safe in HTML and SVG text and attributes (<, >, &, ").
std::string HtmlEscape(const std::string& text);

// 1, 2, 5 times the powers of ten within [low, high] (low > 0): a log
// axis's tick values.
nlohmann::json LogTicks(double low, double high);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_VEGA_H_

#include "vega.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace leaky::tools {
namespace {

// The files scripts/fetch_vega.sh copies, in the order they must load
// (vega-embed calls vega-lite, which calls vega).
constexpr const char* kFiles[] = {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js"};

// JavaScript safe inside <script>: "</script" would end the element early
// (the minified builds hold none; escaped anyway). Only that sequence: a
// general "</" escape would break regular expressions such as /</g.
std::string ScriptSafe(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '<' && text.compare(i + 1, 7, "/script") == 0) out += '\\';
  }
  return out;
}

// JSON safe inside <script>: every "<" (only ever inside a JSON string) as
// \u003c, so no "</script" or "<!--" can appear.
std::string JsonSafe(const nlohmann::json& value) {
  std::string out;
  for (char c : value.dump()) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string DefaultVegaDir() {
  if (const char* env = std::getenv("LEAKY_VEGA_DIR"); env != nullptr && *env != '\0') return env;
  return LEAKY_SOURCE_DIR "/data/vega";
}

VegaScripts LoadVegaScripts(const std::string& dir) {
  VegaScripts result;
  for (const char* file : kFiles) {
    std::ifstream in(dir + "/" + file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in || text.str().empty()) {
      result.scripts.clear();
      result.missing = "No charts: the charting scripts (" + std::string(file) + ") are not in " +
                       dir +
                       ": run `bash scripts/fetch_vega.sh` (npm pack vega, vega-lite, "
                       "vega-embed) or point LEAKY_VEGA_DIR at the folder that has them, then "
                       "write the report again";
      return result;
    }
    result.scripts += "<script>" + ScriptSafe(text.str()) + "</script>\n";
  }
  return result;
}

std::string VegaHead(const VegaScripts& scripts) {
  if (!scripts.ok()) return "";
  return scripts.scripts +
         "<script>window.leakyCharts=[];</script>"
         "<style>.vega-chart{display:inline-block;vertical-align:top;margin:6px 12px 12px 0;"
         "max-width:100%;overflow-x:auto}.vega-missing{color:#a00}</style>\n";
}

std::string VegaChart(const VegaScripts& scripts, const std::string& id,
                      const nlohmann::json& spec) {
  if (!scripts.ok()) return "";
  nlohmann::json full = spec;
  // Labels the same size in every chart; the legend's labels are never cut.
  full["config"]["font"] = "system-ui, sans-serif";
  full["config"]["legend"]["labelLimit"] = 0;
  full["config"]["axis"]["labelLimit"] = 0;
  full["config"]["axis"]["labelOverlap"] = true;
  return "<div class=\"vega-chart\" id=\"" + HtmlEscape(id) +
         "\"></div><script>window.leakyCharts.push(vegaEmbed('#" + id + "'," + JsonSafe(full) +
         ",{renderer:'svg',actions:false}));</script>\n";
}

nlohmann::json LogTicks(double low, double high) {
  nlohmann::json ticks = nlohmann::json::array();
  if (!(low > 0) || !(high >= low)) return ticks;
  for (int e = static_cast<int>(std::floor(std::log10(low))); e <= std::ceil(std::log10(high));
       ++e) {
    for (double m : {1.0, 2.0, 5.0}) {
      const double v = m * std::pow(10.0, e);
      if (v >= low * (1 - 1e-9) && v <= high * (1 + 1e-9)) ticks.push_back(v);
    }
  }
  return ticks;
}

}  // namespace leaky::tools

#include "vega.h"

#include "sha256.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>

namespace leaky::toolkit {
namespace {

// The files scripts/fetch_vega.sh copies, in the order they must load
// (vega-embed calls vega-lite, which calls vega), each with its package and
// the SHA-256 of the file itself: the versions fetch_vega.sh pins (it checks
// the same digests after copying; change both together). A truncated or
// damaged script, inlined, would leave the page's charts blank without a word.
struct Script {
  const char* file;
  const char* package;
  const char* sha256;
};
constexpr Script kScripts[] = {
    {"vega.min.js", "vega@5.33.1",
     "463f3db6a40b20e9747b4ed38f37ed0add508838f9141b1cf8366784b07b30c8"},
    {"vega-lite.min.js", "vega-lite@5.23.0",
     "58c27358e26f2d319cf62f45bc17a4c8362f08645001df2ec8d341eee4097c7f"},
    {"vega-embed.min.js", "vega-embed@6.29.0",
     "12d02acfbe3ec59ef9a37dd4822a2e04e2961b5bbb671bbe661d2221715b99da"},
};

// JavaScript safe inside <script>, appended to `out`: "</script" would end
// the element early (the minified builds hold none; escaped anyway). Only
// that sequence: a general "</" escape would break regular expressions such
// as /</g.
void AppendScriptSafe(const std::string& text, std::string& out) {
  size_t from = 0;
  for (size_t at; (at = text.find("</script", from)) != std::string::npos; from = at + 1) {
    out.append(text, from, at + 1 - from);
    out += '\\';
  }
  out.append(text, from);
}

// No pinned build is larger (the largest, vega.min.js, is 0.5 MB): a larger
// file is refused unread, so a wrong folder cannot make a report read
// gigabytes into memory.
constexpr size_t kMaxScriptBytes = size_t{16} << 20;

// The whole of the regular file at `path`, or nothing when there is none to
// read (missing, a folder, a pipe, unreadable). Past kMaxScriptBytes, only
// the first kMaxScriptBytes + 1 bytes.
std::optional<std::string> ReadScript(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (!error) text.reserve(std::min<uintmax_t>(size, kMaxScriptBytes + 1));
  char chunk[1 << 16];
  while (text.size() <= kMaxScriptBytes && (in.read(chunk, sizeof chunk) || in.gcount() > 0)) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
  }
  return text;
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

// fetch_vega.sh's default folder: the checkout's data/vega.
std::string DefaultSourceVegaDir() { return LEAKY_SOURCE_DIR "/data/vega"; }

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
  return DefaultSourceVegaDir();
}

VegaScripts LoadVegaScripts(const std::string& dir) {
  VegaScripts result;
  // fetch_vega.sh fills (or repairs) its default folder, or the one named.
  const std::string fix =
      ": run `bash scripts/fetch_vega.sh" + (dir == DefaultSourceVegaDir() ? "" : " " + dir) +
      "` (npm pack vega, vega-lite, vega-embed) or point LEAKY_VEGA_DIR at the folder that has "
      "them, then write the report again";
  std::string texts[std::size(kScripts)];
  for (size_t i = 0; i < std::size(kScripts); ++i) {
    const auto& [file, package, sha256] = kScripts[i];
    const std::string path = dir + "/" + file;
    std::optional<std::string> text = ReadScript(path);
    if (!text) {
      result.missing =
          "No charts: the charting scripts (" + std::string(file) + ") are not in " + dir + fix;
      return result;
    }
    if (text->size() > kMaxScriptBytes || Sha256Hex(*text) != sha256) {
      result.missing = "No charts: " + path + " is damaged or another version than " + package +
                       "'s (SHA-256 differs)" + fix;
      return result;
    }
    texts[i] = std::move(*text);
  }
  // One allocation for the megabyte: each script and its tags appended.
  size_t size = 0;
  for (const std::string& text : texts) size += text.size() + 32;
  result.scripts.reserve(size);
  for (const std::string& text : texts) {
    result.scripts += "<script>";
    AppendScriptSafe(text, result.scripts);
    result.scripts += "</script>\n";
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

}  // namespace leaky::toolkit

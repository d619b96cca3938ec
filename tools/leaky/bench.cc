// `leaky bench`: runs leaky-bench (Google Benchmark, peers linked there only),
// then prints a table of same-run ratios, checks the performance targets,
// and writes summary JSON and an SVG plot next to the raw JSON.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cli_checks.h"
#include "commands.h"

namespace leaky::tools {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

struct Key {
  std::string dtype, mode;
  long long elements;
  int threads;
  auto operator<=>(const Key&) const = default;
};

const std::vector<std::string> kContenders = {"leaky", "leaky_cached", "leaky_stream", "onednn",
                                              "xnnpack", "loop", "memcpy", "stream_copy"};
const std::vector<std::string> kPeers = {"onednn", "xnnpack"};

struct Settings {
  std::string out_dir = "runs/bench";
  std::string filter;
  double min_time = 0.3;
  bool quick = false;
  std::string bench_binary;
};

std::string SelfDirectory() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

// Results: key -> contender -> GB/s.
using Results = std::map<Key, std::map<std::string, double>>;

Results Parse(const json& raw) {
  Results results;
  for (const json& row : raw.at("benchmarks")) {
    if (row.value("error_occurred", false)) continue;
    std::vector<std::string> parts;
    std::stringstream name(row.at("name").get<std::string>());
    for (std::string part; std::getline(name, part, '/');) parts.push_back(part);
    if (parts.size() < 5) continue;
    const Key key{parts[1], parts[2], std::stoll(parts[3]), std::stoi(parts[4])};
    results[key][parts[0]] = row.at("bytes_per_second").get<double>() / 1e9;
  }
  return results;
}

double Get(const Results& results, const Key& key, const std::string& contender) {
  auto row = results.find(key);
  if (row == results.end()) return NAN;
  auto value = row->second.find(contender);
  return value == row->second.end() ? NAN : value->second;
}

// The streaming-copy limit for the same bytes: in-place forward moves the
// bytes of an out-of-place forward.
double Limit(const Results& results, Key key) {
  // In-place forward and the relatives' forwards move the bytes of a forward.
  if (key.mode == "fwd_inplace" || key.mode == "elu_fwd" || key.mode == "relu_fwd") {
    key.mode = "fwd";
  }
  return Get(results, key, "stream_copy");
}

double BestPeer(const Results& results, const Key& key, std::string* which) {
  double best = NAN;
  for (const std::string& peer : kPeers) {
    const double v = Get(results, key, peer);
    if (!std::isnan(v) && (std::isnan(best) || v > best)) {
      best = v;
      *which = peer;
    }
  }
  return best;
}

std::string Format(double v, const char* format = "%.1f") {
  if (std::isnan(v)) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), format, v);
  return buffer;
}

std::string SizeLabel(long long n) {
  if (n >= (1 << 20)) return std::to_string(n >> 20) + "Mi";
  if (n >= (1 << 10)) return std::to_string(n >> 10) + "Ki";
  return std::to_string(n);
}

json Summarize(const Results& results) {
  json rows = json::array();
  for (const auto& [key, values] : results) {
    std::string best_peer;
    const double peer = BestPeer(results, key, &best_peer);
    const double limit = Limit(results, key);
    const double ours = Get(results, key, "leaky");
    json gbps = json::object();
    for (const auto& [contender, v] : values) gbps[contender] = v;
    rows.push_back({{"dtype", key.dtype},
                    {"mode", key.mode},
                    {"elements", key.elements},
                    {"threads", key.threads},
                    {"gbps", gbps},
                    {"limit_gbps", std::isnan(limit) ? json(nullptr) : json(limit)},
                    {"best_peer", best_peer},
                    {"ratio_to_limit", std::isnan(ours / limit) ? json(nullptr) : json(ours / limit)},
                    {"ratio_to_best_peer", std::isnan(ours / peer) ? json(nullptr) : json(ours / peer)}});
  }
  return rows;
}

void PrintTable(const Results& results) {
  std::printf("%-5s %-12s %7s %3s |", "dtype", "mode", "elems", "thr");
  for (const auto& c : kContenders) std::printf(" %11s", c.c_str());
  std::printf(" | %8s %9s\n", "/limit", "/bestpeer");
  for (const auto& [key, values] : results) {
    std::printf("%-5s %-12s %7s %3d |", key.dtype.c_str(), key.mode.c_str(),
                SizeLabel(key.elements).c_str(), key.threads);
    for (const auto& c : kContenders) std::printf(" %11s", Format(Get(results, key, c)).c_str());
    std::string peer_name;
    const double ours = Get(results, key, "leaky");
    std::printf(" | %8s %9s\n", Format(ours / Limit(results, key), "%.2f").c_str(),
                Format(ours / BestPeer(results, key, &peer_name), "%.2f").c_str());
  }
}

// The performance issue's targets, each a ratio measured in this run.
json CheckTargets(const Results& results, const std::vector<int>& thread_counts) {
  json checks = json::array();
  auto check = [&](const std::string& what, double ratio, double needed) {
    const bool pass = !std::isnan(ratio) && ratio >= needed;
    checks.push_back({{"target", what}, {"ratio", std::isnan(ratio) ? json(nullptr) : json(ratio)},
                      {"needed", needed}, {"pass", pass}});
    std::printf("  %-4s %-62s %6s (needs >= %.2f)\n", std::isnan(ratio) ? "n/a" : pass ? "PASS" : "MISS",
                what.c_str(), Format(ratio, "%.2f").c_str(), needed);
  };
  const long long big = 1ll << 26, mid = 1ll << 20, small = 4096;
  std::printf("\nTargets (same-run ratios):\n");
  for (int t : thread_counts) {
    const std::string th = " @" + std::to_string(t) + "T";
    const Key f32_big{"f32", "fwd", big, t};
    check("f32 fwd 64Mi / stream-copy limit" + th,
          Get(results, f32_big, "leaky") / Limit(results, f32_big), 0.90);
    check("f32 fwd 64Mi / oneDNN" + th,
          Get(results, f32_big, "leaky") / Get(results, f32_big, "onednn"), 1.4);
    check("f32 fwd 64Mi / XNNPACK" + th,
          Get(results, f32_big, "leaky") / Get(results, f32_big, "xnnpack"), 1.4);
    const Key f32_mid{"f32", "fwd", mid, t};
    std::string peer;
    check("f32 fwd 1Mi / best of oneDNN, XNNPACK" + th,
          Get(results, f32_mid, "leaky") / BestPeer(results, f32_mid, &peer), 1.0);
    for (const char* half : {"f16", "bf16"}) {
      const Key k{half, "fwd", big, t};
      check(std::string(half) + " fwd 64Mi / stream-copy limit" + th,
            Get(results, k, "leaky") / Limit(results, k), 0.85);
      check(std::string(half) + " fwd 64Mi / XNNPACK f16" + th,
            Get(results, k, "leaky") / Get(results, Key{"f16", "fwd", big, t}, "xnnpack"), 1.2);
    }
    const Key bwd{"f32", "bwd", big, t};
    check("f32 bwd 64Mi / 3-stream limit" + th, Get(results, bwd, "leaky") / Limit(results, bwd),
          0.85);
    double worst = NAN;
    for (const auto& [key, values] : results) {
      if (key.mode != "fwd_inplace" || key.threads != t || key.dtype != "f32") continue;
      const double r = Get(results, key, "leaky") / Get(results, key, "onednn");
      if (!std::isnan(r) && (std::isnan(worst) || r < worst)) worst = r;
    }
    check("f32 fwd in-place / oneDNN in-place, worst size" + th, worst, 1.0);
  }
  for (int t : thread_counts) {
    for (const char* mode : {"elu_fwd", "relu_fwd"}) {
      for (long long n : {mid, big}) {
        const Key k{"f32", mode, n, t};
        check(std::string("f32 ") + mode + " " + (n == big ? "64Mi" : "1Mi") + " / oneDNN @" +
                  std::to_string(t) + "T",
              Get(results, k, "leaky") / Get(results, k, "onednn"), 1.0);
      }
    }
  }
  for (int t : thread_counts) {
    const std::string th = " @" + std::to_string(t) + "T";
    for (long long n : {mid, big}) {
      const Key k{"f32", "prelu_fwd", n, t};
      check(std::string("f32 prelu_fwd ") + (n == big ? "64Mi" : "1Mi") + " / oneDNN" + th,
            Get(results, k, "leaky") / Get(results, k, "onednn"), 1.0);
    }
    const Key dropout{"f32", "bias_act_dropout_fwd", big, t};
    check("f32 bias_act+dropout 64Mi / stream-copy limit" + th,
          Get(results, dropout, "leaky") / Limit(results, dropout), 0.8);
  }
  check("f32 fwd 4Ki @1T / XNNPACK",
        Get(results, Key{"f32", "fwd", small, 1}, "leaky") /
            Get(results, Key{"f32", "fwd", small, 1}, "xnnpack"),
        0.9);
  if (thread_counts.size() > 1) {
    const int all = thread_counts.back();
    check("f32 fwd 64Mi scaling " + std::to_string(all) + "T / 1T",
          Get(results, Key{"f32", "fwd", big, all}, "leaky") /
              Get(results, Key{"f32", "fwd", big, 1}, "leaky"),
          1.6);
  }
  return checks;
}

// GB/s against size (log x) for f32 forward, one panel per thread count.
void WritePlot(const Results& results, const std::vector<int>& thread_counts,
               const fs::path& path) {
  const double width = 560, height = 360, left = 60, right = 150, top = 30, bottom = 50;
  const char* colors[] = {"#d62728", "#ff9896", "#e377c2", "#1f77b4",
                          "#2ca02c", "#9467bd", "#8c564b", "#000000"};
  std::ofstream svg(path);
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width * static_cast<double>(thread_counts.size())
      << "' height='" << height << "' font-family='sans-serif' font-size='11'>\n";
  for (size_t panel = 0; panel < thread_counts.size(); ++panel) {
    const int t = thread_counts[panel];
    std::vector<std::pair<long long, std::map<std::string, double>>> points;
    double max_gbps = 1;
    for (const auto& [key, values] : results) {
      if (key.dtype == "f32" && key.mode == "fwd" && key.threads == t) {
        points.emplace_back(key.elements, values);
        for (const auto& [c, v] : values) max_gbps = std::max(max_gbps, v);
      }
    }
    if (points.size() < 2) continue;
    const double x0 = static_cast<double>(panel) * width + left, plot_w = width - left - right,
                 plot_h = height - top - bottom;
    const double lmin = std::log2(static_cast<double>(points.front().first));
    const double lmax = std::log2(static_cast<double>(points.back().first));
    auto X = [&](long long n) { return x0 + (std::log2(static_cast<double>(n)) - lmin) / (lmax - lmin) * plot_w; };
    auto Y = [&](double v) { return top + plot_h - v / max_gbps * plot_h; };
    svg << "<text x='" << x0 << "' y='18' font-size='13'>f32 forward, " << t
        << " thread(s): GB/s (read + written) vs elements</text>\n";
    svg << "<rect x='" << x0 << "' y='" << top << "' width='" << plot_w << "' height='" << plot_h
        << "' fill='none' stroke='#888'/>\n";
    for (const auto& [n, values] : points) {
      svg << "<text x='" << X(n) - 12 << "' y='" << top + plot_h + 15 << "'>" << SizeLabel(n)
          << "</text>\n";
    }
    for (int g = 0; g <= 4; ++g) {
      const double v = max_gbps * g / 4;
      svg << "<text x='" << x0 - 40 << "' y='" << Y(v) + 4 << "'>" << Format(v, "%.0f")
          << "</text>\n";
    }
    for (size_t c = 0; c < kContenders.size(); ++c) {
      std::ostringstream line;
      for (const auto& [n, values] : points) {
        auto it = values.find(kContenders[c]);
        if (it != values.end()) line << X(n) << "," << Y(it->second) << " ";
      }
      if (line.str().empty()) continue;
      const bool limit = kContenders[c] == "stream_copy";
      svg << "<polyline fill='none' stroke='" << colors[c] << "' stroke-width='" << (c == 0 ? 2.5 : 1.5)
          << "'" << (limit ? " stroke-dasharray='6,4'" : "") << " points='" << line.str() << "'/>\n";
      svg << "<text x='" << x0 + plot_w + 10 << "' y='" << top + 15 + 15 * static_cast<double>(c) << "' fill='" << colors[c]
          << "'>" << kContenders[c] << (limit ? " (limit)" : "") << "</text>\n";
    }
  }
  svg << "</svg>\n";
}

// `text` as one shell word.
std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The names of the benchmarks `filter` selects, without running any (an empty
// list would otherwise end in a raw JSON parser error on an empty file).
std::vector<std::string> ListBenchmarks(const std::string& binary, const Settings& settings) {
  std::string command = Quote(binary) + " --benchmark_list_tests=true";
  if (settings.quick) command += " --quick";
  if (!settings.filter.empty()) command += " --benchmark_filter=" + Quote(settings.filter);
  command += " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + binary);
  std::vector<std::string> names;
  std::string line;
  for (int c; (c = std::fgetc(pipe)) != EOF;) {
    if (c != '\n') {
      line += static_cast<char>(c);
    } else if (!line.empty()) {
      names.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) names.push_back(line);
  if (pclose(pipe) != 0) throw std::runtime_error(binary + " --benchmark_list_tests failed");
  return names;
}

Results ReadResults(const fs::path& raw_path, json* raw) {
  std::ifstream raw_file(raw_path);
  *raw = json::parse(raw_file, nullptr, /*allow_exceptions=*/false);
  if (raw->is_discarded()) {
    throw std::runtime_error("leaky-bench wrote no readable results to " + raw_path.string());
  }
  try {
    return Parse(*raw);
  } catch (const std::exception&) {  // a field missing or of another type, a bad name
    throw std::runtime_error(raw_path.string() + " is not Google Benchmark's JSON output");
  }
}

int RunBench(const Settings& settings) {
  const std::string binary =
      settings.bench_binary.empty() ? SelfDirectory() + "/leaky-bench" : settings.bench_binary;
  std::error_code error;
  if (!fs::is_regular_file(binary, error)) {
    throw std::runtime_error("benchmark program not found: " + binary);
  }
  // Checked before the output directory is made or anything runs.
  if (ListBenchmarks(binary, settings).empty()) {
    throw UsageError("no benchmark matches --filter '" + settings.filter + "'");
  }
  const fs::path out(settings.out_dir);
  fs::create_directories(out, error);
  if (error) throw std::runtime_error("cannot create " + out.string() + ": " + error.message());
  const fs::path raw_path = out / "raw.json";
  std::string command =
      Quote(binary) + " --benchmark_out=" + Quote(raw_path.string()) +
      " --benchmark_out_format=json --benchmark_min_time=" + std::to_string(settings.min_time);
  if (settings.quick) command += " --quick";
  if (!settings.filter.empty()) command += " --benchmark_filter=" + Quote(settings.filter);
  command += " > " + Quote((out / "console.txt").string());
  std::fprintf(stderr, "running %s\n", command.c_str());
  if (std::system(command.c_str()) != 0) throw std::runtime_error("leaky-bench failed");

  json raw;
  const Results results = ReadResults(raw_path, &raw);
  if (results.empty()) throw std::runtime_error("leaky-bench produced no results");
  std::vector<int> thread_counts;
  for (const auto& [key, v] : results) {
    if (std::find(thread_counts.begin(), thread_counts.end(), key.threads) == thread_counts.end()) {
      thread_counts.push_back(key.threads);
    }
  }
  std::sort(thread_counts.begin(), thread_counts.end());
  std::printf("GB/s (bytes read + written); limit = non-temporal streaming copy of the same "
              "bytes; all from one run\n");
  PrintTable(results);
  const json targets = CheckTargets(results, thread_counts);
  auto context = [&raw](const char* key) -> std::string {
    const auto fields = raw.find("context");
    if (fields == raw.end() || !fields->is_object()) return "";
    const auto field = fields->find(key);
    return field != fields->end() && field->is_string() ? field->get<std::string>() : "";
  };
  json summary = {{"simd_target", context("leaky_simd_target")},
                  {"host", context("host_name")},
                  {"date", context("date")},
                  {"rows", Summarize(results)},
                  {"targets", targets}};
  std::ofstream(out / "bench.json") << summary.dump(2) << "\n";
  WritePlot(results, thread_counts, out / "bench.svg");
  std::printf("\nwrote %s, %s, %s\n", (out / "bench.json").c_str(), (out / "bench.svg").c_str(),
              raw_path.c_str());
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, std::function<int()>& run) {
  auto settings = std::make_shared<Settings>();
  auto* command = app.add_subcommand(
      "bench", "Benchmark against oneDNN, XNNPACK and the memory limits; table, JSON, SVG");
  DirectoryPath(
      command->add_option("--out", settings->out_dir, "Output directory")->capture_default_str(),
      /*must_exist=*/false);
  command->add_option("--filter", settings->filter, "Google Benchmark regex over "
                      "contender/dtype/mode/elements/threads");
  FiniteNumber(command->add_option("--min-time", settings->min_time, "Seconds per case")
                   ->capture_default_str(),
               1e-3);
  command->add_flag("--quick", settings->quick, "Only 4Ki, 1Mi and 64Mi elements");
  command->add_option("--bench-binary", settings->bench_binary, "Path of leaky-bench");
  command->callback([&run, settings] { run = [settings] { return RunBench(*settings); }; });
}

}  // namespace leaky::tools

// `leaky bench`: runs leaky-bench (the peers are linked there only), which
// times every benchmark in interleaved rounds, then prints medians with
// their spread, paired ratios, the performance targets' verdicts and
// warnings when the machine was busy, and writes summary JSON and a
// Vega-Lite chart page (bench.html) next to the raw samples. The judging
// (targets, spread, ratios, verdicts, warnings) is the toolkit's
// (toolkit/bench_verdicts.h); this file runs and prints. The method and the targets are in
// docs/design.md ("Performance targets"); the targets' table there is
// `leaky bench --targets`, checked by the bench_writes_json test.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "app.h"
#include "bench_verdicts.h"
#include "cli_checks.h"
#include "commands.h"
#include "vega.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
using namespace leaky::toolkit::bench;
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// ------------------------------------------------------------- the samples
struct Settings {
  std::string out_dir = "runs/bench";
  std::string filter;
  double min_time = 0.1;
  int rounds = 15;
  int passes = 3;
  int rerun_passes = 2;
  bool quick = false;
  bool targets = false;
  std::string bench_binary;
};

void PrintTable(const Results& results) {
  std::printf("%-5s %-20s %5s %3s |", "dtype", "mode", "elems", "thr");
  for (const auto& c : kContenders) std::printf(" %12s", c.c_str());
  std::printf(" | %-18s %-18s\n", "/limit", "/bestpeer");
  for (const auto& [key, values] : results) {
    std::printf("%-5s %-20s %5s %3d |", key.dtype.c_str(), key.mode.c_str(),
                SizeLabel(key.elements).c_str(), key.threads);
    for (const auto& c : kContenders) {
      const Spread s = Of(Get(results, key, c));
      // GB/s median (IQR as a percentage of the median)
      const std::string spread = s.relative() < 10 ? Format(100 * s.relative(), "%.0f") : ">999";
      std::printf(" %12s", s.ok() ? (Format(s.median) + " (" + spread + ")").c_str() : "-");
    }
    std::string peer;
    const Series* ours = Get(results, key, "leaky");
    std::printf(" | %-18s %-18s\n", FormatRatio(Ratio(ours, Limit(results, key))).c_str(),
                FormatRatio(Ratio(ours, BestPeer(results, key, kPeers, &peer))).c_str());
  }
}


// Median GB/s against size (log x) for f32 forward, a panel per thread
// count and a line per contender: bench.html (toolkit/vega.h). Without the
// charting scripts, no page: `missing` says how to fetch them.
bool WriteChart(const Results& results, const fs::path& path, std::string* missing) {
  const VegaScripts scripts = LoadVegaScripts(DefaultVegaDir());
  if (!scripts.ok()) {
    *missing = scripts.missing;
    std::error_code error;
    fs::remove(path, error);  // an earlier run's page would show its numbers as this run's
    return false;
  }
  json rows = json::array(), sizes = json::array();
  for (const auto& [key, values] : results) {
    if (key.dtype != "f32" || key.mode != "fwd") continue;
    if (std::find(sizes.begin(), sizes.end(), key.elements) == sizes.end()) sizes.push_back(key.elements);
    for (const auto& [contender, series] : values) {
      const Spread s = Summarize(series.gbps);
      if (!s.ok()) continue;
      rows.push_back({{"contender", contender + (contender == "stream_copy" ? " (limit)" : "")},
                      {"elements", key.elements}, {"size", SizeLabel(key.elements)},
                      {"threads", std::to_string(key.threads) + " thread(s)"}, {"gbps", s.median},
                      {"q1", s.q1}, {"q3", s.q3}});
    }
  }
  json domain = json::array(), range = json::array();
  // Okabe and Ito's palette, told apart in every common colour blindness
  // (leaky vermillion, its cached, streaming and pthreadpool variants
  // orange, purple and yellow, the peers blue and green, the plain loop sky
  // blue); memcpy grey and the limit black, dashed (the red and brown of
  // before were hard to tell apart). In kContenders' order.
  const char* colours[] = {"#D55E00", "#E69F00", "#CC79A7", "#F0E442", "#0072B2",
                           "#009E73", "#56B4E9", "#999999", "#000000"};
  // The contenders this run measured, each in its fixed colour.
  for (size_t c = 0; c < kContenders.size(); ++c) {
    const std::string name = kContenders[c] + (kContenders[c] == "stream_copy" ? " (limit)" : "");
    if (std::none_of(rows.begin(), rows.end(), [&](const json& r) { return r["contender"] == name; })) continue;
    domain.push_back(name);
    range.push_back(c < std::size(colours) ? colours[c] : "#999999");
  }
  const json x = {{"field", "elements"}, {"type", "quantitative"}, {"scale", {{"type", "log"}, {"base", 2}}},
                  {"axis", {{"values", sizes}, {"labelExpr", "datum.value >= 1048576 ? datum.value / 1048576 + 'Mi' : datum.value >= 1024 ? datum.value / 1024 + 'Ki' : datum.value"}, {"title", "elements"}}}};
  const json colour = {{"field", "contender"}, {"type", "nominal"}, {"scale", {{"domain", domain}, {"range", range}}},
                       {"title", "contender"},
                       {"legend", {{"symbolType", "stroke"}, {"symbolStrokeWidth", 2}, {"symbolOpacity", 1}}}};
  // The limit dashed, as in the table's "/limit" column: not a contender.
  const json dash = {{"condition", {{"test", "datum.contender === 'stream_copy (limit)'"}, {"value", {6, 4}}}},
                     {"value", {1, 0}}};
  const json spec = {
      {"title", {{"text", "f32 forward: GB/s (read + written) against size"},
                 {"subtitle", "median over rounds; bars: the quartiles"}, {"anchor", "start"}}},
      {"data", {{"values", rows}}},
      {"facet", {{"column", {{"field", "threads"}, {"type", "nominal"}, {"title", nullptr}}}}},
      {"spec",
       {{"width", 360}, {"height", 240},
        {"layer", json::array({
            {{"mark", {{"type", "rule"}, {"opacity", 0.5}}},
             {"encoding", {{"x", x}, {"y", {{"field", "q1"}, {"type", "quantitative"}}}, {"y2", {{"field", "q3"}}},
                           {"color", colour}}}},
            {{"mark", {{"type", "line"}, {"point", true}}},
             {"encoding", {{"x", x},
                           {"y", {{"field", "gbps"}, {"type", "quantitative"}, {"title", "GB/s"}}},
                           {"color", colour},
                           {"strokeDash", dash},
                           {"tooltip", json::array({{{"field", "contender"}}, {{"field", "size"}},
                                                    {{"field", "gbps"}, {"format", ".1f"}}})}}}}})}}}};
  std::ofstream page(path);
  page << "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>leaky bench</title>"
       << VegaHead(scripts) << "<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px}</style>"
       << "</head><body><h1>leaky bench</h1><p>The numbers and the targets' verdicts: bench.json "
       << "beside this page (docs/design.md, \"Performance targets\", has the method).</p>"
       << VegaChart(scripts, "f32-forward", spec) << "</body></html>\n";
  return static_cast<bool>(page);
}

// `text` as one shell word.
std::string Quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// The names of the benchmarks `filter` selects, without running any.
std::vector<std::string> ListBenchmarks(const std::string& binary, const Settings& settings) {
  std::string command = Quote(binary) + " --list";
  if (settings.quick) command += " --quick";
  if (!settings.filter.empty()) command += " --filter=" + Quote(settings.filter);
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
  // leaky-bench exits 2 on a --filter its regular expressions (std::regex,
  // ECMAScript) cannot read; the CLI does not compile one itself (GCC 12
  // warns inside <regex> at -O1 under ASan, and the CLI builds with -Werror).
  const int status = pclose(pipe);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2) {
    throw UsageError("--filter '" + settings.filter + "' is not a regular expression");
  }
  if (status != 0) throw std::runtime_error(binary + " --list failed");
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
  } catch (const std::exception&) {  // a field missing or of another type
    throw std::runtime_error(raw_path.string() + " is not leaky-bench's JSON (format leaky-bench-rounds-1)");
  }
}

int RunBench(const Settings& settings) {
  if (settings.targets) {
    std::fputs(TargetsMarkdown().c_str(), stdout);
    return 0;
  }
  const std::string binary =
      settings.bench_binary.empty() ? SelfDirectory() + "/leaky-bench" : settings.bench_binary;
  std::error_code error;
  if (!fs::is_regular_file(binary, error)) {
    throw std::runtime_error(
        settings.bench_binary.empty()
            ? "this build has no benchmark program (" + binary +
                  "; `make demo` leaves it out): `make bench` builds it with the peers and runs it"
            : "benchmark program not found: " + binary);
  }
  // Checked before the output directory is made or anything runs.
  if (ListBenchmarks(binary, settings).empty()) {
    throw UsageError("no benchmark matches --filter '" + settings.filter + "'");
  }
  const fs::path out(settings.out_dir);
  fs::create_directories(out, error);
  if (error) throw std::runtime_error("cannot create " + out.string() + ": " + error.message());
  const fs::path raw_path = out / "raw.json";
  // leaky-bench on `filter` (none: every benchmark) into `to`.
  auto run_bench = [&](const fs::path& to, int rounds, int passes, double min_time,
                       const std::string& filter, const char* console) {
    std::string command =
        Quote(binary) + " --out=" + Quote(to.string()) + " --rounds=" + std::to_string(rounds) +
        " --passes=" + std::to_string(passes) + " --min-time=" + std::to_string(min_time);
    if (settings.quick) command += " --quick";
    if (!filter.empty()) command += " --filter=" + Quote(filter);
    command += " > " + Quote((out / console).string());
    std::fprintf(stderr, "running %s\n", command.c_str());
    if (std::system(command.c_str()) != 0) throw std::runtime_error("leaky-bench failed");
  };
  run_bench(raw_path, settings.rounds, settings.passes, settings.min_time, settings.filter,
            "console.txt");

  json raw;
  Results results = ReadResults(raw_path, &raw);
  if (results.empty()) throw std::runtime_error("leaky-bench produced no results");
  std::vector<int> thread_counts;
  for (const auto& [key, v] : results) {
    if (std::find(thread_counts.begin(), thread_counts.end(), key.threads) == thread_counts.end()) {
      thread_counts.push_back(key.threads);
    }
  }
  std::sort(thread_counts.begin(), thread_counts.end());
  json targets = CheckTargets(results, thread_counts);
  // The benchmarks of every check that is not firm run again, in more
  // passes of the run's pass length, after the run: their verdicts then
  // stand on samples from more stretches of the host's memory (docs/design.md,
  // "How firm each verdict is").
  std::vector<std::string> again;
  for (const json& t : targets) {
    if (t.at("verdict") == "n/a" || t.at("firm").get<bool>()) continue;
    for (const json& name : t.at("benchmarks")) {
      if (std::find(again.begin(), again.end(), name) == again.end()) again.push_back(name);
    }
  }
  // (A replayed run that was rerun already keeps its samples.)
  if (settings.rerun_passes > 0 && !again.empty() && !raw.at("context").contains("rerun")) {
    const int passes = raw.at("context").value("passes", 1);
    const int rounds = std::max(1, settings.rounds / passes) * settings.rerun_passes;
    std::string filter = "^(";
    for (const std::string& name : again) {
      for (char c : name) {
        if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) filter += '\\';
        filter += c;
      }
      filter += name == again.back() ? ")$" : "|";
    }
    const fs::path rerun_path = out / "raw-rerun.json";
    run_bench(rerun_path, rounds, settings.rerun_passes,
              settings.min_time * rounds / settings.rounds, filter, "console-rerun.txt");
    json rerun;
    ReadResults(rerun_path, &rerun);
    MergeRerun(&raw, rerun, again);
    std::ofstream(raw_path) << raw.dump(1) << "\n";
    results = Parse(raw);  // the merged samples, already in memory
    targets = CheckTargets(results, thread_counts);
  }
  std::printf(
      "GB/s (bytes read + written): median over %d interleaved rounds in %d passes (IQR as "
      "%% of the median)",
      settings.rounds, raw.at("context").value("passes", 1));
  if (const json* rerun =
          raw.at("context").contains("rerun") ? &raw["context"]["rerun"] : nullptr) {
    std::printf(
        ", and the %d benchmarks of the checks that were not firm %d rounds more in %d passes",
        rerun->at("benchmarks").get<int>(), rerun->at("rounds").get<int>(),
        rerun->at("passes").get<int>());
  }
  std::printf(
      ";\nlimit = non-temporal streaming copy of the same bytes; ratios: median [quartiles] of "
      "per-round ratios\n");
  PrintTable(results);
  PrintChecks(targets);
  const double changes = ExpectedChanges(targets);
  const json warnings = Warnings(raw, results);
  const json machine = raw.value("machine", json::object());
  std::printf("\nMachine: %s\n", machine.dump().c_str());
  for (const json& w : warnings) std::printf("WARNING: %s\n", w.get<std::string>().c_str());
  if (!warnings.empty()) std::printf("(a busy machine's verdicts are the machine's: run again when it is quiet)\n");
  auto context = [&raw](const char* key) -> json {
    const auto fields = raw.find("context");
    if (fields == raw.end() || !fields->is_object()) return "";
    const auto field = fields->find(key);
    return field != fields->end() ? *field : json("");
  };
  json summary = {{"simd_target", context("leaky_simd_target")},
                  {"host", context("host_name")},
                  {"date", context("date")},
                  {"method",
                   {{"rounds", context("rounds")},
                    {"passes", context("passes")},
                    {"min_time", context("min_time")},
                    {"pause", "until every other thread of the process sleeps (floor " +
                                  context("pause_floor_us").dump() + " us, cap " +
                                  context("pause_cap_us").dump() + " us), then one untimed call"},
                    {"statistics", "median and quartiles over rounds; ratios paired by round"},
                    {"verdict",
                     "PASS if the ratio's first quartile reaches the target, MISS if "
                     "its third quartile does not, else unclear"},
                    {"repeat_chance",
                     "the chance that two runs like this one agree on a verdict, "
                     "from 1000 runs rebuilt from this one's passes and rounds"},
                    {"firm",
                     "a rerun agrees at least 90% of the time; the benchmarks of the "
                     "other checks ran again after the run (rerun)"},
                    {"rerun", context("rerun")}}},
                  {"verdicts_expected_to_change", changes},
                  {"machine", machine},
                  {"warnings", warnings},
                  {"rows", SummarizeRows(results)},
                  {"targets", targets}};
  std::ofstream(out / "bench.json") << summary.dump(2) << "\n";
  std::string missing;
  if (WriteChart(results, out / "bench.html", &missing)) {
    std::printf("\nwrote %s, %s, %s\n", (out / "bench.json").c_str(), (out / "bench.html").c_str(),
                raw_path.c_str());
  } else {
    std::printf("\nwrote %s, %s\n", (out / "bench.json").c_str(), raw_path.c_str());
    std::fprintf(stderr, "%s\n", missing.c_str());
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, std::function<int()>& run) {
  auto settings = std::make_shared<Settings>();
  auto* command = app.add_subcommand(
      "bench", "Benchmark against oneDNN, XNNPACK and the memory limits in interleaved rounds; "
               "table, verdicts, JSON, a chart page");
  DirectoryPath(
      command->add_option("--out", settings->out_dir, "Output directory")->capture_default_str(),
      /*must_exist=*/false);
  command->add_option("--filter", settings->filter, "Regular expression over "
                      "contender/dtype/mode/elements/threads");
  WholeNumber(command->add_option("--rounds", settings->rounds,
                                  "Samples per benchmark, its group's benchmarks interleaved")
                  ->capture_default_str(),
              1, 1000);
  WholeNumber(command->add_option("--passes", settings->passes,
                                  "Runs over all groups that share the rounds out, so a benchmark's "
                                  "samples span the whole run")
                  ->capture_default_str(),
              1, 100);
  WholeNumber(command
                  ->add_option("--rerun-passes", settings->rerun_passes,
                               "Passes of the run's pass length in which the benchmarks of the "
                               "checks that are not firm run again after the run (0: none)")
                  ->capture_default_str(),
              0, 100);
  FiniteNumber(command->add_option("--min-time", settings->min_time,
                                   "Timed seconds per benchmark, over all its rounds")
                   ->capture_default_str(),
               0, 3600);
  command->add_flag("--quick", settings->quick, "Only 4Ki, 1Mi and 64Mi elements");
  command->add_flag("--targets", settings->targets,
                    "Print the performance targets' table (as docs/design.md shows it) and exit");
  command->add_option("--bench-binary", settings->bench_binary, "Path of leaky-bench");
  command->callback([&run, settings] { run = [settings] { return RunBench(*settings); }; });
}

}  // namespace leaky::cli

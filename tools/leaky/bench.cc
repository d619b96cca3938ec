// `leaky bench`: runs leaky-bench (the peers are linked there only), which
// times every benchmark in interleaved rounds, then prints medians with
// their spread, paired ratios, the performance targets' verdicts and
// warnings when the machine was busy, and writes summary JSON and a
// Vega-Lite chart page (bench.html) next to the raw samples. The method and the targets are in
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

#include "cli_checks.h"
#include "commands.h"
#include "vega.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
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

// ------------------------------------------------------------- the targets
// Today's performance targets: the one table. docs/design.md shows it as
// `leaky bench --targets` prints it (the bench_writes_json test compares
// the two), so a target changes here and in the doc together.
//   against: "limit" (the non-temporal streaming copy of the same bytes: a
//   forward's for in-place, ELU and ReLU; prelu, rrelu and bias_act have
//   their own), "best of A, B" (each of them: see Combined), or a
//   contender, optionally of another dtype ("xnnpack f16") or thread count
//   ("leaky 1T").
//   elements: one size, a list, or "each" size measured; threads: "each"
//   count measured, "1", or "all" (the most measured).
struct Target {
  const char* check;
  const char* dtype;
  const char* mode;
  const char* elements;
  const char* threads;
  const char* against;
  double at_least;  // leaky's GB/s over the other's
};

constexpr Target kTargets[] = {
    {"f32 forward at the memory limit", "f32", "fwd", "64Mi", "each", "limit", 0.90},
    {"f32 forward against oneDNN", "f32", "fwd", "64Mi", "each", "onednn", 1.15},
    {"f32 forward against XNNPACK", "f32", "fwd", "64Mi", "each", "xnnpack", 1.15},
    {"f32 forward in cache", "f32", "fwd", "1Mi", "each", "best of onednn, xnnpack", 1.00},
    {"f16 forward at the memory limit", "f16", "fwd", "64Mi", "each", "limit", 0.90},
    {"f16 forward against XNNPACK", "f16", "fwd", "64Mi", "each", "xnnpack", 1.20},
    {"bf16 forward at the memory limit", "bf16", "fwd", "64Mi", "each", "limit", 0.90},
    {"bf16 forward against XNNPACK's f16", "bf16", "fwd", "64Mi", "each", "xnnpack f16", 1.20},
    {"f32 backward at the 3-stream limit", "f32", "bwd", "64Mi", "each", "limit", 0.85},
    {"f32 forward in place against oneDNN", "f32", "fwd_inplace", "each", "each", "onednn", 1.00},
    {"ELU against oneDNN", "f32", "elu_fwd", "1Mi, 64Mi", "each", "onednn", 1.00},
    {"ReLU against oneDNN", "f32", "relu_fwd", "1Mi, 64Mi", "each", "onednn", 1.00},
    {"PReLU against oneDNN", "f32", "prelu_fwd", "1Mi, 64Mi", "each", "onednn", 1.00},
    {"bias_act + dropout at the memory limit", "f32", "bias_act_dropout_fwd", "64Mi", "each",
     "limit", 0.80},
    {"a small call against XNNPACK", "f32", "fwd", "4Ki", "1", "xnnpack", 0.90},
    {"f32 forward, all threads against one", "f32", "fwd", "64Mi", "all", "leaky 1T", 1.60},
    {"qu8 forward at the memory limit", "qu8", "fwd", "64Mi", "each", "limit", 0.90},
    {"qu8 forward against XNNPACK", "qu8", "fwd", "64Mi", "each", "xnnpack", 1.15},
    {"qu8 forward in cache against XNNPACK", "qu8", "fwd", "64Ki", "each", "xnnpack", 1.15},
    {"qs8 forward at the memory limit", "qs8", "fwd", "64Mi", "each", "limit", 0.90},
    {"int32 epilogue (bias + LeakyReLU + requantize) at the memory limit", "qu8", "epilogue",
     "64Mi", "each", "limit", 0.90},
};

std::string TargetsMarkdown() {
  std::string text = "| check | dtype | mode | elements | threads | leaky against | at least |\n"
                     "|---|---|---|---|---|---|---|\n";
  for (const Target& t : kTargets) {
    char needed[16];
    std::snprintf(needed, sizeof(needed), "%.2f", t.at_least);
    text += std::string("| ") + t.check + " | " + t.dtype + " | `" + t.mode + "` | " + t.elements +
            " | " + t.threads + " | " + t.against + " | " + needed + " |\n";
  }
  return text;
}

// Fewer rounds than this give no PASS or MISS: their quartiles say little.
constexpr size_t kMinRoundsForVerdict = 5;

// ------------------------------------------------------------- the samples
struct Settings {
  std::string out_dir = "runs/bench";
  std::string filter;
  double min_time = 0.1;
  int rounds = 15;
  int passes = 3;
  bool quick = false;
  bool targets = false;
  std::string bench_binary;
};

std::string SelfDirectory() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

// One benchmark's GB/s, a sample per round, and its interleaving group
// (samples of one group and round were taken side by side).
struct Series {
  std::string group;
  std::vector<double> gbps;
};

// Results: key -> contender -> samples.
using Results = std::map<Key, std::map<std::string, Series>>;

// Median and quartiles (linear interpolation between order statistics).
struct Spread {
  double median = NAN, q1 = NAN, q3 = NAN;
  size_t n = 0;
  bool ok() const { return n > 0 && !std::isnan(median); }
  double relative() const { return (q3 - q1) / median; }
};

double Quantile(const std::vector<double>& sorted, double p) {
  const double at = p * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(at));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - static_cast<double>(below)) * (sorted[above] - sorted[below]);
}

Spread Summarize(std::vector<double> values) {
  std::erase_if(values, [](double v) { return !std::isfinite(v); });
  Spread s;
  s.n = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.median = Quantile(values, 0.5);
  s.q1 = Quantile(values, 0.25);
  s.q3 = Quantile(values, 0.75);
  return s;
}

// a's speed over b's: per round where both ran in one group (the rounds'
// drift cancels), else over every pair of samples. Sample i of a group is
// round i for each of its benchmarks, a slow one too: it runs the first
// rounds only (leaky-bench's kSlowRounds), so the pairs are the first ones.
Spread RatioOfSamples(const std::vector<double>& a, const std::vector<double>& b, bool paired) {
  std::vector<double> ratios;
  if (paired) {
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) ratios.push_back(a[i] / b[i]);
  } else {
    for (double x : a) {
      for (double y : b) ratios.push_back(x / y);
    }
  }
  Spread s = Summarize(std::move(ratios));
  s.n = std::min(a.size(), b.size());  // rounds, not pairs
  return s;
}

Spread Ratio(const Series* a, const Series* b) {
  if (a == nullptr || b == nullptr || a->gbps.empty() || b->gbps.empty()) return {};
  return RatioOfSamples(a->gbps, b->gbps, a->group == b->group);
}

Results Parse(const json& raw) {
  if (raw.value("format", "") != "leaky-bench-rounds-1") {
    throw std::runtime_error("not leaky-bench's JSON (format leaky-bench-rounds-1)");
  }
  Results results;
  for (const json& row : raw.at("benchmarks")) {
    if (row.contains("error")) continue;
    const Key key{row.at("dtype").get<std::string>(), row.at("mode").get<std::string>(),
                  row.at("elements").get<long long>(), row.at("threads").get<int>()};
    Series series{row.at("group").get<std::string>(), {}};
    const double bytes = row.at("bytes").get<double>();
    for (const json& seconds : row.at("seconds")) series.gbps.push_back(bytes / seconds.get<double>() / 1e9);
    results[key][row.at("contender").get<std::string>()] = std::move(series);
  }
  return results;
}

const Series* Get(const Results& results, const Key& key, const std::string& contender) {
  auto row = results.find(key);
  if (row == results.end()) return nullptr;
  auto value = row->second.find(contender);
  return value == row->second.end() ? nullptr : &value->second;
}

Spread Of(const Series* s) { return s == nullptr ? Spread{} : Summarize(s->gbps); }

// The streaming-copy limit for the same bytes: in-place forward, ELU and
// ReLU move the bytes of an out-of-place forward.
const Series* Limit(const Results& results, Key key) {
  if (key.mode == "fwd_inplace" || key.mode == "elu_fwd" || key.mode == "relu_fwd") key.mode = "fwd";
  return Get(results, key, "stream_copy");
}

// The peer among `peers` with the higher median GB/s.
const Series* BestPeer(const Results& results, const Key& key, const std::vector<std::string>& peers,
                       std::string* which) {
  const Series* best = nullptr;
  double best_median = NAN;
  for (const std::string& peer : peers) {
    const Series* s = Get(results, key, peer);
    const double m = Of(s).median;
    if (s != nullptr && !std::isnan(m) && (best == nullptr || m > best_median)) {
      best = s;
      best_median = m;
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

// "1.21 [1.17, 1.25]": a ratio's median and quartiles.
std::string FormatRatio(const Spread& s) {
  if (!s.ok()) return "-";
  return Format(s.median, "%.2f") + " [" + Format(s.q1, "%.2f") + ", " + Format(s.q3, "%.2f") + "]";
}

std::string SizeLabel(long long n) {
  if (n >= (1 << 20)) return std::to_string(n >> 20) + "Mi";
  if (n >= (1 << 10)) return std::to_string(n >> 10) + "Ki";
  return std::to_string(n);
}

json Interval(const Spread& s) {
  return s.ok() ? json::array({s.q1, s.q3}) : json(nullptr);
}
json Number(double v) { return std::isnan(v) ? json(nullptr) : json(v); }

json SummarizeRows(const Results& results) {
  json rows = json::array();
  for (const auto& [key, values] : results) {
    std::string best_peer;
    const Series* ours = Get(results, key, "leaky");
    const Spread to_peer = Ratio(ours, BestPeer(results, key, kPeers, &best_peer));
    const Spread to_limit = Ratio(ours, Limit(results, key));
    json gbps = json::object(), iqr = json::object(), spread = json::object();
    for (const auto& [contender, series] : values) {
      const Spread s = Summarize(series.gbps);
      gbps[contender] = Number(s.median);
      iqr[contender] = Interval(s);
      spread[contender] = Number(100 * s.relative());
    }
    rows.push_back({{"dtype", key.dtype},
                    {"mode", key.mode},
                    {"elements", key.elements},
                    {"threads", key.threads},
                    {"gbps", gbps},
                    {"gbps_iqr", iqr},
                    {"spread_pct", spread},
                    {"limit_gbps", Number(Of(Limit(results, key)).median)},
                    {"best_peer", best_peer},
                    {"ratio_to_limit", Number(to_limit.median)},
                    {"ratio_to_limit_iqr", Interval(to_limit)},
                    {"ratio_to_best_peer", Number(to_peer.median)},
                    {"ratio_to_best_peer_iqr", Interval(to_peer)}});
  }
  return rows;
}

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

long long ParseSize(const std::string& text) {
  const long long n = std::stoll(text);
  if (text.ends_with("Mi")) return n << 20;
  if (text.ends_with("Ki")) return n << 10;
  return n;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    item.erase(0, item.find_first_not_of(' '));
    items.push_back(item);
  }
  return items;
}

// PASS when the ratio's whole interquartile range reaches the target, MISS
// when none of it does, else unclear: a verdict that the run's own spread
// could turn is not given.
std::string Verdict(const Spread& ratio, double needed) {
  if (!ratio.ok()) return "n/a";
  if (ratio.n < kMinRoundsForVerdict) return "unclear";
  if (ratio.q1 >= needed) return "PASS";
  if (ratio.q3 < needed) return "MISS";
  return "unclear";
}

// Against several peers ("best of"), the target is to reach the faster of
// them, so each of them: PASS when PASS against every one, MISS when MISS
// against any, else unclear. Picking the peer with the higher median first
// let two peers of about one speed swap places between runs, and the
// verdict with them (1.01 PASS against oneDNN, then 0.97 MISS against
// XNNPACK in the next run).
std::string Combined(const std::vector<std::string>& verdicts) {
  if (verdicts.empty()) return "n/a";
  bool all_pass = true;
  for (const std::string& v : verdicts) {
    if (v == "MISS") return "MISS";
    all_pass = all_pass && v == "PASS";
  }
  for (const std::string& v : verdicts) {
    if (v == "n/a") return "n/a";
  }
  return all_pass ? "PASS" : "unclear";
}

// The combined verdict of the ratios to each peer, and in `shown` the
// ratio that decides it (the worst verdict's; among equals, the lowest
// median). A peer not measured counts as n/a: nothing passes without it.
std::string Judge(const std::vector<Spread>& ratios, double needed, Spread* shown, size_t* which) {
  auto rank = [](const std::string& v) { return v == "MISS" ? 0 : v == "unclear" ? 1 : v == "PASS" ? 2 : 3; };
  std::vector<std::string> verdicts;
  for (size_t k = 0; k < ratios.size(); ++k) {
    verdicts.push_back(Verdict(ratios[k], needed));
    if (shown == nullptr || !ratios[k].ok()) continue;
    const int r = rank(verdicts.back()), best = shown->ok() ? rank(verdicts[*which]) : 4;
    if (r < best || (r == best && ratios[k].median < shown->median)) {
      *shown = ratios[k];
      *which = k;
    }
  }
  const std::string verdict = Combined(verdicts);
  if (verdict == "n/a" && shown != nullptr) *shown = Spread{};
  return verdict;
}

// The chance that two runs like this one give a check the same verdict:
// the sum over verdicts of p^2, where p is a verdict's share among runs
// rebuilt from this run's rounds, drawn with replacement. Against a peer of
// the same group the samples of a round are drawn together (one draw of
// rounds serves every such peer of the same length); against another
// group, or a slow peer with fewer rounds, each side is drawn on its own.
// Summed over the checks, 1 minus this is the number of verdicts expected
// to change between two runs. It treats rounds as independent, though the
// passes differ somewhat (docs/design.md), so it leans low: on four pairs
// of full runs the figures of each pair's two runs were 5.9 and 5.1, 7.9
// and 9.4, 8.0 and 6.5, 6.2 and 8.6 against 4, 9, 10 and 12 changes seen.
// A fixed seed: the same samples give the same figure.
double RepeatChance(const Series& ours, const std::vector<const Series*>& theirs, double needed) {
  constexpr int kDraws = 1000;
  std::mt19937_64 random(20261205);
  auto draw = [&random](const std::vector<double>& from, const std::vector<size_t>* picks) {
    std::vector<double> drawn(picks != nullptr ? picks->size() : from.size());
    for (size_t i = 0; i < drawn.size(); ++i) {
      drawn[i] = from[picks != nullptr ? (*picks)[i] : random() % from.size()];
    }
    return drawn;
  };
  auto pick = [&random](size_t rounds) {
    std::vector<size_t> picks(rounds);
    for (size_t& r : picks) r = random() % rounds;
    return picks;
  };
  std::map<std::string, int> verdicts;
  for (int d = 0; d < kDraws; ++d) {
    const std::vector<size_t> shared = pick(ours.gbps.size());
    std::vector<Spread> ratios;
    for (const Series* s : theirs) {
      if (s == nullptr) {
        ratios.emplace_back();  // not measured: n/a in every draw
      } else if (s->group != ours.group) {
        ratios.push_back(RatioOfSamples(draw(ours.gbps, nullptr), draw(s->gbps, nullptr), false));
      } else if (s->gbps.size() == ours.gbps.size()) {
        ratios.push_back(RatioOfSamples(draw(ours.gbps, &shared), draw(s->gbps, &shared), true));
      } else {  // a slow peer: its rounds are the first ones
        const std::vector<size_t> own = pick(std::min(ours.gbps.size(), s->gbps.size()));
        ratios.push_back(RatioOfSamples(draw(ours.gbps, &own), draw(s->gbps, &own), true));
      }
    }
    ++verdicts[Judge(ratios, needed, nullptr, nullptr)];
  }
  double chance = 0;
  for (const auto& [verdict, count] : verdicts) {
    const double share = static_cast<double>(count) / kDraws;
    chance += share * share;
  }
  return chance;
}

json CheckTargets(const Results& results, const std::vector<int>& thread_counts) {
  json checks = json::array();
  std::printf("\nTargets (docs/design.md; ratio = leaky's GB/s over the other's, median [quartiles] "
              "over rounds paired in time;\nPASS: the quartiles reach the target, MISS: neither does, "
              "unclear: the spread crosses it):\n");
  for (const Target& t : kTargets) {
    std::vector<long long> sizes;
    if (std::string(t.elements) == "each") {
      for (const auto& [key, values] : results) {
        if (key.dtype == t.dtype && key.mode == t.mode &&
            std::find(sizes.begin(), sizes.end(), key.elements) == sizes.end()) {
          sizes.push_back(key.elements);
        }
      }
    } else {
      for (const std::string& size : SplitList(t.elements)) sizes.push_back(ParseSize(size));
    }
    std::vector<int> threads = thread_counts;
    if (std::string(t.threads) == "1") threads = {1};
    if (std::string(t.threads) == "all") threads = {thread_counts.empty() ? 1 : thread_counts.back()};
    for (long long n : sizes) {
      for (int th : threads) {
        if (std::string(t.threads) == "all" && th == 1) continue;  // one core: no scaling to check
        const Key key{t.dtype, t.mode, n, th};
        const std::string against = t.against;
        std::string label = against;
        // What leaky is held against: one series, or each peer of "best of"
        // (named in peer_names); nullptr where nothing was measured (n/a).
        std::vector<const Series*> peers;
        std::vector<std::string> peer_names;
        auto measured = [](const Series* s) { return s != nullptr && !s->gbps.empty() ? s : nullptr; };
        if (against == "limit") {
          peers = {measured(Limit(results, key))};
        } else if (against.starts_with("best of ")) {
          for (const std::string& peer : SplitList(against.substr(8))) {
            peers.push_back(measured(Get(results, key, peer)));
            peer_names.push_back(peer);
          }
          label = "each peer";
        } else {
          // "contender", "contender f16" or "contender 1T"
          Key other = key;
          std::string contender = against;
          if (const size_t space = against.find(' '); space != std::string::npos) {
            contender = against.substr(0, space);
            const std::string modifier = against.substr(space + 1);
            if (modifier.ends_with("T")) {
              other.threads = std::stoi(modifier);
            } else {
              other.dtype = modifier;
            }
          }
          peers = {measured(Get(results, other, contender))};
        }
        const Series* ours = Get(results, key, "leaky");
        Spread ratio;
        std::string verdict = "n/a";
        double repeat = NAN;
        if (ours != nullptr && !ours->gbps.empty()) {
          std::vector<Spread> ratios;
          for (const Series* peer : peers) ratios.push_back(Ratio(ours, peer));
          size_t deciding = 0;
          verdict = Judge(ratios, t.at_least, &ratio, &deciding);
          if (!peer_names.empty() && ratio.ok()) {
            label = "each peer (" + peer_names[deciding] + " decides)";
          }
          if (verdict != "n/a") repeat = RepeatChance(*ours, peers, t.at_least);
        }
        const std::string what = std::string(t.check) + ", " + t.dtype + " " + t.mode + " " +
                                 SizeLabel(n) + " @" + std::to_string(th) + "T / " + label;
        checks.push_back({{"target", what},
                          {"check", t.check},
                          {"ratio", Number(ratio.median)},
                          {"ratio_iqr", Interval(ratio)},
                          {"rounds", ratio.n},
                          {"needed", t.at_least},
                          {"verdict", verdict},
                          {"repeat_chance", Number(repeat)},
                          {"pass", verdict == "PASS"}});
        if (verdict == "n/a") continue;  // not measured (a filter, one core): counted below
        std::printf("  %-7s %-82s %-18s (needs >= %.2f; a rerun agrees %3.0f%%)\n", verdict.c_str(),
                    what.c_str(), FormatRatio(ratio).c_str(), t.at_least, 100 * repeat);
      }
    }
  }
  return checks;
}

// When the machine was busy, a run's numbers are the machine's: said
// before the verdicts are read. Thresholds: half a thread runnable besides
// the bench's own, on average over the half second before the run; 5% of
// the CPUs' time used by other processes or 2% stolen by the hypervisor; a
// streaming copy whose quartiles are more than 10% of its median apart
// (the copy is the steadiest thing measured; when it wavers, the memory
// system was shared).
json Warnings(const json& raw, const Results& results) {
  json warnings = json::array();
  auto warn = [&warnings](const std::string& text) { warnings.push_back(text); };
  const json machine = raw.value("machine", json::object());
  auto number = [](const json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number() ? it->get<double>() : NAN;
  };
  // Runnable threads, not the 1-minute load average: that still counts a
  // process that has ended, such as this bench's previous run.
  const double runnable = number(machine, "runnable_others_start");
  if (runnable >= 0.5) {
    warn("busy machine: " + Format(runnable, "%.1f") +
         " other threads runnable on average in the half second before the run");
  }
  for (const char* when : {"start", "run"}) {
    const json shares = machine.value(when, json::object());
    const std::string during = std::string(when) == "start" ? "in the half second before the run"
                                                            : "during the run";
    const double others = number(shares, "others_busy_pct");
    if (others >= 5) warn("busy machine: other processes used " + Format(others, "%.0f") +
                          "% of the CPUs' time " + during);
    const double steal = number(shares, "steal_pct");
    if (steal >= 2) warn("busy host: the hypervisor stole " + Format(steal, "%.1f") + "% of the CPUs' time " + during);
  }
  int copies = 0, wide = 0;
  double worst = 0;
  std::string worst_case;
  for (const auto& [key, values] : results) {
    const auto copy = values.find("stream_copy");
    if (copy == values.end()) continue;
    const Spread s = Summarize(copy->second.gbps);
    if (!s.ok()) continue;
    ++copies;
    if (s.relative() > 0.10) {
      ++wide;
      if (s.relative() > worst) {
        worst = s.relative();
        worst_case = key.dtype + " " + key.mode + " " + SizeLabel(key.elements) + " @" +
                     std::to_string(key.threads) + "T";
      }
    }
  }
  if (wide > 0) {
    warn("unsteady memory system: the streaming copy's spread (IQR) exceeded 10% of its median in " +
         std::to_string(wide) + " of " + std::to_string(copies) + " cases (worst " + worst_case + ", " +
         Format(100 * worst, "%.0f") + "%)");
  }
  int capped = 0;
  for (const json& row : raw.at("benchmarks")) capped += row.value("pauses_capped", 0);
  if (capped > 0) {
    warn("threads still running after the longest pause before " + std::to_string(capped) +
         " samples (OMP_WAIT_POLICY=active?)");
  }
  return warnings;
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
  const char* colours[] = {"#d62728", "#ff9896", "#e377c2", "#1f77b4",
                           "#2ca02c", "#9467bd", "#8c564b", "#000000"};
  // The contenders this run measured, each in its fixed colour.
  for (size_t c = 0; c < kContenders.size(); ++c) {
    const std::string name = kContenders[c] + (kContenders[c] == "stream_copy" ? " (limit)" : "");
    if (std::none_of(rows.begin(), rows.end(), [&](const json& r) { return r["contender"] == name; })) continue;
    domain.push_back(name);
    range.push_back(colours[c]);
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
  std::string command = Quote(binary) + " --out=" + Quote(raw_path.string()) +
                        " --rounds=" + std::to_string(settings.rounds) +
                        " --passes=" + std::to_string(settings.passes) +
                        " --min-time=" + std::to_string(settings.min_time);
  if (settings.quick) command += " --quick";
  if (!settings.filter.empty()) command += " --filter=" + Quote(settings.filter);
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
  std::printf("GB/s (bytes read + written): median over %d interleaved rounds in %d passes (IQR as "
              "%% of the median);\nlimit = non-temporal streaming copy of the same bytes; ratios: median "
              "[quartiles] of per-round ratios\n",
              settings.rounds, raw.at("context").value("passes", 1));
  PrintTable(results);
  const json targets = CheckTargets(results, thread_counts);
  int pass = 0, miss = 0, unclear = 0;
  double changes = 0;
  for (const json& t : targets) {
    const std::string v = t.at("verdict");
    pass += v == "PASS";
    miss += v == "MISS";
    unclear += v == "unclear";
    if (v != "n/a") changes += 1 - t.at("repeat_chance").get<double>();
  }
  std::printf("  %d PASS, %d MISS, %d unclear, %d not measured in this run\n", pass, miss, unclear,
              static_cast<int>(targets.size()) - pass - miss - unclear);
  std::printf("  verdicts expected to differ between two runs like this one: %.1f of %d\n", changes,
              pass + miss + unclear);
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
                    {"verdict", "PASS if the ratio's first quartile reaches the target, MISS if "
                                "its third quartile does not, else unclear"},
                    {"repeat_chance", "the chance that two runs like this one agree on a verdict, "
                                      "from 1000 runs rebuilt from this one's rounds"}}},
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

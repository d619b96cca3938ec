// `leaky bench`'s judgement of a run, as a toolkit library the CLI calls:
// the performance targets (the one table docs/design.md shows), the
// samples' medians and quartiles, paired ratios, verdicts that the run's
// own spread cannot turn, the chance that a verdict repeats, and the
// warnings of a busy machine. The method is docs/design.md's "Performance
// targets"; tools/leaky/bench.cc runs the benchmarks and prints.
#include "bench_verdicts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace leaky::toolkit::bench {

using json = nlohmann::json;



// ------------------------------------------------------------- the targets
// Today's performance targets: the one table. Where a peer itself streams at
// the memory limit (f32 and f16 at 64 Mi), a lead over it cannot be had:
// the target is "at least the peer and 0.95 of the limit" (two rows);
// where a peer runs below the limit, the lead stays. docs/design.md shows it as
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
    {"f32 forward at the memory limit", "f32", "fwd", "64Mi", "each", "limit", 0.95},
    {"f32 forward against oneDNN", "f32", "fwd", "64Mi", "each", "onednn", 1.00},
    {"f32 forward against XNNPACK", "f32", "fwd", "64Mi", "each", "xnnpack", 1.00},
    {"f32 forward in cache", "f32", "fwd", "1Mi", "each", "best of onednn, xnnpack", 1.00},
    {"f16 forward at the memory limit", "f16", "fwd", "64Mi", "each", "limit", 0.95},
    {"f16 forward against XNNPACK", "f16", "fwd", "64Mi", "each", "xnnpack", 1.00},
    {"bf16 forward at the memory limit", "bf16", "fwd", "64Mi", "each", "limit", 0.95},
    {"bf16 forward against XNNPACK's f16", "bf16", "fwd", "64Mi", "each", "xnnpack f16", 1.00},
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

std::string Format(double v, const char* format) {
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
}  // namespace leaky::toolkit::bench

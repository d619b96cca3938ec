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
    {"int32 epilogue channels-last at the memory limit", "qu8", "epilogue_channels_last", "64Mi",
     "each", "limit", 0.90},
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

// a's speed over b's: per round (a[i] and b[i] taken side by side, the
// rounds' drift cancels), else over every pair of samples.
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

// The samples of a and b taken in the same round, as (a's, b's) indices in
// a's order. A slow benchmark runs a pass's first rounds only (leaky-bench's
// kSlowRounds), a rerun's benchmarks the rounds after the run's.
std::vector<std::pair<size_t, size_t>> SameRounds(const Series& a, const Series& b) {
  std::map<int, size_t> in_b;
  for (size_t j = 0; j < b.gbps.size(); ++j) in_b[b.round[j]] = j;
  std::vector<std::pair<size_t, size_t>> pairs;
  for (size_t i = 0; i < a.gbps.size(); ++i) {
    if (const auto j = in_b.find(a.round[i]); j != in_b.end()) pairs.emplace_back(i, j->second);
  }
  return pairs;
}

Spread Ratio(const Series* a, const Series* b) {
  if (a == nullptr || b == nullptr || a->gbps.empty() || b->gbps.empty()) return {};
  if (a->group != b->group) return RatioOfSamples(a->gbps, b->gbps, false);
  std::vector<double> x, y;
  for (const auto& [i, j] : SameRounds(*a, *b)) {
    x.push_back(a->gbps[i]);
    y.push_back(b->gbps[j]);
  }
  return RatioOfSamples(x, y, true);
}

// Sample i's round and pass in a row of leaky-bench's JSON: the row's own
// lists where a rerun was merged in (MergeRerun), else round i of the run,
// whose rounds leaky-bench shares out over its passes in order.
void RoundsAndPasses(const json& row, const json& context, std::vector<int>* round,
                     std::vector<int>* pass) {
  const size_t samples = row.at("seconds").size();
  if (row.contains("round_ids")) {
    *round = row.at("round_ids").get<std::vector<int>>();
    *pass = row.at("pass_ids").get<std::vector<int>>();
    if (round->size() != samples || pass->size() != samples) {
      throw std::runtime_error("a benchmark's round_ids or pass_ids do not match its seconds");
    }
    return;
  }
  const int rounds = context.value("rounds", static_cast<int>(samples));
  const int passes = std::max(1, context.value("passes", 1));
  round->clear();
  pass->clear();
  for (int r = 0; r < static_cast<int>(samples); ++r) {
    int p = 0;
    while (p + 1 < passes && rounds * (p + 1) / passes <= r) ++p;
    round->push_back(r);
    pass->push_back(p);
  }
}

Results Parse(const json& raw) {
  if (raw.value("format", "") != "leaky-bench-rounds-1") {
    throw std::runtime_error("not leaky-bench's JSON (format leaky-bench-rounds-1)");
  }
  const json context = raw.value("context", json::object());
  Results results;
  for (const json& row : raw.at("benchmarks")) {
    if (row.contains("error")) continue;
    const Key key{row.at("dtype").get<std::string>(), row.at("mode").get<std::string>(),
                  row.at("elements").get<long long>(), row.at("threads").get<int>()};
    Series series{row.at("group").get<std::string>(), {}, {}, {}};
    const double bytes = row.at("bytes").get<double>();
    for (const json& seconds : row.at("seconds")) series.gbps.push_back(bytes / seconds.get<double>() / 1e9);
    RoundsAndPasses(row, context, &series.round, &series.pass);
    results[key][row.at("contender").get<std::string>()] = std::move(series);
  }
  return results;
}

void MergeRerun(json* raw, const json& rerun, const std::vector<std::string>& names) {
  json& context = raw->at("context");
  if (context.contains("rerun")) throw std::logic_error("MergeRerun: the run has a rerun already");
  const json rerun_context = rerun.value("context", json::object());
  const int first_round = context.value("rounds", 0), first_pass = context.value("passes", 1);
  std::map<std::string, const json*> again;
  for (const json& row : rerun.at("benchmarks")) {
    const std::string name = row.at("name");
    if (!row.contains("error") && std::find(names.begin(), names.end(), name) != names.end()) {
      again[name] = &row;
    }
  }
  for (json& row : raw->at("benchmarks")) {
    const auto other = again.find(row.at("name").get<std::string>());
    if (row.contains("error") || other == again.end()) continue;
    std::vector<int> round, pass, more_round, more_pass;
    RoundsAndPasses(row, context, &round, &pass);
    RoundsAndPasses(*other->second, rerun_context, &more_round, &more_pass);
    for (size_t i = 0; i < more_round.size(); ++i) {
      row["seconds"].push_back(other->second->at("seconds").at(i));
      round.push_back(first_round + more_round[i]);
      pass.push_back(first_pass + more_pass[i]);
    }
    row["round_ids"] = round;
    row["pass_ids"] = pass;
  }
  context["rerun"] = {{"rounds", rerun_context.value("rounds", 0)},
                      {"passes", rerun_context.value("passes", 1)},
                      {"benchmarks", again.size()}};
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
Key LimitKey(Key key) {
  if (key.mode == "fwd_inplace" || key.mode == "elu_fwd" || key.mode == "relu_fwd") key.mode = "fwd";
  return key;
}

const Series* Limit(const Results& results, const Key& key) {
  return Get(results, LimitKey(key), "stream_copy");
}

// leaky-bench's name of a benchmark (its --filter matches these).
std::string BenchmarkName(const Key& key, const std::string& contender) {
  return contender + "/" + key.dtype + "/" + key.mode + "/" + std::to_string(key.elements) + "/" +
         std::to_string(key.threads);
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

// Items (samples, or pairs of samples) grouped by the pass they were taken
// in, passes in order.
using ByPass = std::vector<std::vector<size_t>>;

ByPass GroupByPass(const std::vector<int>& pass_of_item) {
  std::map<int, std::vector<size_t>> passes;
  for (size_t i = 0; i < pass_of_item.size(); ++i) passes[pass_of_item[i]].push_back(i);
  ByPass grouped;
  for (auto& [pass, items] : passes) grouped.push_back(std::move(items));
  return grouped;
}

// A run rebuilt from one: as many passes as it had, drawn from its passes
// with replacement, each drawn pass's items drawn from it with replacement.
std::vector<size_t> DrawByPass(const ByPass& passes, std::mt19937_64& random) {
  std::vector<size_t> drawn;
  for (size_t p = 0; p < passes.size(); ++p) {
    const std::vector<size_t>& pass = passes[random() % passes.size()];
    for (size_t k = 0; k < pass.size(); ++k) drawn.push_back(pass[random() % pass.size()]);
  }
  return drawn;
}

// The chance that two runs like this one give a check the same verdict:
// the sum over verdicts of p^2, where p is a verdict's share among runs
// rebuilt from this run, drawn by pass (DrawByPass). Passes differ beyond
// their rounds' spread (docs/design.md), so drawing rounds alone, as this
// did before, leaned low: 4, 9, 10 and 12 changes seen against pairs of
// figures 5.9 and 5.1, 7.9 and 9.4, 8.0 and 6.5, 6.2 and 8.6. By pass, on
// four pairs with the rerun (tests/data/bench_pairs, the bench_calibration
// test): 34.5 expected in total against 32 seen; rounds alone 25.1. Against a
// peer of the same group the two samples of a round are drawn together
// (one draw serves every such peer that ran every round); against another
// group each side is drawn on its own. Summed over the checks, 1 minus
// this is the number of verdicts expected to change between two runs. A
// fixed seed: the same samples give the same figure.
double RepeatChance(const Series& ours, const std::vector<const Series*>& theirs, double needed) {
  constexpr int kDraws = 1000;
  std::mt19937_64 random(20261205);
  auto values = [](const std::vector<double>& from, const std::vector<size_t>& picks) {
    std::vector<double> drawn;
    for (size_t i : picks) drawn.push_back(from[i]);
    return drawn;
  };
  struct Peer {
    std::vector<std::pair<size_t, size_t>> pairs;  // same group: rounds both ran
    ByPass passes;                                 // the pairs', or another group's samples
    bool every_round = false;                      // pairs[i].first == i for each of ours
  };
  const ByPass our_passes = GroupByPass(ours.pass);
  std::vector<Peer> peers(theirs.size());
  for (size_t k = 0; k < theirs.size(); ++k) {
    const Series* s = theirs[k];
    if (s == nullptr) continue;
    if (s->group != ours.group) {
      peers[k].passes = GroupByPass(s->pass);
      continue;
    }
    peers[k].pairs = SameRounds(ours, *s);
    peers[k].every_round = peers[k].pairs.size() == ours.gbps.size();
    std::vector<int> pass_of_pair;
    for (const auto& [i, j] : peers[k].pairs) pass_of_pair.push_back(ours.pass[i]);
    peers[k].passes = GroupByPass(pass_of_pair);
  }
  std::map<std::string, int> verdicts;
  for (int d = 0; d < kDraws; ++d) {
    const std::vector<size_t> shared = DrawByPass(our_passes, random);
    std::vector<Spread> ratios;
    for (size_t k = 0; k < theirs.size(); ++k) {
      const Series* s = theirs[k];
      if (s == nullptr) {
        ratios.emplace_back();  // not measured: n/a in every draw
      } else if (s->group != ours.group) {
        ratios.push_back(RatioOfSamples(values(ours.gbps, DrawByPass(our_passes, random)),
                                        values(s->gbps, DrawByPass(peers[k].passes, random)),
                                        false));
      } else {
        const std::vector<size_t> picks =
            peers[k].every_round ? shared : DrawByPass(peers[k].passes, random);
        std::vector<double> x, y;
        for (size_t p : picks) {
          x.push_back(ours.gbps[peers[k].pairs[p].first]);
          y.push_back(s->gbps[peers[k].pairs[p].second]);
        }
        ratios.push_back(RatioOfSamples(x, y, true));
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
        std::vector<std::string> peer_names, benchmarks;
        // A measured series, its name kept; nullptr if not measured.
        auto use = [&](const Key& of, const std::string& contender) -> const Series* {
          const Series* s = Get(results, of, contender);
          if (s == nullptr || s->gbps.empty()) return nullptr;
          benchmarks.push_back(BenchmarkName(of, contender));
          return s;
        };
        const Series* ours = use(key, "leaky");
        if (against == "limit") {
          peers = {use(LimitKey(key), "stream_copy")};
        } else if (against.starts_with("best of ")) {
          for (const std::string& peer : SplitList(against.substr(8))) {
            peers.push_back(use(key, peer));
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
          peers = {use(other, contender)};
        }
        Spread ratio;
        std::string verdict = "n/a";
        double repeat = NAN;
        if (ours != nullptr) {
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
                          {"firm", verdict != "n/a" && repeat >= kFirm},
                          {"benchmarks", benchmarks},
                          {"pass", verdict == "PASS"}});
      }
    }
  }
  return checks;
}

double ExpectedChanges(const json& checks) {
  double changes = 0;
  for (const json& c : checks) {
    if (c.at("verdict") != "n/a") changes += 1 - c.at("repeat_chance").get<double>();
  }
  return changes;
}

void PrintChecks(const json& checks) {
  std::printf(
      "\nTargets (docs/design.md; ratio = leaky's GB/s over the other's, median [quartiles] "
      "over rounds paired in time;\nPASS: the quartiles reach the target, MISS: neither does, "
      "unclear: the spread crosses it):\n");
  std::map<std::string, int> count;
  int firm = 0;
  for (const json& c : checks) {
    const std::string verdict = c.at("verdict");
    ++count[verdict];
    if (verdict == "n/a") continue;  // not measured (a filter, one core): counted below
    firm += c.at("firm").get<bool>();
    Spread ratio;
    if (c.at("ratio_iqr").is_array()) {
      ratio = {c.at("ratio").get<double>(), c.at("ratio_iqr")[0].get<double>(),
               c.at("ratio_iqr")[1].get<double>(), c.at("rounds").get<size_t>()};
    }
    std::printf("  %-7s %-82s %-18s (needs >= %.2f; a rerun agrees %3.0f%%)\n", verdict.c_str(),
                c.at("target").get<std::string>().c_str(), FormatRatio(ratio).c_str(),
                c.at("needed").get<double>(), 100 * c.at("repeat_chance").get<double>());
  }
  const int judged = count["PASS"] + count["MISS"] + count["unclear"];
  std::printf("  %d PASS, %d MISS, %d unclear, %d not measured in this run\n", count["PASS"],
              count["MISS"], count["unclear"], count["n/a"]);
  std::printf(
      "  verdicts expected to differ between two runs like this one: %.1f of %d; firm (a rerun "
      "agrees %.0f%% or more): %d\n",
      ExpectedChanges(checks), judged, 100 * kFirm, firm);
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

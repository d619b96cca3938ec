// `leaky bench`'s judgement of a run (bench_verdicts.cc): the targets,
// the samples' spread, paired ratios, verdicts and warnings, as a toolkit
// library; the CLI (tools/leaky/bench.cc) runs leaky-bench and prints.
#ifndef LEAKY_TOOLKIT_BENCH_VERDICTS_H_
#define LEAKY_TOOLKIT_BENCH_VERDICTS_H_

#include <cmath>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace leaky::toolkit::bench {

// One row of leaky-bench's results: what was measured.
struct Key {
  std::string dtype, mode;
  long long elements;
  int threads;
  auto operator<=>(const Key&) const = default;
};

inline const std::vector<std::string> kContenders = {
    "leaky",   "leaky_cached", "leaky_stream", "leaky_pthreadpool", "onednn",
    "xnnpack", "loop",         "memcpy",       "stream_copy"};
inline const std::vector<std::string> kPeers = {"onednn", "xnnpack"};

// One benchmark's GB/s, a sample per round, and its interleaving group
// (samples of one group and round were taken side by side); round[i] and
// pass[i] are sample i's round and pass (a rerun's follow the run's:
// MergeRerun).
struct Series {
  std::string group;
  std::vector<double> gbps;
  std::vector<int> round, pass;
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

// The targets' table as docs/design.md shows it (`leaky bench --targets`).
std::string TargetsMarkdown();

// Median and quartiles of the finite values.
Spread Summarize(std::vector<double> values);
Spread Of(const Series* s);
// a's speed over b's (paired by round within one interleaving group).
Spread Ratio(const Series* a, const Series* b);
// leaky-bench's JSON (format leaky-bench-rounds-1); std::runtime_error otherwise.
Results Parse(const nlohmann::json& raw);
// Appends to `raw` the samples of `rerun` (leaky-bench run again on the
// benchmarks `names`) as rounds and passes after the run's own.
void MergeRerun(nlohmann::json* raw, const nlohmann::json& rerun,
                const std::vector<std::string>& names);
const Series* Get(const Results& results, const Key& key, const std::string& contender);
// The streaming-copy limit for the same bytes.
const Series* Limit(const Results& results, const Key& key);
// The faster of `peers` (its name in *which).
const Series* BestPeer(const Results& results, const Key& key, const std::vector<std::string>& peers,
                       std::string* which);
std::string Format(double v, const char* format = "%.1f");
std::string FormatRatio(const Spread& s);
std::string SizeLabel(long long n);
// The summary JSON's rows.
nlohmann::json SummarizeRows(const Results& results);
// Every target's verdicts for the thread counts measured, each with the
// benchmarks it reads (leaky-bench's names) and the chance that a rerun
// agrees.
nlohmann::json CheckTargets(const Results& results, const std::vector<int>& thread_counts);
// The checks as a table, with the verdicts' count, the changes expected
// between two runs like this one and the verdicts that are firm.
void PrintChecks(const nlohmann::json& checks);
// The sum over the checks judged of 1 minus the chance that a rerun agrees.
double ExpectedChanges(const nlohmann::json& checks);
// A check whose verdict two runs like this one agree on at least this often
// is firm; `leaky bench` samples the others again after the run.
constexpr double kFirm = 0.9;
// What a busy machine did to the run.
nlohmann::json Warnings(const nlohmann::json& raw, const Results& results);

}  // namespace leaky::toolkit::bench

#endif  // LEAKY_TOOLKIT_BENCH_VERDICTS_H_

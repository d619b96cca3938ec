#include "merge.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include "claims.h"
#include "lab.h"
#include "models.h"
#include "precision.h"
#include "summary.h"

namespace leaky::gan {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The slope of the precision table when no layer 2 is LeakyReLU.
constexpr double kPrecisionFallbackSlope = 0.2;
// A run's captured files (the plan's first seed only).
constexpr const char* kPreact = "preact_layer2.f32";

// The keys that make runs parts of one study: merge refuses to combine runs
// that differ in any of them. (Threads may differ: a cluster's nodes do.)
const char* const kIdentityKeys[] = {"lab_version", "preset",   "dataset",       "data_checksum",
                                     "classifier_checksum", "steps", "batch", "log_every",
                                     "quality_every", "samples", "models", "base_activation",
                                     "width", "init", "probe_every"};

[[noreturn]] void Refuse(const std::string& why) { throw std::runtime_error("gan merge: " + why); }

// The precision table, on the layer-2 pre-activations of the first variant
// whose layer 2 is LeakyReLU, at that variant's slope; else of the first
// variant that has them, at the base activation's slope
// (kPrecisionFallbackSlope if that is not LeakyReLU either). Null if none
// were captured.
json PrecisionTable(const json& meta, const fs::path& run_dir) {
  const ActivationSpec base = ParseActivation(meta["base_activation"].get<std::string>());
  double slope = base.kind == ActivationKind::kLeakyRelu ? base.slope : kPrecisionFallbackSlope;
  std::string source;
  for (const json& v : meta["plan"]["variants"]) {
    const std::string file = v["name"].get<std::string>() + "/" + kPreact;
    if (!fs::exists(run_dir / file)) continue;
    const ActivationSpec layer2 = ParseActivation(v["layer_activations"][1].get<std::string>());
    if (source.empty() || layer2.kind == ActivationKind::kLeakyRelu) {
      source = file;
      if (layer2.kind == ActivationKind::kLeakyRelu) {
        slope = layer2.slope;
        break;
      }
    }
  }
  if (source.empty()) return nullptr;
  std::ifstream in(run_dir / source, std::ios::binary | std::ios::ate);
  std::vector<float> x(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  return PrecisionJson(MeasurePrecision(x, slope), slope, source);
}

std::string RunName(const std::string& variant, int seed) {
  return variant + " seed " + std::to_string(seed);
}

// One input folder of a merge.
struct Part {
  std::string dir;
  json results;
  std::vector<json> records;
  int shard_index = 1, shard_count = 1;
  int plan_first = 0, plan_seeds = 0;
};

Part ReadPart(const std::string& dir) {
  Part p;
  p.dir = dir;
  const fs::path file = fs::path(dir) / "results.json";
  std::ifstream in(file);
  if (!in) Refuse(dir + " has no results.json (not a lab run folder)");
  p.results = json::parse(in, nullptr, false);
  if (p.results.is_discarded() || !p.results.is_object() || !p.results.contains("variants")) {
    Refuse(file.string() + " is not a lab results.json");
  }
  const int version = p.results.value("lab_version", 1);
  if (version != kLabVersion) {
    Refuse(dir + " was written by lab version " + std::to_string(version) + ", this is " +
           std::to_string(kLabVersion) + ": run it again");
  }
  if (p.results.contains("shard")) {
    p.shard_index = p.results["shard"]["index"].get<int>();
    p.shard_count = p.results["shard"]["count"].get<int>();
  }
  p.plan_first = p.results["plan"]["first_seed"].get<int>();
  p.plan_seeds = p.results["plan"]["seeds"].get<int>();
  for (const json& v : p.results["variants"]) {
    const json& seeds = v["seeds_run"];
    for (size_t i = 0; i < seeds.size(); ++i) {
      p.records.push_back({{"variant", v["name"]},
                           {"seed", seeds[i]},
                           {"final", v["per_seed"][i]},
                           {"history", v["history"][i]},
                           {"quality_history", v["quality_history"][i]},
                           {"probe_history", v["probe_history"][i]}});
    }
  }
  return p;
}

// The runs of a plan (variants in order, seeds first .. first + seeds - 1)
// in shard K of N: PlannedRuns' order and InShard's rule, on names.
std::vector<std::pair<std::string, int>> PlannedSlice(const json& variants, int first, int seeds,
                                                      int shard_index, int shard_count) {
  std::vector<std::pair<std::string, int>> mine;
  size_t index = 0;
  for (const json& v : variants) {
    for (int s = first; s < first + seeds; ++s, ++index) {
      if (InShard(index, shard_index, shard_count)) mine.emplace_back(v["name"], s);
    }
  }
  return mine;
}

// The runs a part was asked for.
std::vector<std::pair<std::string, int>> PlannedSlice(const Part& p) {
  return PlannedSlice(p.results["plan"]["variants"], p.plan_first, p.plan_seeds, p.shard_index,
                      p.shard_count);
}

void CheckSameStudy(const Part& a, const Part& b) {
  for (const char* key : kIdentityKeys) {
    if (a.results[key] != b.results[key]) {
      Refuse(a.dir + " and " + b.dir + " differ in " + key + " (" + a.results[key].dump() +
             " vs " + b.results[key].dump() + "): not parts of one study");
    }
  }
  if (a.results["plan"]["variants"] != b.results["plan"]["variants"]) {
    Refuse(a.dir + " and " + b.dir + " differ in their variants: not parts of one study");
  }
}

std::string Join(const std::vector<std::string>& items, size_t limit = 6) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > limit) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out;
}

void CopyFile(const fs::path& from, const fs::path& to) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
}

}  // namespace

json AssembleResults(json meta, std::vector<json> records, const fs::path& run_dir) {
  std::stable_sort(records.begin(), records.end(), [](const json& a, const json& b) {
    return a["seed"].get<int>() < b["seed"].get<int>();
  });
  json variants = json::array();
  for (const json& planned : meta["plan"]["variants"]) {
    std::vector<json> finals;
    json seeds = json::array(), histories = json::array(), qualities = json::array(),
         probes = json::array();
    for (const json& r : records) {
      if (r["variant"] != planned["name"]) continue;
      seeds.push_back(r["seed"]);
      finals.push_back(r["final"]);
      histories.push_back(r["history"]);
      qualities.push_back(r["quality_history"]);
      probes.push_back(r["probe_history"]);
    }
    if (finals.empty()) continue;
    json v = planned;
    v["seeds_completed"] = static_cast<int>(finals.size());
    v["seeds_run"] = seeds;
    v["final"] = MeanOverSeeds(finals);
    v["per_seed"] = finals;
    v["summary"] = SummaryOverSeeds(finals);
    v["history"] = histories;
    v["quality_history"] = qualities;
    v["probe_history"] = probes;
    variants.push_back(v);
  }
  meta["variants"] = variants;
  const json precision = PrecisionTable(meta, run_dir);
  if (!precision.is_null()) meta["precision"] = precision;
  const json claims = MeasureClaims(meta);
  if (!claims.is_null()) meta["claims"] = claims;
  return meta;
}

json MergeResults(const MergeOptions& options) {
  if (options.inputs.empty()) Refuse("no run folders given");
  std::vector<Part> parts;
  for (const std::string& dir : options.inputs) {
    if (fs::exists(options.out) && fs::exists(dir) && fs::equivalent(dir, options.out)) {
      Refuse("--out " + options.out + " is one of the inputs");
    }
    parts.push_back(ReadPart(dir));
  }
  for (size_t i = 1; i < parts.size(); ++i) CheckSameStudy(parts[0], parts[i]);

  // No run twice.
  std::map<std::pair<std::string, int>, const Part*> where;
  std::vector<json> records;
  for (const Part& p : parts) {
    for (const json& r : p.records) {
      const auto key = std::make_pair(r["variant"].get<std::string>(), r["seed"].get<int>());
      const auto [it, fresh] = where.emplace(key, &p);
      if (!fresh) {
        Refuse(RunName(key.first, key.second) + " is in both " + it->second->dir + " and " +
               p.dir + " (a shard or seed given twice)");
      }
      records.push_back(r);
    }
  }
  // No shard or run missing: every shard 1..N of each sharded plan, and
  // every run each part was asked for.
  std::map<std::tuple<int, int, int>, std::set<int>> shards;  // (first, seeds, N) -> indices
  std::set<std::pair<std::string, int>> expected;
  for (const Part& p : parts) {
    if (p.shard_count > 1) shards[{p.plan_first, p.plan_seeds, p.shard_count}].insert(p.shard_index);
    for (const auto& run : PlannedSlice(p)) expected.insert(run);
  }
  std::vector<std::string> missing_shards, missing_runs;
  for (const auto& [plan, indices] : shards) {
    const auto [first, seeds, count] = plan;
    for (int k = 1; k <= count; ++k) {
      if (indices.count(k)) continue;
      missing_shards.push_back(std::to_string(k) + "/" + std::to_string(count));
      for (const auto& run : PlannedSlice(parts[0].results["plan"]["variants"], first, seeds, k, count)) {
        expected.insert(run);
      }
    }
  }
  for (const auto& run : expected) {
    if (!where.count(run)) missing_runs.push_back(RunName(run.first, run.second));
  }
  if (!missing_runs.empty() && !options.allow_partial) {
    Refuse(std::to_string(missing_runs.size()) + " run(s) missing (" + Join(missing_runs) + ")" +
           (missing_shards.empty() ? "" : "; shard(s) " + Join(missing_shards) + " not given") +
           ": give every part, or --allow-partial to merge what is there");
  }

  // The merged study's configuration: the parts' own, over all their seeds.
  json meta = parts[0].results;
  for (const char* key : {"variants", "precision", "claims", "speed_check", "shard", "partial"}) {
    meta.erase(key);
  }
  int first = parts[0].plan_first, last = first + parts[0].plan_seeds - 1;
  bool stopped = false, same_threads = true;
  for (const Part& p : parts) {
    first = std::min(first, p.plan_first);
    last = std::max(last, p.plan_first + p.plan_seeds - 1);
    stopped = stopped || p.results["stopped_early"].get<bool>();
    same_threads = same_threads && p.results["threads"] == parts[0].results["threads"];
    if (!meta.contains("speed_check") && p.results.contains("speed_check")) {
      meta["speed_check"] = p.results["speed_check"];
    }
  }
  meta["name"] = fs::path(options.out).filename().string();
  meta["seeds"] = meta["plan"]["seeds"] = last - first + 1;
  meta["first_seed"] = meta["plan"]["first_seed"] = first;
  meta["stopped_early"] = stopped;
  if (!same_threads) {
    json threads = json::array();
    for (const Part& p : parts) threads.push_back(p.results["threads"]);
    meta["threads_per_part"] = threads;
  }
  if (!missing_runs.empty()) {
    meta["partial"] = {{"missing_runs", missing_runs}, {"missing_shards", missing_shards}};
  }

  // The files: every run's CSV; the captured grids and pre-activations from
  // the part that ran the variant's lowest seed (a single run captures its
  // first seed).
  fs::create_directories(options.out);
  for (const json& planned : meta["plan"]["variants"]) {
    const std::string name = planned["name"];
    const fs::path to = fs::path(options.out) / name;
    fs::remove_all(to);
    const Part* lowest = nullptr;
    int lowest_seed = 0;
    for (const auto& [run, part] : where) {
      if (run.first != name) continue;
      if (!lowest || run.second < lowest_seed) lowest = part, lowest_seed = run.second;
      fs::create_directories(to);
      const std::string csv = "seed" + std::to_string(run.second) + ".csv";
      CopyFile(fs::path(part->dir) / name / csv, to / csv);
    }
    if (!lowest || lowest_seed != first) continue;
    for (const auto& entry : fs::directory_iterator(fs::path(lowest->dir) / name)) {
      const std::string file = entry.path().filename().string();
      if (file == kPreact || (file.rfind("samples_step", 0) == 0 && entry.path().extension() == ".png")) {
        CopyFile(entry.path(), to / file);
      }
    }
  }
  return AssembleResults(meta, std::move(records), options.out);
}

}  // namespace leaky::gan

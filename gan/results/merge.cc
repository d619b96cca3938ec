#include "merge.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "claims.h"
#include "config.h"
#include "precision.h"
#include "results_json.h"
#include "summary.h"

namespace leaky::gan {
namespace {

namespace fs = std::filesystem;

// A run's captured files (the plan's first seed only).
constexpr const char* kPreact = "preact_layer2.f32";

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }
std::string Text(const std::optional<int>& v) { return v ? std::to_string(*v) : "null"; }
std::string Text(const std::optional<std::string>& v) { return v ? Quoted(*v) : "null"; }

// The settings that make runs parts of one study, as results.json writes
// them: merge refuses to combine runs that differ in any of them. (Threads
// may differ: a cluster's nodes do.)
const std::pair<const char*, std::function<std::string(const Study&)>> kIdentity[] = {
    {"lab_version", [](const Study& s) { return std::to_string(s.lab_version); }},
    {"preset", [](const Study& s) { return Quoted(s.preset); }},
    {"dataset", [](const Study& s) { return Quoted(s.dataset); }},
    {"data_checksum", [](const Study& s) { return Quoted(s.data_checksum); }},
    {"classifier_checksum", [](const Study& s) { return Quoted(s.classifier_checksum); }},
    {"steps", [](const Study& s) { return std::to_string(s.steps); }},
    {"batch", [](const Study& s) { return std::to_string(s.batch); }},
    {"log_every", [](const Study& s) { return std::to_string(s.log_every); }},
    {"quality_every", [](const Study& s) { return std::to_string(s.quality_every); }},
    {"samples", [](const Study& s) { return std::to_string(s.samples); }},
    {"models", [](const Study& s) { return Quoted(s.models); }},
    {"base_activation", [](const Study& s) { return Quoted(s.base_activation); }},
    {"width", [](const Study& s) { return Text(s.width); }},
    {"init", [](const Study& s) { return Text(s.init); }},
    {"probe_every", [](const Study& s) { return Text(s.probe_every); }},
    {"loss", [](const Study& s) { return Text(s.loss); }},
    {"spectral_norm", [](const Study& s) { return Text(s.spectral_norm); }},
};

// The parts' provenance as one: the earliest start, the latest end, and
// each other field's distinct values joined by " | " (parts resumed on
// another machine or binary, or the shards' own command lines).
std::optional<Provenance> MergedProvenance(const std::vector<const Study*>& parts) {
  std::optional<Provenance> merged;
  const auto join = [](std::string& into, const std::string& value) {
    if (("| " + into + " |").find("| " + value + " |") == std::string::npos) into += " | " + value;
  };
  for (const Study* s : parts) {
    if (!s->provenance) continue;
    const Provenance& p = *s->provenance;
    if (!merged) {
      merged = p;
      continue;
    }
    join(merged->commit, p.commit);
    merged->tree_clean = merged->tree_clean && p.tree_clean;
    join(merged->library_version, p.library_version);
    join(merged->binary_sha256, p.binary_sha256);
    join(merged->command_line, p.command_line);
    join(merged->machine, p.machine);
    merged->started = std::min(merged->started, p.started);
    merged->finished = std::max(merged->finished, p.finished);
  }
  return merged;
}

// The caller names the step ("leaky gan merge: ...", or the workers'
// merge of their shards).
[[noreturn]] void Refuse(const std::string& why) { throw std::runtime_error(why); }

// The precision table, on the layer-2 pre-activations of the first variant
// whose layer 2 is LeakyReLU, at that variant's slope; else of the first
// variant that has them, at the base activation's slope
// (0.2 if that is not LeakyReLU either: config.h's PrecisionSlope). None if none
// were captured.
std::optional<PrecisionTable> MeasuredPrecision(const Study& study, const fs::path& run_dir) {
  const ActivationSpec base = ParseActivation(study.base_activation);
  double slope = 0;
  std::string source;
  for (const PlannedVariant& v : study.plan.variants) {
    const std::string file = v.name + "/" + kPreact;
    if (!fs::exists(run_dir / file)) continue;
    const ActivationSpec layer2 = ParseActivation(v.layer_activations.at(1));
    if (source.empty() || layer2.kind == ActivationKind::kLeakyRelu) {
      source = file;
      slope = PrecisionSlope(layer2, base);
      if (layer2.kind == ActivationKind::kLeakyRelu) break;
    }
  }
  if (source.empty()) return std::nullopt;
  std::ifstream in(run_dir / source, std::ios::binary | std::ios::ate);
  std::vector<float> x(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  return PrecisionTable{slope, source, MeasurePrecision(x, slope)};
}

std::string RunName(const std::string& variant, int seed) {
  return variant + " seed " + std::to_string(seed);
}

// One input folder of a merge.
struct Part {
  std::string dir;
  Results results;
  int shard_index = 1, shard_count = 1;
};

Part ReadPart(const std::string& dir) {
  Part p;
  p.dir = dir;
  try {
    p.results = ReadResults(dir);
  } catch (const std::runtime_error& e) {
    Refuse(e.what());
  }
  const int version = p.results.study.lab_version;
  if (version != kLabVersion) {
    Refuse(dir + " was written by lab version " + std::to_string(version) + ", this is " +
           std::to_string(kLabVersion) + ": run it again");
  }
  if (p.results.study.shard) std::tie(p.shard_index, p.shard_count) = *p.results.study.shard;
  return p;
}

// The runs of a plan (variants in order, seeds first .. first + seeds - 1)
// in shard K of N: PlannedRuns' order and InShard's rule, on names.
std::vector<std::pair<std::string, int>> PlannedSlice(const std::vector<PlannedVariant>& variants,
                                                      int first, int seeds, int shard_index,
                                                      int shard_count) {
  std::vector<std::pair<std::string, int>> mine;
  size_t index = 0;
  for (const PlannedVariant& v : variants) {
    for (int s = first; s < first + seeds; ++s, ++index) {
      if (InShard(index, shard_index, shard_count)) mine.emplace_back(v.name, s);
    }
  }
  return mine;
}

// The runs a part was asked for.
std::vector<std::pair<std::string, int>> PlannedSlice(const Part& p) {
  const Study::Plan& plan = p.results.study.plan;
  return PlannedSlice(plan.variants, plan.first_seed, plan.seeds, p.shard_index, p.shard_count);
}

void CheckSameStudy(const Part& a, const Part& b) {
  for (const auto& [key, text] : kIdentity) {
    const std::string ta = text(a.results.study), tb = text(b.results.study);
    if (ta != tb) {
      Refuse(a.dir + " and " + b.dir + " differ in " + key + " (" + ta + " vs " + tb +
             "): not parts of one study");
    }
  }
  if (a.results.study.plan.variants != b.results.study.plan.variants) {
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
// Lab version 4: the f16 counts every run took at each probe step, summed
// over the runs of the variant MeasuredPrecision would choose (the first
// whose layer 2 is LeakyReLU, else the first) at the slope the runs
// measured at (config.h's PrecisionSlope, as the trainer). None if no run has counts.
std::optional<PrecisionTable> SummedPrecision(const std::vector<VariantResults>& variants,
                                              const Study& study) {
  const VariantResults* chosen = nullptr;
  for (const VariantResults& v : variants) {
    if (v.runs.empty() || !v.runs.front().precision_history) continue;
    const bool lrelu =
        ParseActivation(v.plan.layer_activations.at(1)).kind == ActivationKind::kLeakyRelu;
    if (chosen == nullptr || lrelu) chosen = &v;
    if (lrelu) break;
  }
  if (chosen == nullptr) return std::nullopt;
  std::vector<PrecisionRow> sum;
  std::vector<double> error_sum;
  int batches = 0;
  for (const Run& r : chosen->runs) {
    if (!r.precision_history) continue;
    for (const PrecisionPoint& point : *r.precision_history) {
      ++batches;
      for (size_t i = 0; i < point.rows.size(); ++i) {
        const PrecisionRow& row = point.rows[i];
        if (sum.size() <= i) sum.push_back({row.format, 0, 0, 0, 0}), error_sum.push_back(0);
        sum[i].negatives += row.negatives;
        sum[i].flushed_to_zero += row.flushed_to_zero;
        sum[i].max_relative_error = std::max(sum[i].max_relative_error, row.max_relative_error);
        error_sum[i] += row.mean_relative_error * static_cast<double>(row.negatives);
      }
    }
  }
  if (batches == 0) return std::nullopt;
  for (size_t i = 0; i < sum.size(); ++i) {
    sum[i].mean_relative_error = sum[i].negatives > 0 ? error_sum[i] / sum[i].negatives : 0.0;
  }
  const double slope = PrecisionSlope(ParseActivation(chosen->plan.layer_activations.at(1)),
                                      ParseActivation(study.base_activation));
  return PrecisionTable{slope,
                        chosen->plan.name + ": layer-2 pre-activations of " +
                            std::to_string(batches) + " training batches (every probe step of " +
                            std::to_string(chosen->runs.size()) + " seeds)",
                        std::move(sum)};
}

}  // namespace

Results AssembleResults(Study study, std::vector<Run> runs, const fs::path& run_dir) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const Run& a, const Run& b) { return a.seed < b.seed; });
  Results results;
  for (const PlannedVariant& planned : study.plan.variants) {
    VariantResults v{planned, {}, {}, {}};
    std::vector<Final> finals;
    for (const Run& r : runs) {
      if (r.variant != planned.name) continue;
      v.runs.push_back(r);
      finals.push_back(r.final);
    }
    if (finals.empty()) continue;
    v.final = MeanOverSeeds(finals);
    v.summary = SummaryOverSeeds(finals);
    results.variants.push_back(std::move(v));
  }
  results.precision = SummedPrecision(results.variants, study);
  if (!results.precision) results.precision = MeasuredPrecision(study, run_dir);
  results.study = std::move(study);
  results.claims = MeasureClaims(results);
  return results;
}

Results MergeResults(const MergeOptions& options) {
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
  std::vector<Run> runs;
  for (const Part& p : parts) {
    for (const VariantResults& v : p.results.variants) {
      for (const Run& r : v.runs) {
        const auto key = std::make_pair(r.variant, r.seed);
        const auto [it, fresh] = where.emplace(key, &p);
        if (!fresh) {
          Refuse(RunName(key.first, key.second) + " is in both " + it->second->dir + " and " +
                 p.dir + " (a shard or seed given twice)");
        }
        runs.push_back(r);
      }
    }
  }
  // No shard or run missing: every shard 1..N of each sharded plan, and
  // every run each part was asked for.
  std::map<std::tuple<int, int, int>, std::set<int>> shards;  // (first, seeds, N) -> indices
  std::set<std::pair<std::string, int>> expected;
  for (const Part& p : parts) {
    const Study::Plan& plan = p.results.study.plan;
    if (p.shard_count > 1) shards[{plan.first_seed, plan.seeds, p.shard_count}].insert(p.shard_index);
    for (const auto& run : PlannedSlice(p)) expected.insert(run);
  }
  std::vector<std::string> missing_shards, missing_runs;
  for (const auto& [plan, indices] : shards) {
    const auto [first, seeds, count] = plan;
    for (int k = 1; k <= count; ++k) {
      if (indices.count(k)) continue;
      missing_shards.push_back(std::to_string(k) + "/" + std::to_string(count));
      for (const auto& run :
           PlannedSlice(parts[0].results.study.plan.variants, first, seeds, k, count)) {
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
  Study study = parts[0].results.study;
  study.speed_check.reset();
  study.shard.reset();
  study.partial.reset();
  int first = study.plan.first_seed, last = first + study.plan.seeds - 1;
  bool stopped = false, same_threads = true;
  for (const Part& p : parts) {
    const Study& s = p.results.study;
    first = std::min(first, s.plan.first_seed);
    last = std::max(last, s.plan.first_seed + s.plan.seeds - 1);
    stopped = stopped || s.stopped_early;
    same_threads = same_threads && s.threads == parts[0].results.study.threads;
    if (!study.speed_check && s.speed_check) study.speed_check = s.speed_check;
  }
  study.name = fs::path(options.out).filename().string();
  study.seeds = study.plan.seeds = last - first + 1;
  study.first_seed = study.plan.first_seed = first;
  study.stopped_early = stopped;
  if (!same_threads) {
    study.threads_per_part.emplace();
    for (const Part& p : parts) study.threads_per_part->push_back(p.results.study.threads);
  }
  if (!missing_runs.empty()) study.partial = Partial{missing_runs, missing_shards};
  std::vector<const Study*> studies;
  for (const Part& p : parts) studies.push_back(&p.results.study);
  study.provenance = MergedProvenance(studies);

  // The files: every run's CSV; the captured grids and pre-activations from
  // the part that ran the variant's lowest seed (a single run captures its
  // first seed).
  fs::create_directories(options.out);
  for (const PlannedVariant& planned : study.plan.variants) {
    const std::string& name = planned.name;
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
  return AssembleResults(std::move(study), std::move(runs), options.out);
}

}  // namespace leaky::gan

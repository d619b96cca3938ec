#include "lab.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "data.h"
#include "merge.h"
#include "results_json.h"
#include "metrics.h"
#include "outputs.h"
#include "summary.h"
#include "train.h"

namespace leaky::gan {
namespace {


// Seeds of the generators that are the same for every run, so every variant
// and seed is measured against the same real digits and drawn on the same
// grid noise.
constexpr uint64_t kRealDigitsPickSeed = 7;
constexpr uint64_t kFixedGridNoiseSeed = 2024;

std::string Duration(double seconds) {
  char buffer[32];
  const int s = static_cast<int>(std::lround(std::max(seconds, 0.0)));
  std::snprintf(buffer, sizeof(buffer), "%d:%02d", s / 60, s % 60);
  return buffer;
}

// Seeds of MNIST's fixed classifier split and of the probes' images.
constexpr uint64_t kClassifierSplitSeed = 11;
constexpr uint64_t kProbeSeed = 13;

// The digit classifier of the quality metrics, trained once on the first
// kClassifierTrainDigits of `order` and cached.
Classifier LoadClassifier(const LabConfig& config, const Digits& digits, const torch::Tensor& order) {
  Classifier classifier;
  const std::filesystem::path cache =
      std::filesystem::path(config.data_dir) / "classifier-train8000.pt";
  if (std::filesystem::exists(cache)) {
    try {
      torch::load(classifier, cache.string());
    } catch (const std::exception&) {  // LibTorch's message is a page of stack trace
      throw std::runtime_error(cache.string() + " is not a digit classifier this lab can read "
                               "(damaged, or from another version): delete it and the lab trains "
                               "it again");
    }
  } else {
    std::fprintf(stderr, "gan: training the digit classifier once on %lld digits (cached in %s)\n",
                 static_cast<long long>(kClassifierTrainDigits), cache.string().c_str());
    torch::manual_seed(0);
    classifier = Classifier();
    torch::optim::Adam optimizer(classifier->parameters(), torch::optim::AdamOptions(1e-3));
    torch::Generator generator = at::detail::createCPUGenerator(0);
    const torch::Tensor train = order.narrow(0, 0, kClassifierTrainDigits);
    for (int epoch = 0; epoch < 3; ++epoch) {
      const torch::Tensor shuffled =
          train.index_select(0, torch::randperm(kClassifierTrainDigits, generator, torch::kInt64));
      for (int64_t start = 0; start + 128 <= kClassifierTrainDigits; start += 128) {
        const torch::Tensor index = shuffled.narrow(0, start, 128);
        optimizer.zero_grad();
        const torch::Tensor loss = torch::nn::functional::cross_entropy(
            classifier->forward(digits.images.index_select(0, index)),
            digits.labels.index_select(0, index));
        loss.backward();
        optimizer.step();
      }
    }
    // Written aside and renamed: a worker reading the cache never sees half a file.
    const std::string partial = TemporaryFor(cache).string();
    torch::save(classifier, partial);
    std::filesystem::rename(partial, cache);
  }
  classifier->eval();
  return classifier;
}

// Progress on stderr: on a terminal one line updated in place (run,
// variant, seed, a bar, rate, ETA); elsewhere (CI, a log file, Slurm's
// output, a --jobs worker's pipe) a plain line at most every tenth of a run.
struct Progress {
  int run_index, run_count;
  Clock::time_point started;
  double done_steps = 0, total_steps = 0;
  int last_step = 0, last_tenth = 0;  // of the current run

  void NextRun() {
    ++run_index;
    last_step = last_tenth = 0;
  }

  void Logged(const LabConfig& c, const Variant& v, int seed, int step) {
    done_steps += step - last_step;
    last_step = step;
    const double rate = done_steps / std::max(Seconds(started), 1e-9);
    const std::string eta = Duration((total_steps - done_steps) / rate);
    if (c.terminal) {
      char bar[21];
      const int filled = 20 * step / c.steps;
      for (int i = 0; i < 20; ++i) bar[i] = i < filled ? '#' : '.';
      bar[20] = '\0';
      std::fprintf(stderr, "\r[%d/%d] %-16s seed %d [%s] step %5d/%d  %6.1f steps/s  ETA %s  ",
                   run_index, run_count, v.name.c_str(), seed, bar, step, c.steps, rate,
                   eta.c_str());
      return;
    }
    const int tenth = 10 * step / c.steps;
    if (tenth <= last_tenth) return;
    last_tenth = tenth;
    std::fprintf(stderr, "[%d/%d] %s seed %d: step %d/%d (%d%%), %.1f steps/s, ETA %s\n",
                 run_index, run_count, v.name.c_str(), seed, step, c.steps, 100 * step / c.steps,
                 rate, eta.c_str());
  }
};

// FNV-1a over a tensor's bytes: an identity check for the data and the
// classifier a run measured with (merge refuses runs that differ), not a
// cryptographic hash.
std::string Checksum(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  const auto* bytes = static_cast<const unsigned char*>(c.data_ptr());
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < c.nbytes(); ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  char buffer[24];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(h));
  return buffer;
}

LabData LoadLabData(const LabConfig& config) {
  LabData data;
  if (config.data == Dataset::kMnist) {
    data.digits = LoadMnist(config.data_dir);
    const int64_t n = data.digits.images.size(0);
    if (n < kClassifierTrainDigits + 2 * config.samples) {
      throw std::invalid_argument("--samples " + std::to_string(config.samples) +
                                  ": MNIST holds out " + std::to_string(n - kClassifierTrainDigits) +
                                  " digits, enough for two real sets of at most " +
                                  std::to_string((n - kClassifierTrainDigits) / 2));
    }
    torch::Generator split = at::detail::createCPUGenerator(kClassifierSplitSeed);
    const torch::Tensor order = torch::randperm(n, split, torch::kInt64);
    data.classifier = LoadClassifier(config, data.digits, order);
    torch::NoGradGuard no_grad;
    const torch::Tensor held_out = order.narrow(0, kClassifierTrainDigits, n - kClassifierTrainDigits);
    const torch::Tensor predicted =
        data.classifier->forward(data.digits.images.index_select(0, held_out)).argmax(1);
    data.classifier_accuracy =
        predicted.eq(data.digits.labels.index_select(0, held_out)).to(torch::kFloat64).mean().item<double>();
    // The real reference and the floor: two disjoint held-out sets of the
    // sample set's size (kRealDigitsPickSeed picks them).
    torch::Generator pick = at::detail::createCPUGenerator(kRealDigitsPickSeed);
    const torch::Tensor shuffled =
        held_out.index_select(0, torch::randperm(held_out.size(0), pick, torch::kInt64));
    const auto features = [&](int64_t from) {
      return data.classifier->Features(
          data.digits.images.index_select(0, shuffled.narrow(0, from, config.samples)));
    };
    data.real_features = features(0);
    data.real_fcd_floor = FrechetDistance(features(config.samples), data.real_features);
    torch::Generator probe = at::detail::createCPUGenerator(kProbeSeed);
    data.probe_real = data.digits.images.index_select(
        0, torch::randperm(n, probe, torch::kInt64).narrow(0, 0, kProbeImages));
    data.probe_z = torch::randn({kProbeImages, LatentSize(config.data, config.shape)}, probe,
                                torch::kFloat32);
  }
  // Both grids come from one generator, MNIST's first, whatever the dataset.
  torch::Generator fixed = at::detail::createCPUGenerator(kFixedGridNoiseSeed);
  const torch::Tensor mnist_z =
      torch::randn({64, LatentSize(config.data, config.shape)}, fixed, torch::kFloat32);
  const torch::Tensor ring_z = torch::randn({2000, 8}, fixed, torch::kFloat32);
  data.fixed_z = config.data == Dataset::kMnist ? mnist_z : ring_z;
  return data;
}

// The quality of generated samples (MNIST: FCD, class coverage and KL;
// ring8: modes and the high-quality share).
Quality SampleQuality(const LabConfig& config, const LabData& data, const torch::Tensor& samples) {
  torch::NoGradGuard no_grad;
  Quality quality;
  if (config.data == Dataset::kMnist) {
    Classifier classifier = data.classifier;  // a module's forward is not const
    const torch::Tensor features = classifier->Features(samples);
    const auto [covered, kl] = ClassCoverage(classifier->forward(samples).argmax(1));
    quality.fcd = FrechetDistance(features, data.real_features);
    quality.class_coverage = covered;
    quality.class_kl = kl;
  } else {
    const auto [modes, share] = Ring8Quality(samples, std::max(1, config.samples / 100));
    quality.modes_covered = modes;
    quality.high_quality_share = share;
  }
  return quality;
}

// Debian's PyTorch calls the system BLAS (OpenBLAS through the
// alternatives), whose own threads spin and yield between calls and fight
// PyTorch's intra-op threads for the cores: measured here, a ring8 run spent
// 95% of its wall time waiting (5,000 sched_yield calls in 20 steps). The
// lab's matrices are small: BLAS runs single-threaded, PyTorch parallelises.
void SingleThreadedBlas() {
  using SetThreads = void (*)(int);
  if (auto set = reinterpret_cast<SetThreads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) {
    set(1);
  } else {
    // The reference BLAS (libblas3) trained the demo 2.8x slower in a bare
    // chroot than OpenBLAS did.
    std::fprintf(stderr, "gan: the system BLAS is not OpenBLAS: training runs about 3x slower "
                 "(scripts/bootstrap.sh demo installs libopenblas0-pthread)\n");
  }
}

// The fields of a configuration that decide a study's bits (not where it
// runs, on how many threads, or how progress is shown).
nlohmann::json StudyKey(const LabConfig& c) {
  nlohmann::json variants = nlohmann::json::array();
  for (const Variant& v : c.variants) {
    variants.push_back({{"name", v.name}, {"activation", v.act.Name()}, {"layers", v.layers},
                        {"batch_norm", v.batch_norm}, {"torch_impl", v.act.torch_impl}});
  }
  return {{"lab_version", kLabVersion},
          {"preset", c.preset},
          {"dataset", c.data == Dataset::kMnist ? "mnist" : "ring8"},
          {"variants", variants},
          {"base_activation", c.base_act.Name()},
          {"steps", c.steps},
          {"seeds", c.seeds},
          {"first_seed", c.first_seed},
          {"log_every", c.log_every},
          {"batch", c.batch},
          {"samples", c.samples},
          {"quality_every", c.quality_every},
          {"width", c.shape.width},
          {"init", InitName(c.shape.init)},
          {"probe_every", c.probe_every},
          {"checkpoint_every", c.checkpoint_every},
          {"shard", {c.shard_index, c.shard_count}}};
}

// The first key whose value differs, in words ("steps 800, not 1000").
std::string FirstDifference(const nlohmann::json& held, const nlohmann::json& wanted) {
  for (const auto& [key, value] : wanted.items()) {
    if (!held.contains(key)) return key + " (not recorded)";
    if (held[key] != value) return key + " " + held[key].dump() + ", not " + value.dump();
  }
  return "its record";
}

// Writes `text` to `path` through a temporary file: a kill leaves the old
// file or the new one, never half of one.
void WriteAtomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path partial = TemporaryFor(path);
  {
    std::ofstream out(partial);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("cannot write " + path.string());
  }
  std::filesystem::rename(partial, path);
}

std::string RunStem(int seed) { return "seed" + std::to_string(seed); }

}  // namespace

void PrepareRunFolder(const LabConfig& config, const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  const nlohmann::json key = StudyKey(config);
  const fs::path record = dir / "lab.json";
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_empty(dir, error)) {
    std::string problem;
    if (!fs::exists(record)) {
      problem = "holds files but no study of this lab (no lab.json)";
    } else {
      nlohmann::json held;
      std::ifstream in(record);
      held = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      if (held.is_discarded() || !held.is_object()) {
        problem = "has a damaged lab.json";
      } else if (held != key) {
        problem = "holds another study (" + FirstDifference(held, key) + ")";
      }
    }
    if (problem.empty()) return;  // the same study: resume it
    if (!config.force) {
      throw std::invalid_argument(dir.string() + " " + problem +
                                  ": give another --name, or --force to replace it");
    }
    fs::remove_all(dir);
  }
  fs::create_directories(dir);
  WriteAtomically(record, key.dump(1) + "\n");
}

Results RunLab(const LabConfig& config, const std::atomic<bool>& stop) {
  namespace fs = std::filesystem;
  SingleThreadedBlas();
  if (config.threads > 0) torch::set_num_threads(config.threads);
  const fs::path run_dir = fs::path(config.out_dir) / config.name;
  // The data first: a lab that cannot read it leaves no folder behind.
  const LabData data = LoadLabData(config);
  PrepareRunFolder(config, run_dir);
  const int quality_every = config.quality_every > 0 ? config.quality_every
                                                     : std::max(1, config.steps / 20);

  Study study;
  for (const Variant& v : config.variants) {
    PlannedVariant planned{v.name, v.act.Name(), v.batch_norm ? "batch" : "none", {}};
    for (const ActivationSpec& a : LayerActs(config, v)) planned.layer_activations.push_back(a.Name());
    study.plan.variants.push_back(std::move(planned));
  }
  const std::vector<RunKey> runs = ShardRuns(config);
  Progress progress{0, static_cast<int>(runs.size()), Clock::now()};
  progress.total_steps = static_cast<double>(config.steps) * progress.run_count;
  std::vector<Run> runs_done;
  std::vector<std::string> unfinished;
  for (const RunKey& key : runs) {
    const Variant& v = config.variants[key.variant];
    const std::string run_name = v.name + " seed " + std::to_string(key.seed);
    if (stop) {
      unfinished.push_back(run_name + " (not started)");
      continue;
    }
    progress.NextRun();
    const fs::path variant_dir = run_dir / v.name;
    const fs::path finished = variant_dir / (RunStem(key.seed) + ".run.json");
    const fs::path checkpoint = variant_dir / (RunStem(key.seed) + ".checkpoint.pt");
    if (fs::exists(finished)) {  // finished by an earlier, interrupted invocation
      std::ifstream in(finished);
      const nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      try {
        runs_done.push_back(RunFromJson(j));
        progress.done_steps += config.steps;
        continue;
      } catch (const nlohmann::json::exception&) {
        std::fprintf(stderr, "gan: %s is damaged: training %s again\n", finished.string().c_str(),
                     run_name.c_str());
      }
    }
    fs::create_directories(variant_dir);
    // The plan's first seed keeps its sample grids and pre-activations,
    // whichever shard runs it.
    const bool capture = key.seed == config.first_seed;
    const std::optional<TrainedRun> run = TrainRun(
        config, data, v, key.seed, capture, quality_every,
        [&](int step) { progress.Logged(config, v, key.seed, step); },
        [&](const torch::Tensor& samples) { return SampleQuality(config, data, samples); },
        checkpoint, stop);
    if (!run) {
      unfinished.push_back(run_name + " (checkpointed)");
      continue;
    }
    WriteRunFiles(config, variant_dir, key.seed, *run);
    Run done{v.name, key.seed,
             FinalOf(run->rows, run->probes, run->step_ms, run->quality.back().quality),
             run->rows, run->quality, run->probes};
    WriteAtomically(finished, ToJson(done).dump() + "\n");
    fs::remove(checkpoint);
    runs_done.push_back(std::move(done));
  }
  const bool stopped = !unfinished.empty();
  if (config.terminal) std::fprintf(stderr, "\n");
  if (stopped) {
    std::string list;
    for (const std::string& u : unfinished) list += (list.empty() ? "" : ", ") + u;
    std::fprintf(stderr, "gan: stopped early: %zu of %zu run(s) finished; not finished: %s; the "
                 "same command resumes them\n", runs_done.size(), runs.size(), list.c_str());
  }
  study.name = config.name;
  study.preset = config.preset;
  study.lab_version = kLabVersion;
  study.dataset = config.data == Dataset::kMnist ? "mnist" : "ring8";
  study.data_checksum = config.data == Dataset::kMnist
                            ? Checksum(data.digits.images) + Checksum(data.digits.labels)
                            : "generated";
  study.classifier_checksum = config.data == Dataset::kMnist ? Checksum(data.real_features) : "none";
  study.steps = config.steps;
  study.seeds = study.plan.seeds = config.seeds;
  study.first_seed = study.plan.first_seed = config.first_seed;
  study.batch = config.data == Dataset::kMnist ? config.batch : config.batch * 4;
  study.log_every = config.log_every;
  study.quality_every = quality_every;
  study.samples = config.samples;
  study.threads = torch::get_num_threads();
  study.models = DescribeModels(config.data, config.shape);
  study.width = config.shape.width;
  study.init = InitName(config.shape.init);
  study.probe_every = config.probe_every;
  study.base_activation = config.base_act.Name();
  study.stopped_early = stopped;
  if (config.data == Dataset::kMnist) {
    study.classifier = ClassifierInfo{
        kClassifierTrainDigits, data.digits.images.size(0) - kClassifierTrainDigits,
        data.classifier_accuracy, data.real_fcd_floor,
        "real_fcd_floor: FCD between two disjoint held-out sets of " +
            std::to_string(config.samples) + " real digits (the reference and another)"};
  }
  if (config.shard_count > 1) study.shard = {config.shard_index, config.shard_count};
  return AssembleResults(std::move(study), std::move(runs_done), run_dir);
}

}  // namespace leaky::gan

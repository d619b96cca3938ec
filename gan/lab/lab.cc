#include "lab.h"

#include <dlfcn.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "data.h"
#include "provenance.h"
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

// Seeds of the images' fixed split and of the probes' images.
constexpr uint64_t kClassifierSplitSeed = 11;
constexpr uint64_t kProbeSeed = 13;
constexpr uint64_t kFloorSplitSeed = 17;

// The lab's image set for `data`.
const ImageSet& ImagesOf(Dataset data) {
  return data == Dataset::kFashion ? FashionImages() : MnistImages();
}

// The images' three parts, in a fixed permutation: the classifier's
// training images, then the reference images (the real side of FCD and
// KID, their floors and the probes: seen by neither the classifier nor the
// GAN), then the GAN's. The classifier's accuracy is measured on every
// image it did not train on.
struct ImageSplit {
  int64_t classifier, reference;
  int epochs;  // of the classifier's training
};
ImageSplit SplitOf(Dataset data) {
  // MNIST's 10,000 digits: 4,000 / 2,000 / 4,000; 15 epochs reached 98.1%
  // on the other 6,000 in a trial. Fashion-MNIST's 70,000 images (class 0
  // has 7,002 entries, 2 of them empty): 20,000 / 2,000 / 48,000.
  return data == Dataset::kFashion ? ImageSplit{20000, 2000, 6} : ImageSplit{4000, 2000, 15};
}

// The classifier of the quality metrics, trained once per dataset on the
// split's first part and cached beside the images: Adam, a learning rate
// rising linearly to 3e-3 over the first 30% of the steps and falling
// linearly to 0 after, each batch shifted by up to 2 pixels (one random
// roll per batch), dropout 0.3.
Classifier LoadClassifier(const LabConfig& config, const Digits& images, const torch::Tensor& train,
                          int epochs) {
  Classifier classifier;
  const int64_t n = train.size(0);
  const std::filesystem::path cache = std::filesystem::path(config.data_dir) /
                                      ("classifier-v4-train" + std::to_string(n) + ".pt");
  if (std::filesystem::exists(cache)) {
    try {
      torch::load(classifier, cache.string());
    } catch (const std::exception&) {  // LibTorch's message is a page of stack trace
      throw std::runtime_error(cache.string() + " is not a classifier this lab can read "
                               "(damaged, or from another version): delete it and the lab trains "
                               "it again");
    }
  } else {
    std::fprintf(stderr, "gan: training the quality classifier once on %lld images, %d epochs "
                 "(cached in %s)\n", static_cast<long long>(n), epochs, cache.string().c_str());
    torch::manual_seed(0);
    classifier = Classifier();
    torch::optim::Adam optimizer(classifier->parameters(), torch::optim::AdamOptions(1e-3));
    torch::Generator generator = at::detail::createCPUGenerator(0);
    constexpr int64_t kBatch = 64;
    const int64_t total = epochs * (n / kBatch);
    int64_t step = 0;
    for (int epoch = 0; epoch < epochs; ++epoch) {
      const torch::Tensor shuffled = train.index_select(0, torch::randperm(n, generator, torch::kInt64));
      for (int64_t start = 0; start + kBatch <= n; start += kBatch, ++step) {
        const double rise = 0.3 * static_cast<double>(total);
        const double lr = step < rise ? 3e-3 * (step + 1) / rise
                                      : 3e-3 * (total - step) / (total - rise);
        static_cast<torch::optim::AdamOptions&>(optimizer.param_groups()[0].options()).lr(lr);
        const torch::Tensor index = shuffled.narrow(0, start, kBatch);
        const torch::Tensor shift = torch::randint(-2, 3, {2}, generator, torch::kInt64);
        const torch::Tensor x = torch::roll(images.images.index_select(0, index),
                                            {shift[0].item<int64_t>(), shift[1].item<int64_t>()},
                                            {2, 3});
        optimizer.zero_grad();
        const torch::Tensor loss = torch::nn::functional::cross_entropy(
            classifier->forward(x), images.labels.index_select(0, index));
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

// The images, read and counted (none for ring8): what can fail on the
// user's data, before anything is written or trained.
Digits LoadLabImages(const LabConfig& config) {
  if (!IsImages(config.data)) return {};
  const ImageSet& set = ImagesOf(config.data);
  const ImageSplit split = SplitOf(config.data);
  Digits all = LoadImages(set, config.data_dir);
  const int64_t n = all.images.size(0);
  if (n < split.classifier + split.reference + config.batch) {
    throw std::runtime_error(std::string(set.title) + " in " + config.data_dir + " holds " +
                             std::to_string(n) + " images, too few for the lab's split");
  }
  return all;
}

// The rest of the data from the images LoadLabImages read: the classifier
// (trained the first time: minutes), the reference features and floors,
// the probes, the fixed noise.
LabData LoadLabData(const LabConfig& config, const Digits& all) {
  LabData data;
  if (IsImages(config.data)) {
    const ImageSplit split = SplitOf(config.data);
    const int64_t n = all.images.size(0);
    torch::Generator split_gen = at::detail::createCPUGenerator(kClassifierSplitSeed);
    const torch::Tensor order = torch::randperm(n, split_gen, torch::kInt64);
    const torch::Tensor train = order.narrow(0, 0, split.classifier);
    const torch::Tensor reference = order.narrow(0, split.classifier, split.reference);
    const torch::Tensor gan = order.narrow(0, split.classifier + split.reference,
                                           n - split.classifier - split.reference);
    {
      const int threads = torch::get_num_threads();
      torch::set_num_threads(std::max(threads, static_cast<int>(std::thread::hardware_concurrency())));
      data.classifier = LoadClassifier(config, all, train, split.epochs);
      torch::set_num_threads(threads);
    }
    torch::NoGradGuard no_grad;
    const torch::Tensor unseen = order.narrow(0, split.classifier, n - split.classifier);
    torch::Tensor correct = torch::zeros({}, torch::kInt64);
    for (int64_t from = 0; from < unseen.size(0); from += 1000) {
      const torch::Tensor index = unseen.narrow(0, from, std::min<int64_t>(1000, unseen.size(0) - from));
      correct += data.classifier->forward(all.images.index_select(0, index))
                     .argmax(1)
                     .eq(all.labels.index_select(0, index))
                     .sum();
    }
    data.classifier_accuracy =
        static_cast<double>(correct.item<int64_t>()) / static_cast<double>(unseen.size(0));
    data.classifier_train = split.classifier;
    data.classifier_unseen = unseen.size(0);
    data.reference_images = split.reference;
    // The real reference and the floor: two disjoint halves of the
    // reference images of the sample set's size (kRealDigitsPickSeed picks
    // them); the floors' spread over kFloorSplits other random halvings.
    const torch::Tensor reference_features =
        data.classifier->Features(all.images.index_select(0, reference));
    torch::Generator pick = at::detail::createCPUGenerator(kRealDigitsPickSeed);
    const torch::Tensor shuffled = torch::randperm(split.reference, pick, torch::kInt64);
    const auto half = [&](const torch::Tensor& perm, int64_t from) {
      return reference_features.index_select(0, perm.narrow(0, from, config.samples));
    };
    data.real_features = half(shuffled, 0);
    data.real_fcd_floor = FrechetDistance(half(shuffled, config.samples), data.real_features);
    torch::Generator floors = at::detail::createCPUGenerator(kFloorSplitSeed);
    for (int i = 0; i < kFloorSplits; ++i) {
      const torch::Tensor perm = torch::randperm(split.reference, floors, torch::kInt64);
      data.fcd_floors.push_back(FrechetDistance(half(perm, 0), half(perm, config.samples)));
      data.kid_floors.push_back(KernelDistance(half(perm, 0), half(perm, config.samples)));
    }
    torch::Generator probe = at::detail::createCPUGenerator(kProbeSeed);
    data.probe_real = all.images.index_select(
        0, reference.index_select(
               0, torch::randperm(split.reference, probe, torch::kInt64).narrow(0, 0, kProbeImages)));
    data.probe_z = torch::randn({kProbeImages, LatentSize(config.data, config.shape)}, probe,
                                torch::kFloat32);
    data.data_checksum = Checksum(all.images) + Checksum(all.labels);
    // The GAN trains on its part only.
    data.digits = Digits{all.images.index_select(0, gan), all.labels.index_select(0, gan)};
  }
  // Both grids come from one generator, MNIST's first, whatever the dataset.
  torch::Generator fixed = at::detail::createCPUGenerator(kFixedGridNoiseSeed);
  const torch::Tensor image_z =
      torch::randn({64, LatentSize(config.data, config.shape)}, fixed, torch::kFloat32);
  const torch::Tensor ring_z = torch::randn({2000, 8}, fixed, torch::kFloat32);
  data.fixed_z = IsImages(config.data) ? image_z : ring_z;
  return data;
}

// The quality of generated samples (images: FCD, KID, class coverage and
// KL; ring8: modes and the high-quality share).
Quality SampleQuality(const LabConfig& config, const LabData& data, const torch::Tensor& samples) {
  torch::NoGradGuard no_grad;
  Quality quality;
  if (IsImages(config.data)) {
    Classifier classifier = data.classifier;  // a module's forward is not const
    const torch::Tensor features = classifier->Features(samples);
    const auto [covered, kl] = ClassCoverage(classifier->Logits(features).argmax(1));
    quality.fcd = FrechetDistance(features, data.real_features);
    quality.kid = KernelDistance(features, data.real_features);
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

// LibTorch frees and allocates the same large activations every step; with
// glibc's defaults each one above its dynamic mmap threshold is a fresh
// mapping, and freed heap tops go back to the kernel, so every step pays
// page faults again (`perf` put 37% of a one-step run's time in the kernel,
// mostly page faults, on this 2-core VM). Keeping freed memory made a
// 100-step MNIST run 2x faster (7.7-8.6 s -> 3.8-4.0 s, docs/gan-lab.md);
// the bits are the same.
void KeepFreedMemory() {
#if defined(__GLIBC__)
  // 32 MiB is glibc's largest threshold: larger blocks are still mapped.
  if (mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1 && mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1) return;
#endif
  std::fprintf(stderr,
               "gan: freed memory goes back to the system after each step: "
               "training runs about 2x slower\n");
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
          {"dataset", DatasetName(c.data)},
          {"loss", LossName(c.loss)},
          {"spectral_norm", c.shape.spectral_norm},
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
  error.clear();
  fs::create_directories(dir, error);
  if (error) {
    throw std::invalid_argument("--out " + config.out_dir + ": cannot create the run folder " +
                                dir.string() + " (" + error.message() + ")");
  }
  WriteAtomically(record, key.dump(1) + "\n");
}

Results RunLab(const LabConfig& config, const std::atomic<bool>& stop) {
  namespace fs = std::filesystem;
  SingleThreadedBlas();
  KeepFreedMemory();
  Provenance provenance = CurrentProvenance();
  if (config.threads > 0) torch::set_num_threads(config.threads);
  const fs::path run_dir = fs::path(config.out_dir) / config.name;
  // The images first: a lab that cannot read them leaves no folder behind.
  // Then the folder, before the classifier trains (minutes the first
  // time): an --out that cannot be made is said at once.
  // A classifier cache that cannot be read then takes the new folder away
  // again: a refused run leaves none.
  const Digits images = LoadLabImages(config);
  std::error_code error;
  const bool existed = fs::exists(run_dir, error);
  PrepareRunFolder(config, run_dir);
  const LabData data = [&] {
    try {
      return LoadLabData(config, images);
    } catch (...) {
      if (!existed) fs::remove_all(run_dir, error);
      throw;
    }
  }();
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
             run->rows, run->quality, run->probes, std::nullopt, std::nullopt};
    if (IsImages(config.data)) done.precision_history = run->precision;
    if (!run->prelu_start.empty()) done.prelu_slopes = PreluSlopes{run->prelu_start, run->prelu_end};
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
  study.dataset = DatasetName(config.data);
  study.data_checksum = IsImages(config.data) ? data.data_checksum : "generated";
  study.classifier_checksum = IsImages(config.data) ? Checksum(data.real_features) : "none";
  study.steps = config.steps;
  study.seeds = study.plan.seeds = config.seeds;
  study.first_seed = study.plan.first_seed = config.first_seed;
  study.batch = IsImages(config.data) ? config.batch : config.batch * 4;
  study.log_every = config.log_every;
  study.quality_every = quality_every;
  study.samples = config.samples;
  study.threads = torch::get_num_threads();
  study.models = DescribeModels(config.data, config.shape, config.loss);
  study.loss = LossName(config.loss);
  study.spectral_norm = config.shape.spectral_norm;
  study.width = config.shape.width;
  study.init = InitName(config.shape.init);
  study.probe_every = config.probe_every;
  study.base_activation = config.base_act.Name();
  study.stopped_early = stopped;
  if (IsImages(config.data)) {
    study.classifier = ClassifierInfo{
        data.classifier_train, data.classifier_unseen, data.classifier_accuracy,
        data.real_fcd_floor,
        "held_out_accuracy: on every image the classifier did not train on (the reference and the "
        "GAN's); real_fcd_floor: FCD between two disjoint halves of the " +
            std::to_string(data.reference_images) + " reference images, " +
            std::to_string(config.samples) + " each (the reference and another); fcd_floor and "
            "kid_floor: over " + std::to_string(kFloorSplits) +
            " random halvings of the reference images (not independent: their std is a spread, "
            "their t-interval is not used)",
        data.digits.images.size(0), data.reference_images, Summarize(data.fcd_floors),
        Summarize(data.kid_floors)};
  }
  provenance.finished = UtcNow();
  study.provenance = provenance;
  if (config.shard_count > 1) study.shard = {config.shard_index, config.shard_count};
  return AssembleResults(std::move(study), std::move(runs_done), run_dir);
}

}  // namespace leaky::gan

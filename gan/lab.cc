#include "lab.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "data.h"
#include "metrics.h"
#include "outputs.h"
#include "precision.h"
#include "summary.h"
#include "train.h"

namespace leaky::gan {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// Seeds of the generators that are the same for every run, so every variant
// and seed is measured against the same real digits and drawn on the same
// grid noise.
constexpr uint64_t kRealDigitsPickSeed = 7;
constexpr uint64_t kFixedGridNoiseSeed = 2024;
// The slope of the precision table when no layer 2 is LeakyReLU.
constexpr double kPrecisionFallbackSlope = 0.2;

double Seconds(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

std::string Duration(double seconds) {
  char buffer[32];
  const int s = static_cast<int>(std::lround(std::max(seconds, 0.0)));
  std::snprintf(buffer, sizeof(buffer), "%d:%02d", s / 60, s % 60);
  return buffer;
}

// The digit classifier of the quality metrics, trained once and cached.
Classifier LoadClassifier(const LabConfig& config, const Digits& digits) {
  Classifier classifier;
  const std::filesystem::path cache = std::filesystem::path(config.data_dir) / "classifier.pt";
  if (std::filesystem::exists(cache)) {
    torch::load(classifier, cache.string());
  } else {
    std::fprintf(stderr, "gan: training the digit classifier once (cached in %s)\n",
                 cache.string().c_str());
    torch::manual_seed(0);
    classifier = Classifier();
    torch::optim::Adam optimizer(classifier->parameters(), torch::optim::AdamOptions(1e-3));
    torch::Generator generator = at::detail::createCPUGenerator(0);
    const int64_t n = digits.images.size(0);
    for (int epoch = 0; epoch < 3; ++epoch) {
      const torch::Tensor order = torch::randperm(n, generator, torch::kInt64);
      for (int64_t start = 0; start + 128 <= n; start += 128) {
        const torch::Tensor index = order.narrow(0, start, 128);
        optimizer.zero_grad();
        const torch::Tensor loss = torch::nn::functional::cross_entropy(
            classifier->forward(digits.images.index_select(0, index)),
            digits.labels.index_select(0, index));
        loss.backward();
        optimizer.step();
      }
    }
    torch::save(classifier, cache.string());
  }
  classifier->eval();
  return classifier;
}

// The progress line on stderr: run, variant, seed, a bar, rate and ETA.
struct Progress {
  int run_index, run_count;
  Clock::time_point started;
  double done_steps = 0, total_steps = 0;

  void Logged(const LabConfig& c, const Variant& v, int seed, int step) {
    done_steps += c.log_every;
    const double rate = done_steps / std::max(Seconds(started), 1e-9);
    char bar[21];
    const int filled = 20 * step / c.steps;
    for (int i = 0; i < 20; ++i) bar[i] = i < filled ? '#' : '.';
    bar[20] = '\0';
    std::fprintf(stderr, "\r[%d/%d] %-16s seed %d [%s] step %5d/%d  %6.1f steps/s  ETA %s  ",
                 run_index, run_count, v.name.c_str(), seed, bar, step, c.steps, rate,
                 Duration((total_steps - done_steps) / rate).c_str());
  }
};

LabData LoadLabData(const LabConfig& config) {
  LabData data;
  if (config.data == Dataset::kMnist) {
    data.digits = LoadMnist(config.data_dir);
    data.classifier = LoadClassifier(config, data.digits);
    torch::NoGradGuard no_grad;
    torch::Generator pick = at::detail::createCPUGenerator(kRealDigitsPickSeed);
    const torch::Tensor index =
        torch::randperm(data.digits.images.size(0), pick, torch::kInt64).narrow(0, 0, config.samples);
    data.real_features = data.classifier->Features(data.digits.images.index_select(0, index));
  }
  // Both grids come from one generator, MNIST's first, whatever the dataset.
  torch::Generator fixed = at::detail::createCPUGenerator(kFixedGridNoiseSeed);
  const torch::Tensor mnist_z = torch::randn({64, 64}, fixed, torch::kFloat32);
  const torch::Tensor ring_z = torch::randn({2000, 8}, fixed, torch::kFloat32);
  data.fixed_z = config.data == Dataset::kMnist ? mnist_z : ring_z;
  return data;
}

// The precision table, on the layer-2 pre-activations of the first variant
// (its first seed) whose layer 2 is LeakyReLU, measured at that variant's own
// slope; else of the first variant, at the base activation's slope
// (kPrecisionFallbackSlope if that is not LeakyReLU either). Null if no
// pre-activations were saved.
json PrecisionTable(const LabConfig& config, const std::filesystem::path& run_dir) {
  std::string source;
  double slope = config.base_act.kind == ActivationKind::kLeakyRelu ? config.base_act.slope
                                                                     : kPrecisionFallbackSlope;
  for (const Variant& v : config.variants) {
    const auto path = run_dir / v.name / "preact_layer2.f32";
    if (!std::filesystem::exists(path)) continue;
    const ActivationSpec layer2 = LayerActs(config, v)[1];
    if (source.empty() || layer2.kind == ActivationKind::kLeakyRelu) {
      source = path.string();
      if (layer2.kind == ActivationKind::kLeakyRelu) {
        slope = layer2.slope;
        break;
      }
    }
  }
  if (source.empty()) return nullptr;
  std::ifstream in(source, std::ios::binary | std::ios::ate);
  std::vector<float> x(static_cast<size_t>(in.tellg()) / sizeof(float));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
  return PrecisionJson(MeasurePrecision(x, slope), slope, source);
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
  }
}

}  // namespace

json RunLab(const LabConfig& config, const std::atomic<bool>& stop) {
  SingleThreadedBlas();
  if (config.threads > 0) torch::set_num_threads(config.threads);
  const std::filesystem::path run_dir = std::filesystem::path(config.out_dir) / config.name;
  std::filesystem::create_directories(run_dir);
  const LabData data = LoadLabData(config);

  json variants = json::array();
  Progress progress{0, static_cast<int>(config.variants.size()) * config.seeds, Clock::now()};
  progress.total_steps = static_cast<double>(config.steps) * progress.run_count;
  bool stopped = false;
  for (const Variant& v : config.variants) {
    const std::filesystem::path dir = run_dir / v.name;
    std::filesystem::remove_all(dir);  // no samples left from an earlier run
    std::vector<json> finals, histories;
    for (int seed = config.first_seed; seed < config.first_seed + config.seeds && !stopped; ++seed) {
      ++progress.run_index;
      // The run's first seed keeps its sample grids and pre-activations.
      const bool capture = seed == config.first_seed;
      const std::optional<TrainedRun> run = TrainRun(
          config, data, v, seed, capture, [&](int step) { progress.Logged(config, v, seed, step); },
          stop);
      if (!run) {
        stopped = true;
        break;
      }
      WriteRunFiles(config, dir, seed, *run);
      finals.push_back(FinalOf(config, data, *run));
      json history = json::array();
      for (const Row& r : run->rows) history.push_back(RowJson(r));
      histories.push_back(history);
    }
    if (finals.empty()) break;
    json layers = json::array();
    for (const ActivationSpec& a : LayerActs(config, v)) layers.push_back(a.Name());
    variants.push_back({{"name", v.name},
                        {"activation", v.act.Name()},
                        {"d_norm", v.batch_norm ? "batch" : "none"},
                        {"layer_activations", layers},
                        {"seeds_completed", static_cast<int>(finals.size())},
                        {"final", MeanOverSeeds(finals)},
                        {"per_seed", finals},
                        {"summary", SummaryOverSeeds(finals)},
                        {"history", histories}});
    if (stopped) break;
  }
  std::fprintf(stderr, "\n");
  json result = {{"name", config.name},
                 {"dataset", config.data == Dataset::kMnist ? "mnist" : "ring8"},
                 {"steps", config.steps},
                 {"seeds", config.seeds},
                 {"first_seed", config.first_seed},
                 {"batch", config.data == Dataset::kMnist ? config.batch : config.batch * 4},
                 {"log_every", config.log_every},
                 {"threads", torch::get_num_threads()},
                 {"models", DescribeModels(config.data)},
                 {"base_activation", config.base_act.Name()},
                 {"stopped_early", stopped},
                 {"variants", variants}};
  const json precision = PrecisionTable(config, run_dir);
  if (!precision.is_null()) result["precision"] = precision;
  return result;
}

}  // namespace leaky::gan

#include "lab.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "data.h"
#include "metrics.h"
#include "png.h"
#include "precision.h"

namespace leaky::gan {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

// Seeds of the generators that are the same for every run, so every variant
// and seed is measured on the same samples: the noise of the final quality
// samples, the real digits they are compared with, and the sample grids.
constexpr uint64_t kFinalSamplesSeed = 99;
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

void WriteFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<ActivationSpec> LayerActs(const LabConfig& config, const Variant& v) {
  std::vector<ActivationSpec> acts(DiscriminatorImpl::kHidden, config.base_act);
  for (int layer = 1; layer <= DiscriminatorImpl::kHidden; ++layer) {
    if (v.layers.empty() || std::find(v.layers.begin(), v.layers.end(), layer) != v.layers.end()) {
      acts[static_cast<size_t>(layer - 1)] = v.act;
    }
  }
  return acts;
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

struct Row {
  int step;
  double d_loss, g_loss, d_real, d_fake, grad_norm, step_ms;
  std::vector<double> zero, nonpos, dead;
};

json RowJson(const Row& r) {
  return {{"step", r.step},           {"d_loss", r.d_loss}, {"g_loss", r.g_loss},
          {"d_real", r.d_real},       {"d_fake", r.d_fake}, {"grad_norm_first_layer", r.grad_norm},
          {"step_ms", r.step_ms},     {"sparsity_zero", r.zero}, {"sparsity_nonpos", r.nonpos},
          {"dead_channels", r.dead}};
}

void WriteCsv(const std::filesystem::path& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "step,d_loss,g_loss,d_real,d_fake,grad_norm_first_layer,step_ms";
  for (const char* what : {"sparsity_zero", "sparsity_nonpos", "dead_channels"}) {
    for (int l = 1; l <= DiscriminatorImpl::kHidden; ++l) out << "," << what << "_l" << l;
  }
  out << "\n";
  char buffer[64];
  for (const Row& r : rows) {
    out << r.step;
    for (double v : {r.d_loss, r.g_loss, r.d_real, r.d_fake, r.grad_norm, r.step_ms}) {
      std::snprintf(buffer, sizeof(buffer), ",%.9g", v);
      out << buffer;
    }
    for (const auto* values : {&r.zero, &r.nonpos, &r.dead}) {
      for (double v : *values) {
        std::snprintf(buffer, sizeof(buffer), ",%.9g", v);
        out << buffer;
      }
    }
    out << "\n";
  }
}

// The mean of a field over the last tenth of the logged rows.
template <class Get>
double Tail(const std::vector<Row>& rows, Get get) {
  const size_t k = std::max<size_t>(1, rows.size() / 10);
  double sum = 0;
  for (size_t i = rows.size() - k; i < rows.size(); ++i) sum += get(rows[i]);
  return sum / static_cast<double>(k);
}

struct Shared {
  explicit Shared(const LabConfig& c) : config(c) {}
  const LabConfig& config;
  Digits digits;
  Classifier classifier{nullptr};
  torch::Tensor real_features;  // classifier features of real digits
  torch::Tensor fixed_z_mnist, fixed_z_ring;
  std::filesystem::path run_dir;
};

struct Progress {
  int run_index, run_count;
  Clock::time_point started;
  double done_steps = 0, total_steps = 0;
};

torch::Tensor RealBatch(Shared& s, torch::Generator& data_gen, torch::Tensor& order,
                        int64_t& cursor) {
  const int64_t batch = s.config.batch;
  if (s.config.data == Dataset::kRing8) return Ring8(batch * 4, data_gen);
  const int64_t n = s.digits.images.size(0);
  if (!order.defined() || cursor + batch > n) {
    order = torch::randperm(n, data_gen, torch::kInt64);
    cursor = 0;
  }
  const torch::Tensor index = order.narrow(0, cursor, batch);
  cursor += batch;
  return s.digits.images.index_select(0, index);
}

// One (variant, seed) run; returns its `final` object, or null if stopped.
json TrainOne(Shared& s, const Variant& v, int seed, Progress& progress,
              const std::atomic<bool>& stop) {
  const LabConfig& c = s.config;
  torch::manual_seed(static_cast<uint64_t>(seed));  // same weights for every variant
  Generator g(c.data);
  Discriminator d(c.data, LayerActs(c, v), v.batch_norm, seed);
  torch::optim::Adam opt_g(g->parameters(), torch::optim::AdamOptions(2e-4).betas({0.5, 0.999}));
  torch::optim::Adam opt_d(d->parameters(), torch::optim::AdamOptions(2e-4).betas({0.5, 0.999}));
  torch::Generator data_gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed) * 2 + 1);
  torch::Generator noise_gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed) * 2 + 2);
  torch::Tensor order;
  int64_t cursor = 0;
  const auto ones = [](const torch::Tensor& t) { return torch::ones_like(t); };
  const auto bce = [](const torch::Tensor& logits, const torch::Tensor& target) {
    return torch::nn::functional::binary_cross_entropy_with_logits(logits, target);
  };
  const std::filesystem::path dir = s.run_dir / v.name;
  if (seed == c.first_seed) std::filesystem::remove_all(dir);  // no samples left from an earlier run
  std::filesystem::create_directories(dir);
  std::vector<Row> rows;
  double step_seconds = 0, logged_seconds = 0;
  int logged_steps = 0;
  const int checkpoints[] = {std::max(1, c.steps / 4), std::max(1, c.steps / 2), c.steps};
  torch::Tensor last_preact2;
  for (int step = 1; step <= c.steps; ++step) {
    if (stop) return nullptr;
    const torch::Tensor real = RealBatch(s, data_gen, order, cursor);
    const torch::Tensor z = torch::randn({real.size(0), g->latent()}, noise_gen, torch::kFloat32);
    const bool log = step % c.log_every == 0 || step == c.steps;
    const auto t0 = Clock::now();
    // Discriminator step (captures on the real batch at logging steps).
    DiscriminatorCapture capture;
    const torch::Tensor fake = g->forward(z);
    opt_d.zero_grad();
    const torch::Tensor real_logits = d->forward(real, log ? &capture : nullptr);
    const torch::Tensor fake_logits = d->forward(fake.detach());
    const torch::Tensor d_loss = bce(real_logits, ones(real_logits)) +
                                 bce(fake_logits, torch::zeros_like(fake_logits));
    d_loss.backward();
    const double grad_norm = log ? d->FirstLayerWeight().grad().norm().item<double>() : 0.0;
    opt_d.step();
    // Generator step (non-saturating loss).
    opt_g.zero_grad();
    const torch::Tensor g_logits = d->forward(fake);
    const torch::Tensor g_loss = bce(g_logits, ones(g_logits));
    g_loss.backward();
    opt_g.step();
    const double seconds = Seconds(t0);
    step_seconds += seconds;
    logged_seconds += seconds;
    ++logged_steps;
    if (log) {
      Row r{step,
            d_loss.item<double>(),
            g_loss.item<double>(),
            torch::sigmoid(real_logits).mean().item<double>(),
            torch::sigmoid(fake_logits).mean().item<double>(),
            grad_norm,
            1000.0 * logged_seconds / logged_steps,
            {}, {}, {}};
      for (const torch::Tensor& h : capture.hidden) {
        const auto [zero, nonpos] = Sparsity(h);
        r.zero.push_back(zero);
        r.nonpos.push_back(nonpos);
        r.dead.push_back(DeadChannelFraction(h));
      }
      last_preact2 = capture.preact2;
      rows.push_back(r);
      logged_seconds = 0;
      logged_steps = 0;
      progress.done_steps += c.log_every;
      const double elapsed = Seconds(progress.started);
      const double rate = progress.done_steps / std::max(elapsed, 1e-9);
      char bar[21];
      const int filled = 20 * step / c.steps;
      for (int i = 0; i < 20; ++i) bar[i] = i < filled ? '#' : '.';
      bar[20] = '\0';
      std::fprintf(stderr, "\r[%d/%d] %-16s seed %d [%s] step %5d/%d  %6.1f steps/s  ETA %s  ",
                   progress.run_index, progress.run_count, v.name.c_str(), seed, bar, step,
                   c.steps, rate,
                   Duration((progress.total_steps - progress.done_steps) / rate).c_str());
    }
    if (seed == c.first_seed && std::find(std::begin(checkpoints), std::end(checkpoints), step) !=
                         std::end(checkpoints)) {
      torch::NoGradGuard no_grad;
      g->eval();
      const torch::Tensor samples =
          g->forward(c.data == Dataset::kMnist ? s.fixed_z_mnist : s.fixed_z_ring);
      g->train();
      const torch::Tensor image =
          c.data == Dataset::kMnist ? ImageGrid(samples, 8) : ScatterImage(samples, 160);
      WriteFile(dir / ("samples_step" + std::to_string(step) + ".png"), EncodePng(image));
    }
  }
  WriteCsv(dir / ("seed" + std::to_string(seed) + ".csv"), rows);
  if (seed == c.first_seed && last_preact2.defined()) {
    const torch::Tensor flat = last_preact2.contiguous().to(torch::kFloat32).reshape({-1});
    std::ofstream out(dir / "preact_layer2.f32", std::ios::binary);
    out.write(reinterpret_cast<const char*>(flat.data_ptr<float>()),
              static_cast<std::streamsize>(flat.numel() * sizeof(float)));
  }
  // Final: the last tenth of the logged rows, then sample quality.
  json final = {
      {"d_loss", Tail(rows, [](const Row& r) { return r.d_loss; })},
      {"g_loss", Tail(rows, [](const Row& r) { return r.g_loss; })},
      {"d_real", Tail(rows, [](const Row& r) { return r.d_real; })},
      {"d_fake", Tail(rows, [](const Row& r) { return r.d_fake; })},
      {"grad_norm_first_layer", Tail(rows, [](const Row& r) { return r.grad_norm; })},
      {"step_ms", 1000.0 * step_seconds / c.steps}};
  using PerLayer = std::vector<double> Row::*;
  for (const auto& [key, field] : {std::pair<const char*, PerLayer>{"sparsity_zero", &Row::zero},
                                   {"sparsity_nonpos", &Row::nonpos},
                                   {"dead_channels", &Row::dead}}) {
    std::vector<double> per_layer;
    for (size_t l = 0; l < DiscriminatorImpl::kHidden; ++l) {
      per_layer.push_back(Tail(rows, [&](const Row& r) { return (r.*field)[l]; }));
    }
    final[key] = per_layer;
  }
  torch::NoGradGuard no_grad;
  g->eval();
  torch::Generator sample_gen = at::detail::createCPUGenerator(kFinalSamplesSeed);
  const torch::Tensor samples =
      g->forward(torch::randn({c.samples, g->latent()}, sample_gen, torch::kFloat32));
  if (c.data == Dataset::kMnist) {
    const torch::Tensor features = s.classifier->Features(samples);
    const auto [covered, kl] = ClassCoverage(s.classifier->forward(samples).argmax(1));
    final["fcd"] = FrechetDistance(features, s.real_features);
    final["class_coverage"] = covered;
    final["class_kl"] = kl;
  } else {
    const auto [modes, share] = Ring8Quality(samples, std::max(1, c.samples / 100));
    final["modes_covered"] = modes;
    final["high_quality_share"] = share;
  }
  json history = json::array();
  for (const Row& r : rows) history.push_back(RowJson(r));
  return {{"final", final}, {"history", history}};
}

// The mean over seeds of a number or of a per-layer array.
json MeanOver(const std::vector<json>& finals, const std::string& key) {
  if (finals.front()[key].is_array()) {
    std::vector<double> sum(finals.front()[key].size(), 0.0);
    for (const json& f : finals) {
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += f[key][i].get<double>();
    }
    for (double& v : sum) v /= static_cast<double>(finals.size());
    return sum;
  }
  double sum = 0;
  for (const json& f : finals) sum += f[key].get<double>();
  return sum / static_cast<double>(finals.size());
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
  Shared s(config);
  s.run_dir = std::filesystem::path(config.out_dir) / config.name;
  std::filesystem::create_directories(s.run_dir);
  if (config.data == Dataset::kMnist) {
    s.digits = LoadMnist(config.data_dir);
    s.classifier = LoadClassifier(config, s.digits);
    torch::NoGradGuard no_grad;
    torch::Generator pick = at::detail::createCPUGenerator(kRealDigitsPickSeed);
    const torch::Tensor index =
        torch::randperm(s.digits.images.size(0), pick, torch::kInt64).narrow(0, 0, config.samples);
    s.real_features = s.classifier->Features(s.digits.images.index_select(0, index));
  }
  torch::Generator fixed = at::detail::createCPUGenerator(kFixedGridNoiseSeed);
  s.fixed_z_mnist = torch::randn({64, 64}, fixed, torch::kFloat32);
  s.fixed_z_ring = torch::randn({2000, 8}, fixed, torch::kFloat32);

  json variants = json::array();
  Progress progress{0, static_cast<int>(config.variants.size()) * config.seeds, Clock::now()};
  progress.total_steps = static_cast<double>(config.steps) * progress.run_count;
  bool stopped = false;
  for (const Variant& v : config.variants) {
    std::vector<json> finals, histories;
    for (int seed = config.first_seed; seed < config.first_seed + config.seeds && !stopped; ++seed) {
      ++progress.run_index;
      json run = TrainOne(s, v, seed, progress, stop);
      if (run.is_null()) {
        stopped = true;
        break;
      }
      finals.push_back(run["final"]);
      histories.push_back(run["history"]);
    }
    if (finals.empty()) break;
    json final;
    for (const auto& item : finals.front().items()) final[item.key()] = MeanOver(finals, item.key());
    json summary;
    for (const auto& item : finals.front().items()) {
      if (item.value().is_array()) continue;
      std::vector<double> values;
      for (const json& f : finals) values.push_back(f[item.key()].get<double>());
      const Summary sum = Summarize(values);
      summary[item.key()] = {{"mean", sum.mean}, {"std", sum.std}, {"ci_low", sum.ci_low},
                             {"ci_high", sum.ci_high}, {"n", sum.n}};
    }
    json layers = json::array();
    for (const ActivationSpec& a : LayerActs(config, v)) layers.push_back(a.Name());
    variants.push_back({{"name", v.name},
                        {"activation", v.act.Name()},
                        {"d_norm", v.batch_norm ? "batch" : "none"},
                        {"layer_activations", layers},
                        {"seeds_completed", static_cast<int>(finals.size())},
                        {"final", final},
                        {"per_seed", finals},
                        {"summary", summary},
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
  // The precision table, on the layer-2 pre-activations of the first
  // variant (its first seed) whose layer 2 is LeakyReLU, measured at that
  // variant's own slope; else of the first variant, at the base activation's
  // slope (kPrecisionFallbackSlope if that is not LeakyReLU either).
  std::string source;
  double slope = config.base_act.kind == "lrelu" ? config.base_act.slope : kPrecisionFallbackSlope;
  for (const Variant& v : config.variants) {
    const auto path = s.run_dir / v.name / "preact_layer2.f32";
    if (!std::filesystem::exists(path)) continue;
    const ActivationSpec layer2 = LayerActs(config, v)[1];
    if (source.empty() || layer2.kind == "lrelu") {
      source = path.string();
      if (layer2.kind == "lrelu") {
        slope = layer2.slope;
        break;
      }
    }
  }
  if (!source.empty()) {
    std::ifstream in(source, std::ios::binary | std::ios::ate);
    std::vector<float> x(static_cast<size_t>(in.tellg()) / sizeof(float));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(x.size() * sizeof(float)));
    result["precision"] = PrecisionJson(MeasurePrecision(x, slope), slope, source);
  }
  return result;
}

}  // namespace leaky::gan

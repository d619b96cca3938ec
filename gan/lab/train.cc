#include "train.h"

#include <algorithm>
#include <chrono>

#include "checkpoint.h"
#include "metrics.h"

namespace leaky::gan {
namespace {


// The noise of the quality samples: the same for every run and step, so
// every variant and seed is measured on the same draw.
constexpr uint64_t kQualitySamplesSeed = 99;

// The next real batch: ring8 draws fresh points; MNIST walks a permutation
// of the digits, drawn again at the end of each epoch.
torch::Tensor RealBatch(const LabConfig& c, const LabData& data, torch::Generator& data_gen,
                        torch::Tensor& order, int64_t& cursor) {
  if (c.data == Dataset::kRing8) return Ring8(c.batch * 4, data_gen);
  const int64_t n = data.digits.images.size(0);
  if (!order.defined() || cursor + c.batch > n) {
    order = torch::randperm(n, data_gen, torch::kInt64);
    cursor = 0;
  }
  const torch::Tensor index = order.narrow(0, cursor, c.batch);
  cursor += c.batch;
  return data.digits.images.index_select(0, index);
}

// Every PReLU layer's slopes (per channel), in layer order; empty without PReLU.
PreluSlopes::Layers PreluLayers(Discriminator& d) {
  PreluSlopes::Layers layers;
  for (const auto& p : d->named_parameters()) {
    const std::string& key = p.key();
    if (key.rfind("act", 0) != 0 || key.size() < 7 || key.substr(key.size() - 7) != ".weight") continue;
    const torch::Tensor w = p.value().detach().to(torch::kFloat64).contiguous();
    layers.emplace_back(key.substr(0, key.size() - 7),
                        std::vector<double>(w.data_ptr<double>(), w.data_ptr<double>() + w.numel()));
  }
  return layers;
}

// The dead-unit probe (Probe); draws nothing from any generator, so training
// goes on exactly as without it.
Probe ProbeUnits(const LabData& data, Generator& g, Discriminator& d, int step) {
  torch::NoGradGuard no_grad;
  g->eval();
  d->eval();
  DiscriminatorCapture real, fake;
  d->forward(data.probe_real, &real);
  d->forward(g->forward(data.probe_z), &fake);
  g->train();
  d->train();
  Probe p{step, {}, {}, {}, {}, {}};
  for (size_t l = 0; l < real.hidden.size(); ++l) {
    p.dead.push_back(DeadChannelFraction(torch::cat({real.hidden[l], fake.hidden[l]}, 0)));
    const auto [zero_real, nonpos_real] = Sparsity(real.hidden[l]);
    const auto [zero_fake, nonpos_fake] = Sparsity(fake.hidden[l]);
    p.zero_real.push_back(zero_real);
    p.nonpos_real.push_back(nonpos_real);
    p.zero_fake.push_back(zero_fake);
    p.nonpos_fake.push_back(nonpos_fake);
  }
  return p;
}

}  // namespace

std::optional<TrainedRun> TrainRun(
    const LabConfig& c, const LabData& data, const Variant& v, int seed, bool capture,
    int quality_every, const std::function<void(int step)>& on_log,
    const std::function<Quality(const torch::Tensor& samples)>& measure,
    const std::filesystem::path& checkpoint, const std::atomic<bool>& stop) {
  torch::manual_seed(static_cast<uint64_t>(seed));  // same weights for every variant
  Generator g(c.data, c.shape);
  Discriminator d(c.data, LayerActs(c, v), v.batch_norm, seed, c.shape);
  torch::optim::Adam opt_g(g->parameters(), torch::optim::AdamOptions(2e-4).betas({0.5, 0.999}));
  torch::optim::Adam opt_d(d->parameters(), torch::optim::AdamOptions(2e-4).betas({0.5, 0.999}));
  const Models models{g, d, opt_g, opt_d};
  TrainingState state;
  state.data_gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed) * 2 + 1);
  state.noise_gen = at::detail::createCPUGenerator(static_cast<uint64_t>(seed) * 2 + 2);
  PreluSlopes::Layers prelu_start = PreluLayers(d);  // before a checkpoint replaces them
  if (!checkpoint.empty() && std::filesystem::exists(checkpoint)) {
    LoadCheckpoint(checkpoint, models, &state);
  }
  TrainedRun& run = state.run;
  run.prelu_start = std::move(prelu_start);
  const auto save = [&] {
    if (!checkpoint.empty()) SaveCheckpoint(checkpoint, models, state);
  };
  const auto ones = [](const torch::Tensor& t) { return torch::ones_like(t); };
  const auto bce = [](const torch::Tensor& logits, const torch::Tensor& target) {
    return torch::nn::functional::binary_cross_entropy_with_logits(logits, target);
  };
  double logged_seconds = 0;
  int logged_steps = 0;
  const int checkpoints[] = {std::max(1, c.steps / 4), std::max(1, c.steps / 2), c.steps};
  for (int step = state.step + 1; step <= c.steps; ++step) {
    if (stop) {
      save();  // what the steps so far did is kept: the same command goes on from here
      return std::nullopt;
    }
    const torch::Tensor real = RealBatch(c, data, state.data_gen, state.order, state.cursor);
    const torch::Tensor z =
        torch::randn({real.size(0), g->latent()}, state.noise_gen, torch::kFloat32);
    const bool log = step % c.log_every == 0 || step == c.steps;
    const auto t0 = Clock::now();
    // Discriminator step (captures on the real batch at logging steps).
    DiscriminatorCapture captured;
    const torch::Tensor fake = g->forward(z);
    opt_d.zero_grad();
    const torch::Tensor real_logits = d->forward(real, log ? &captured : nullptr);
    const torch::Tensor fake_logits = d->forward(fake.detach());
    const torch::Tensor d_loss =
        c.loss == Loss::kHinge
            ? torch::relu(1.0 - real_logits).mean() + torch::relu(1.0 + fake_logits).mean()
            : bce(real_logits, ones(real_logits)) + bce(fake_logits, torch::zeros_like(fake_logits));
    d_loss.backward();
    const double grad_norm = log ? d->FirstLayerWeight().grad().norm().item<double>() : 0.0;
    opt_d.step();
    // Generator step (the non-saturating or the hinge loss).
    opt_g.zero_grad();
    const torch::Tensor g_logits = d->forward(fake);
    const torch::Tensor g_loss =
        c.loss == Loss::kHinge ? -g_logits.mean() : bce(g_logits, ones(g_logits));
    g_loss.backward();
    opt_g.step();
    const double seconds = Seconds(t0);
    state.step_seconds += seconds;
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
      for (const torch::Tensor& h : captured.hidden) {
        const auto [zero, nonpos] = Sparsity(h);
        r.zero.push_back(zero);
        r.nonpos.push_back(nonpos);
        r.dead.push_back(DeadChannelFraction(h));
      }
      if (capture) run.preact2 = captured.preact2;
      run.rows.push_back(r);
      logged_seconds = 0;
      logged_steps = 0;
      on_log(step);
    }
    if (capture && std::find(std::begin(checkpoints), std::end(checkpoints), step) !=
                       std::end(checkpoints)) {
      torch::NoGradGuard no_grad;
      g->eval();
      run.sample_grids.emplace_back(step, g->forward(data.fixed_z));
      g->train();
    }
    if (IsImages(c.data) && (step % c.probe_every == 0 || step == c.steps)) {
      run.probes.push_back(ProbeUnits(data, g, d, step));
      // The f16 counts of every seed, on this step's training batch.
      if (log && captured.preact2.defined()) {
        const torch::Tensor x = captured.preact2.contiguous().to(torch::kFloat32).reshape({-1});
        run.precision.push_back(
            {step, MeasurePrecision(std::vector<float>(x.data_ptr<float>(),
                                                       x.data_ptr<float>() + x.numel()),
                                    PrecisionSlope(LayerActs(c, v)[1], c.base_act))});
      }
    }
    if (step % quality_every == 0 || step == c.steps) {
      torch::NoGradGuard no_grad;
      g->eval();
      torch::Generator sample_gen = at::detail::createCPUGenerator(kQualitySamplesSeed);
      run.quality.push_back({step, measure(g->forward(torch::randn({c.samples, g->latent()},
                                                                    sample_gen, torch::kFloat32)))});
      g->train();
    }
    state.step = step;
    if (c.checkpoint_every > 0 && step % c.checkpoint_every == 0 && step < c.steps) save();
  }
  run.step_ms = 1000.0 * state.step_seconds / c.steps;
  run.prelu_end = PreluLayers(d);
  return std::move(run);
}

double Seconds(Clock::time_point from) {
  return std::chrono::duration<double>(Clock::now() - from).count();
}

}  // namespace leaky::gan

#include "summary.h"

#include <algorithm>
#include <utility>

#include "metrics.h"

namespace leaky::gan {
namespace {

using json = nlohmann::json;

// The mean of a field over the last tenth of the logged rows.
template <class Get>
double Tail(const std::vector<Row>& rows, Get get) {
  const size_t k = std::max<size_t>(1, rows.size() / 10);
  double sum = 0;
  for (size_t i = rows.size() - k; i < rows.size(); ++i) sum += get(rows[i]);
  return sum / static_cast<double>(k);
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

}  // namespace

json RowJson(const Row& r) {
  return {{"step", r.step},           {"d_loss", r.d_loss}, {"g_loss", r.g_loss},
          {"d_real", r.d_real},       {"d_fake", r.d_fake}, {"grad_norm_first_layer", r.grad_norm},
          {"step_ms", r.step_ms},     {"sparsity_zero", r.zero}, {"sparsity_nonpos", r.nonpos},
          {"dead_channels", r.dead}};
}

json ProbeJson(const Probe& p) {
  return {{"step", p.step},
          {"dead_channels", p.dead},
          {"zero_real", p.zero_real},
          {"nonpos_real", p.nonpos_real},
          {"zero_fake", p.zero_fake},
          {"nonpos_fake", p.nonpos_fake}};
}

json SampleQuality(const LabConfig& config, const LabData& data, const torch::Tensor& samples) {
  torch::NoGradGuard no_grad;
  json quality;
  if (config.data == Dataset::kMnist) {
    Classifier classifier = data.classifier;  // a module's forward is not const
    const torch::Tensor features = classifier->Features(samples);
    const auto [covered, kl] = ClassCoverage(classifier->forward(samples).argmax(1));
    quality["fcd"] = FrechetDistance(features, data.real_features);
    quality["class_coverage"] = covered;
    quality["class_kl"] = kl;
  } else {
    const auto [modes, share] = Ring8Quality(samples, std::max(1, config.samples / 100));
    quality["modes_covered"] = modes;
    quality["high_quality_share"] = share;
  }
  return quality;
}

json FinalOf(const TrainedRun& run, const json& quality) {
  const std::vector<Row>& rows = run.rows;
  json final = {
      {"d_loss", Tail(rows, [](const Row& r) { return r.d_loss; })},
      {"g_loss", Tail(rows, [](const Row& r) { return r.g_loss; })},
      {"d_real", Tail(rows, [](const Row& r) { return r.d_real; })},
      {"d_fake", Tail(rows, [](const Row& r) { return r.d_fake; })},
      {"grad_norm_first_layer", Tail(rows, [](const Row& r) { return r.grad_norm; })},
      {"step_ms", run.step_ms}};
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
  if (!run.probes.empty()) final["probe_dead_channels"] = run.probes.back().dead;
  for (const auto& item : quality.items()) {
    if (item.key() != "step") final[item.key()] = item.value();
  }
  return final;
}

json MeanOverSeeds(const std::vector<json>& finals) {
  json mean;
  for (const auto& item : finals.front().items()) mean[item.key()] = MeanOver(finals, item.key());
  return mean;
}

json SummaryOverSeeds(const std::vector<json>& finals) {
  json summary;
  for (const auto& item : finals.front().items()) {
    if (item.value().is_array()) continue;
    std::vector<double> values;
    for (const json& f : finals) values.push_back(f[item.key()].get<double>());
    const Summary sum = Summarize(values);
    summary[item.key()] = {{"mean", sum.mean},         {"std", sum.std},
                           {"ci_low", sum.ci_low},     {"ci_high", sum.ci_high},
                           {"boot_low", sum.boot_low}, {"boot_high", sum.boot_high},
                           {"n", sum.n}};
  }
  return summary;
}

}  // namespace leaky::gan

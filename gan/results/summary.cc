#include "summary.h"

#include <algorithm>
#include <optional>

namespace leaky::gan {
namespace {

// The mean of a field over the last tenth of the logged rows.
template <class Get>
double Tail(const std::vector<Row>& rows, Get get) {
  const size_t k = std::max<size_t>(1, rows.size() / 10);
  double sum = 0;
  for (size_t i = rows.size() - k; i < rows.size(); ++i) sum += get(rows[i]);
  return sum / static_cast<double>(k);
}

// The mean over the finals of a number, and of a per-layer value per layer.
template <class Get>
double Mean(const std::vector<Final>& finals, Get get) {
  double sum = 0;
  for (const Final& f : finals) sum += get(f);
  return sum / static_cast<double>(finals.size());
}
template <class Get>
PerLayer MeanPerLayer(const std::vector<Final>& finals, Get get) {
  PerLayer sum(get(finals.front()).size(), 0.0);
  for (const Final& f : finals) {
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += get(f)[i];
  }
  for (double& v : sum) v /= static_cast<double>(finals.size());
  return sum;
}

}  // namespace

std::vector<std::pair<std::string, double>> Numbers(const Final& f) {
  std::vector<std::pair<std::string, double>> numbers = {
      {"d_loss", f.d_loss}, {"g_loss", f.g_loss}, {"d_real", f.d_real}, {"d_fake", f.d_fake},
      {"grad_norm_first_layer", f.grad_norm_first_layer}, {"step_ms", f.step_ms}};
  const Quality& q = f.quality;
  for (const auto& [key, value] : {std::pair<const char*, const std::optional<double>*>{"fcd", &q.fcd},
                                   {"class_coverage", &q.class_coverage},
                                   {"class_kl", &q.class_kl},
                                   {"kid", &q.kid},
                                   {"modes_covered", &q.modes_covered},
                                   {"high_quality_share", &q.high_quality_share}}) {
    if (*value) numbers.emplace_back(key, **value);
  }
  return numbers;
}

Final FinalOf(const std::vector<Row>& rows, const std::vector<Probe>& probes, double step_ms,
              const Quality& quality) {
  Final f;
  f.d_loss = Tail(rows, [](const Row& r) { return r.d_loss; });
  f.g_loss = Tail(rows, [](const Row& r) { return r.g_loss; });
  f.d_real = Tail(rows, [](const Row& r) { return r.d_real; });
  f.d_fake = Tail(rows, [](const Row& r) { return r.d_fake; });
  f.grad_norm_first_layer = Tail(rows, [](const Row& r) { return r.grad_norm; });
  f.step_ms = step_ms;
  for (const auto& pair : {std::pair{&f.sparsity_zero, &Row::zero},
                           {&f.sparsity_nonpos, &Row::nonpos},
                           {&f.dead_channels, &Row::dead}}) {
    // Named, not a structured binding: clang 14 (the fuzz build) cannot
    // capture one in a lambda.
    PerLayer* to = pair.first;
    const auto field = pair.second;
    for (size_t l = 0; l < (rows.front().*field).size(); ++l) {
      to->push_back(Tail(rows, [&](const Row& r) { return (r.*field)[l]; }));
    }
  }
  if (!probes.empty()) f.probe_dead_channels = probes.back().dead;
  f.quality = quality;
  return f;
}

Final MeanOverSeeds(const std::vector<Final>& finals) {
  Final m;
  m.d_loss = Mean(finals, [](const Final& f) { return f.d_loss; });
  m.g_loss = Mean(finals, [](const Final& f) { return f.g_loss; });
  m.d_real = Mean(finals, [](const Final& f) { return f.d_real; });
  m.d_fake = Mean(finals, [](const Final& f) { return f.d_fake; });
  m.grad_norm_first_layer = Mean(finals, [](const Final& f) { return f.grad_norm_first_layer; });
  m.step_ms = Mean(finals, [](const Final& f) { return f.step_ms; });
  m.sparsity_zero = MeanPerLayer(finals, [](const Final& f) -> const PerLayer& { return f.sparsity_zero; });
  m.sparsity_nonpos =
      MeanPerLayer(finals, [](const Final& f) -> const PerLayer& { return f.sparsity_nonpos; });
  m.dead_channels = MeanPerLayer(finals, [](const Final& f) -> const PerLayer& { return f.dead_channels; });
  if (finals.front().probe_dead_channels) {
    m.probe_dead_channels = MeanPerLayer(
        finals, [](const Final& f) -> const PerLayer& { return f.probe_dead_channels.value(); });
  }
  for (auto field : {&Quality::fcd, &Quality::kid, &Quality::class_coverage, &Quality::class_kl,
                     &Quality::modes_covered, &Quality::high_quality_share}) {
    if (finals.front().quality.*field) {
      m.quality.*field = Mean(finals, [&](const Final& f) { return (f.quality.*field).value(); });
    }
  }
  return m;
}

std::map<std::string, Summary> SummaryOverSeeds(const std::vector<Final>& finals) {
  std::map<std::string, Summary> summary;
  const auto names = Numbers(finals.front());
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<double> values;
    for (const Final& f : finals) values.push_back(Numbers(f).at(i).second);
    summary[names[i].first] = Summarize(values);
  }
  return summary;
}

}  // namespace leaky::gan

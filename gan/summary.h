// From measurements to numbers: a run's `final` object (the last tenth of its
// logged rows, sample quality), the mean and the bootstrap summary over
// seeds, and a row as JSON.
#ifndef LEAKY_GAN_SUMMARY_H_
#define LEAKY_GAN_SUMMARY_H_

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "lab.h"
#include "train.h"

namespace leaky::gan {

nlohmann::json RowJson(const Row& r);
nlohmann::json ProbeJson(const Probe& p);

// The quality of generated samples (MNIST: FCD, class coverage and KL;
// ring8: modes and the high-quality share).
nlohmann::json SampleQuality(const LabConfig& config, const LabData& data,
                             const torch::Tensor& samples);

// A run's final values: losses, D outputs, gradient norm, per-layer sparsity
// and dead channels over the last tenth of its rows, the mean step time, and
// `quality` (SampleQuality of its last step).
nlohmann::json FinalOf(const TrainedRun& run, const nlohmann::json& quality);

// Per key of the runs' finals: the mean over seeds (numbers and per-layer
// arrays) and, for numbers, mean, std and a bootstrap 95% interval.
nlohmann::json MeanOverSeeds(const std::vector<nlohmann::json>& finals);
nlohmann::json SummaryOverSeeds(const std::vector<nlohmann::json>& finals);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_SUMMARY_H_

// From measurements to numbers: a run's final values (the last tenth of its
// logged rows, its last probe and quality point), and the mean and the
// summary over seeds. Plain records, no LibTorch.
#ifndef LEAKY_GAN_SUMMARY_H_
#define LEAKY_GAN_SUMMARY_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "records.h"

namespace leaky::gan {

// A run's final values: losses, D outputs, gradient norm, per-layer sparsity
// and dead channels over the last tenth of its rows, `step_ms` (the mean
// step time), the last probe's dead channels (if any) and `quality` (of its
// last step).
Final FinalOf(const std::vector<Row>& rows, const std::vector<Probe>& probes, double step_ms,
              const Quality& quality);

// A final's numbers (not its per-layer values) under results.json's names.
std::vector<std::pair<std::string, double>> Numbers(const Final& f);

// The mean over seeds of every value of the runs' finals (per-layer values
// per layer), and for each number (Numbers) mean, std, the Student-t and
// the bootstrap 95% intervals.
Final MeanOverSeeds(const std::vector<Final>& finals);
std::map<std::string, Summary> SummaryOverSeeds(const std::vector<Final>& finals);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_SUMMARY_H_

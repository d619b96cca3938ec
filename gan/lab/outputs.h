// A run's files in its variant's folder: the logged rows as CSV, the sample
// grids as PNG, layer 2's pre-activations as raw f32 (`leaky precision`).
#ifndef LEAKY_GAN_OUTPUTS_H_
#define LEAKY_GAN_OUTPUTS_H_

#include <filesystem>

#include "config.h"
#include "train.h"

namespace leaky::gan {

// seed<k>.csv always; samples_step<s>.png and preact_layer2.f32 when the run
// captured them.
void WriteRunFiles(const LabConfig& config, const std::filesystem::path& dir, int seed,
                   const TrainedRun& run);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_OUTPUTS_H_

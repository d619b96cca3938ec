// A training run's whole state between two steps, saved every
// checkpoint_every steps and when the lab is stopped, so that the same
// command resumes the run where it was and finishes with the bits of an
// uninterrupted run: both models, both optimisers (Adam's moments and step
// counts), every random state (the data order's and the noise's generators,
// torch's global one, each leaky RReLU's stream offset), the data order and
// its cursor, and what the run measured so far. One file, written aside and
// renamed, so a kill leaves the previous checkpoint or the new one.
#ifndef LEAKY_GAN_CHECKPOINT_H_
#define LEAKY_GAN_CHECKPOINT_H_

#include <torch/torch.h>

#include <filesystem>
#include <vector>

#include "models.h"
#include "train.h"

namespace leaky::gan {

// What TrainRun holds besides its modules and optimisers.
struct TrainingState {
  int step = 0;                 // steps done
  torch::Generator data_gen, noise_gen;
  torch::Tensor order;          // MNIST's permutation of this epoch (undefined before the first)
  int64_t cursor = 0;
  double step_seconds = 0;      // wall time of the steps done (not part of the results' bits)
  TrainedRun run;               // rows, quality, probes, grids, pre-activations so far
};

struct Models {
  Generator& g;
  Discriminator& d;
  torch::optim::Adam& opt_g;
  torch::optim::Adam& opt_d;
};

void SaveCheckpoint(const std::filesystem::path& path, const Models& m, const TrainingState& s);

// Restores `m` and `s` from `path`; throws std::runtime_error with one line
// naming the file when it cannot be read.
void LoadCheckpoint(const std::filesystem::path& path, const Models& m, TrainingState* s);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_CHECKPOINT_H_

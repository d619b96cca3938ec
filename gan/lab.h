// The GAN lab: trains one generator/discriminator pair per (variant, seed)
// with identical seeds, initial weights and data order across variants,
// records per-step measurements, and summarises them (results.json, CSV,
// sample grids, report.html).
#ifndef LEAKY_GAN_LAB_H_
#define LEAKY_GAN_LAB_H_

#include <nlohmann/json.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "models.h"

namespace leaky::gan {

struct Variant {
  std::string name;
  ActivationSpec act;           // on the chosen layers
  std::vector<int> layers;      // 1-based; empty = all hidden layers
  bool batch_norm = false;
};

struct LabConfig {
  std::string name = "gan-demo";
  std::string out_dir = "runs";
  std::string data_dir = "data/mnist";
  Dataset data = Dataset::kMnist;
  std::vector<Variant> variants;
  ActivationSpec base_act;      // the layers a variant does not choose
  int steps = 600;
  int seeds = 1;
  int first_seed = 0;           // seeds first_seed .. first_seed + seeds - 1
  int log_every = 10;
  int batch = 64;
  int threads = 0;              // 0: torch's default
  int samples = 1000;           // generated samples for the quality metrics
};

// Runs every (variant, seed); stops early (keeping what finished) when
// `stop` becomes true. Returns results.json's contents.
nlohmann::json RunLab(const LabConfig& config, const std::atomic<bool>& stop);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_LAB_H_

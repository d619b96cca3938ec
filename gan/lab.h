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

// Bumped whenever a change alters what a run measures: `leaky gan merge`
// refuses to combine runs of different versions.
// 3: initialisation by module type (PReLU starts at its init), --width and
// --init, the held-out classifier and real-vs-real floor, dead-unit probes.
inline constexpr int kLabVersion = 3;

struct LabConfig {
  std::string preset = "default";
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
  int quality_every = 0;        // steps between sample-quality points; 0: steps / 20
  ModelShape shape;             // --width, --init
  int probe_every = 500;        // steps between dead-unit probes (and the last step)
  int shard_index = 1;          // run the shard_index-th of shard_count slices
  int shard_count = 1;
  bool terminal = true;         // progress as one updating line (else plain lines)
};

// One (variant, seed) run of a preset; `variant` indexes config.variants.
struct RunKey {
  size_t variant;
  int seed;
};

// Every run of the configuration, variant by variant, seeds ascending.
std::vector<RunKey> PlannedRuns(const LabConfig& config);

// Whether run `index` (0-based, in PlannedRuns' order) is shard K's of N:
// every N-th run from the (K-1)-th, so each shard gets a mix of variants
// and seeds. The one rule for running shards and for merging them.
inline bool InShard(size_t index, int shard_index, int shard_count) {
  return index % static_cast<size_t>(shard_count) == static_cast<size_t>(shard_index - 1);
}

// The runs of shard K of N (InShard).
std::vector<RunKey> ShardRuns(const LabConfig& config);

// Runs this shard's runs (all of them when not sharded); stops early
// (keeping what finished) when `stop` becomes true. Writes each run's files
// under <out_dir>/<name>/<variant>/ and returns results.json's contents
// (AssembleResults, merge.h), without the report.
nlohmann::json RunLab(const LabConfig& config, const std::atomic<bool>& stop);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_LAB_H_

// The GAN lab: trains one generator/discriminator pair per (variant, seed)
// with identical seeds, initial weights and data order across variants,
// records per-step measurements, and summarises them (results.json, CSV,
// sample grids, report.html).
#ifndef LEAKY_GAN_LAB_H_
#define LEAKY_GAN_LAB_H_

#include <atomic>

#include "config.h"
#include "records.h"

namespace leaky::gan {

// Runs this shard's runs (all of them when not sharded); stops early
// (keeping what finished) when `stop` becomes true. Writes each run's files
// under <out_dir>/<name>/<variant>/ and returns the results
// (AssembleResults, merge.h), without the report.
Results RunLab(const LabConfig& config, const std::atomic<bool>& stop);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_LAB_H_

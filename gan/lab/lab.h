// The GAN lab: trains one generator/discriminator pair per (variant, seed)
// with identical seeds, initial weights and data order across variants,
// records per-step measurements, and summarises them (results.json, CSV,
// sample grids, report.html).
#ifndef LEAKY_GAN_LAB_H_
#define LEAKY_GAN_LAB_H_

#include <atomic>
#include <filesystem>

#include "config.h"
#include "records.h"

namespace leaky::gan {

// Runs this shard's runs (all of them when not sharded); stops early
// (keeping what finished, and a checkpoint of each run it stopped) when
// `stop` becomes true. Writes each run's files under
// <out_dir>/<name>/<variant>/ and returns the results (AssembleResults,
// merge.h), without the report. A run finished by an earlier, interrupted
// invocation of the same study is read back (<variant>/seed<k>.run.json),
// one it left unfinished goes on from its checkpoint (checkpoint.h), so the
// same command after a kill finishes with the bits of an uninterrupted run.
Results RunLab(const LabConfig& config, const std::atomic<bool>& stop);

// Makes `dir` ready for the study `config` describes: creates it, keeps it
// when it holds the same study (the lab then resumes), and otherwise
// refuses with one line, unless config.force, which empties it. `dir`/lab.json
// records the study.
void PrepareRunFolder(const LabConfig& config, const std::filesystem::path& dir);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_LAB_H_

// results.json from finished runs, and `leaky gan merge`: shards of one
// study (--shard K/N, --jobs workers, Slurm array tasks) or runs of other
// seeds (--first-seed) combined into the results one process would have
// written. Both go through AssembleResults, so a merge and a single run give
// the same file.
#ifndef LEAKY_GAN_MERGE_H_
#define LEAKY_GAN_MERGE_H_

#include <filesystem>
#include <string>
#include <vector>

#include "records.h"

namespace leaky::gan {

// `study`: the study's configuration with its plan (the variants in order,
// seeds, first_seed). `runs`: the finished runs, in any order. Groups them
// by variant (plan order, seeds ascending), summarises over seeds, adds the
// precision table from `run_dir`'s captured pre-activations and measures
// the claims.
Results AssembleResults(Study study, std::vector<Run> runs, const std::filesystem::path& run_dir);

struct MergeOptions {
  std::vector<std::string> inputs;  // run folders (each with results.json)
  std::string out;                  // the merged run folder
  bool allow_partial = false;       // merge even when runs or shards are missing
};

// Checks that the inputs are parts of one study (the same lab version,
// preset, data, models and settings; no run twice; no shard or run missing
// unless allow_partial), then copies the runs' files into `out` and returns
// the merged results. Throws std::runtime_error with one line before
// writing anything when the inputs do not fit together.
Results MergeResults(const MergeOptions& options);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_MERGE_H_

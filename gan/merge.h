// results.json from finished runs, and `leaky gan merge`: shards of one
// study (--shard K/N, --jobs workers, Slurm array tasks) or runs of other
// seeds (--first-seed) combined into the results one process would have
// written. Both go through AssembleResults, so a merge and a single run give
// the same file.
#ifndef LEAKY_GAN_MERGE_H_
#define LEAKY_GAN_MERGE_H_

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace leaky::gan {

// `meta`: the configuration keys of results.json, with "plan" (the variants
// in order, seeds, first_seed). `records`: one per finished run ({variant,
// seed, final, history, quality_history}), in any order. Groups them by
// variant (plan order, seeds ascending), summarises over seeds, and adds the
// precision table from `run_dir`'s captured pre-activations.
nlohmann::json AssembleResults(nlohmann::json meta, std::vector<nlohmann::json> records,
                               const std::filesystem::path& run_dir);

struct MergeOptions {
  std::vector<std::string> inputs;  // run folders (each with results.json)
  std::string out;                  // the merged run folder
  bool allow_partial = false;       // merge even when runs or shards are missing
};

// Checks that the inputs are parts of one study (the same lab version,
// preset, data, models and settings; no run twice; no shard or run missing
// unless allow_partial), then copies the runs' files into `out` and returns
// the merged results.json contents. Throws std::runtime_error with one line
// before writing anything when the inputs do not fit together.
nlohmann::json MergeResults(const MergeOptions& options);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_MERGE_H_

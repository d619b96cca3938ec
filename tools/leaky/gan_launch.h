// `leaky gan` spread over processes: the options as given, the command line
// of one shard, local worker processes (--jobs) and Slurm job arrays
// (--slurm). Each shard writes <run>/shards/shard-K-of-N; `leaky gan merge`
// combines them into <run>.
#ifndef LEAKY_CLI_GAN_LAUNCH_H_
#define LEAKY_CLI_GAN_LAUNCH_H_

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "config.h"
#include "records.h"

namespace CLI {
class App;
}

namespace leaky::cli {

// `leaky gan`'s options as the user gave them (empty or 0: the preset's).
struct GanOptions {
  std::string preset = "default", data, acts, layers, norm, base = "lrelu:0.2", name,
              out = "runs", data_dir, shard, slurm_args;
  std::string init = "dcgan", loss = "non-saturating";
  int steps = 0, seeds = 0, first_seed = 0, log_every = 0, threads = 0, samples = 0, jobs = 1,
      width = 1, checkpoint_every = 200;
  bool no_speed_check = false, slurm = false, slurm_dry_run = false, force = false,
       spectral_norm = false;
};

// Declares `leaky gan`'s options on `cmd`, filling `o`.
void AddGanOptions(CLI::App* cmd, GanOptions* o);

// The study the options describe (the preset, then what was given); throws
// std::invalid_argument with one line on options that do not fit together.
gan::LabConfig MakeConfig(const GanOptions& o);

// Where the images are when --data-dir is not given: for MNIST
// $LEAKY_DATA_DIR, else the checkout's data/mnist (scripts/fetch_mnist.sh's
// default); for Fashion-MNIST the checkout's data/fashion-mnist
// (scripts/fetch_fashion_mnist.sh's). From any working directory.
std::string DefaultDataDir(gan::Dataset data = gan::Dataset::kMnist);

// The folder of shard K of N inside a run folder.
std::filesystem::path ShardDir(const std::filesystem::path& run_dir, const std::string& k, int n);

// The arguments after the program name that run shard `k` (a number, or a
// shell word such as "${SLURM_ARRAY_TASK_ID}") of `n` of this study at
// `threads` torch threads into ShardDir; paths made absolute.
std::vector<std::string> ShardArgs(const GanOptions& o, const gan::LabConfig& c,
                                   const std::string& k, int n, int threads);

// Writes results.json and report.html into `dir` and prints a summary line
// per variant.
void WriteResults(const gan::Results& results, const std::filesystem::path& dir);

// --jobs J: J worker processes of this program, one shard each, their
// progress shown together; then the merge into the run folder. A SIGINT
// (`stop`) is passed on to the workers, and what finished is merged.
// Returns the exit status (130 when stopped).
int RunWorkers(const GanOptions& o, const gan::LabConfig& c, const std::atomic<bool>& stop);

// --slurm: a job array (one task per shard) and a merge job depending on
// it (afterok), submitted with sbatch; --slurm-dry-run prints them instead.
int SubmitSlurm(const GanOptions& o, const gan::LabConfig& c);

}  // namespace leaky::cli

#endif  // LEAKY_CLI_GAN_LAUNCH_H_

// `leaky gan --slurm`: the study as a Slurm job array (one task per shard)
// and a merge job that runs when every task succeeded (afterok).
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "gan_launch.h"

extern char** environ;

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

namespace fs = std::filesystem;

// Seconds a Slurm command may take before the controller counts as not
// answering (sbatch retries for a while on its own).
constexpr const char* kCommandTimeout = "60";
constexpr const char* kTaskId = "${SLURM_ARRAY_TASK_ID}";

struct Outcome {
  int status = -1;
  std::string out, err;
};

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `args` (under `timeout`), collecting stdout and stderr.
Outcome Run(const std::vector<std::string>& command) {
  std::vector<std::string> args = {"timeout", kCommandTimeout};
  for (const std::string& word : command) args.push_back(word);
  char out_name[] = "/tmp/leaky-slurm-XXXXXX", err_name[] = "/tmp/leaky-slurm-XXXXXX";
  const int out_fd = mkstemp(out_name), err_fd = mkstemp(err_name);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  Outcome o;
  pid_t pid;
  if (posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ) == 0) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    o.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  posix_spawn_file_actions_destroy(&actions);
  close(out_fd), close(err_fd);
  o.out = ReadAll(out_name), o.err = ReadAll(err_name);
  unlink(out_name), unlink(err_name);
  return o;
}

std::string FirstLine(const Outcome& o) {
  std::string text = o.err.empty() ? o.out : o.err;
  text = text.substr(0, text.find('\n'));
  if (o.status == 124) return "no answer within " + std::string(kCommandTimeout) + " s";
  return text.empty() ? "exit status " + std::to_string(o.status) : text;
}

bool OnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && access((fs::path(dir) / program).c_str(), X_OK) == 0) return true;
  }
  return false;
}

// A word for the shell: as it is when it is plain; else in double quotes,
// with the array task's id left for the shell to expand.
std::string Quote(const std::string& word) {
  if (word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./:=,+@%-") ==
      std::string::npos) {
    return word;
  }
  std::string out = "\"";
  for (size_t i = 0; i < word.size(); ++i) {
    if (word.compare(i, std::string(kTaskId).size(), kTaskId) == 0) {
      out += kTaskId;
      i += std::string(kTaskId).size() - 1;
      continue;
    }
    if (word[i] == '"' || word[i] == '\\' || word[i] == '$' || word[i] == '`') out += '\\';
    out += word[i];
  }
  return out + "\"";
}

std::string Command(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line += ' ';
    line += Quote(w);
  }
  return line;
}

std::vector<std::string> Words(const std::string& text) {
  std::vector<std::string> words;
  std::stringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The job id in `sbatch --parsable`'s answer ("123" or "123;cluster").
std::string JobId(const std::string& answer) {
  const std::string id = answer.substr(0, answer.find_first_of(";\n"));
  if (id.empty() || id.find_first_not_of("0123456789") != std::string::npos) return "";
  return id;
}

}  // namespace

int SubmitSlurm(const GanOptions& o, const gan::LabConfig& c) {
  const int runs = static_cast<int>(gan::PlannedRuns(c).size());
  const int count = o.jobs > 1 ? std::min(o.jobs, runs) : runs;
  const int threads = o.threads > 0 ? o.threads : 1;
  const fs::path run_dir = fs::absolute(fs::path(c.out_dir) / c.name);
  const fs::path slurm_dir = run_dir / "slurm";
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  const std::string n = std::to_string(count);

  std::vector<std::string> task = {exe};
  for (const std::string& a : ShardArgs(o, c, kTaskId, count, threads)) task.push_back(a);
  std::vector<std::string> merge = {exe, "gan", "merge"};
  for (int k = 1; k <= count; ++k) merge.push_back(ShardDir(run_dir, std::to_string(k), count).string());
  merge.insert(merge.end(), {"--out", run_dir.string()});

  const std::string array_script =
      "#!/bin/bash\n"
      "# leaky gan " + c.name + ": one array task per shard (" + std::to_string(runs) +
      " runs in " + n + " shards)\n"
      "#SBATCH --job-name=leaky-gan-" + c.name + "\n"
      "#SBATCH --array=1-" + n + "\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=" + std::to_string(threads) + "\n"
      "#SBATCH --output=" + (slurm_dir / ("shard-%a-of-" + n + ".out")).string() + "\n"
      "# Requeued (preempted, a node lost), a task runs the same command again:\n"
      "# the shard resumes from its runs' checkpoints (SIGTERM saves them).\n"
      "#SBATCH --requeue\n"
      "#SBATCH --open-mode=append\n"
      "exec " + Command(task) + "\n";
  const std::string merge_script =
      "#!/bin/bash\n"
      "# leaky gan " + c.name + ": merges the shards once every array task succeeded\n"
      "#SBATCH --job-name=leaky-gan-" + c.name + "-merge\n"
      "#SBATCH --ntasks=1\n"
      "#SBATCH --cpus-per-task=1\n"
      "#SBATCH --output=" + (slurm_dir / "merge.out").string() + "\n"
      "exec " + Command(merge) + "\n";
  const std::vector<std::string> extra = Words(o.slurm_args);
  std::vector<std::string> submit_array = {"sbatch", "--parsable"};
  submit_array.insert(submit_array.end(), extra.begin(), extra.end());
  submit_array.push_back((slurm_dir / "array.sh").string());
  std::vector<std::string> submit_merge = {"sbatch", "--parsable", "--dependency=afterok:ARRAY_JOB_ID",
                                           "--kill-on-invalid-dep=yes"};
  submit_merge.insert(submit_merge.end(), extra.begin(), extra.end());
  submit_merge.push_back((slurm_dir / "merge.sh").string());

  if (o.slurm_dry_run) {
    std::printf("# %s\n%s\n# %s\n%s\n# submitted with:\n%s\n%s\n",
                (slurm_dir / "array.sh").string().c_str(), array_script.c_str(),
                (slurm_dir / "merge.sh").string().c_str(), merge_script.c_str(),
                Command(submit_array).c_str(), Command(submit_merge).c_str());
    return 0;
  }
  if (!OnPath("sbatch")) {
    throw std::runtime_error("--slurm: sbatch is not on PATH (is Slurm installed? "
                             "--slurm-dry-run prints the scripts)");
  }
  const Outcome ping = Run({"scontrol", "ping"});
  if (ping.status != 0 || ping.out.find("is UP") == std::string::npos) {
    throw std::runtime_error("--slurm: the Slurm controller does not answer (scontrol ping: " +
                             FirstLine(ping) + ")");
  }
  fs::create_directories(slurm_dir);
  std::ofstream(slurm_dir / "array.sh") << array_script;
  std::ofstream(slurm_dir / "merge.sh") << merge_script;
  const Outcome array = Run(submit_array);
  const std::string array_id = JobId(array.out);
  if (array.status != 0 || array_id.empty()) {
    throw std::runtime_error("--slurm: sbatch refused the job array: " + FirstLine(array));
  }
  submit_merge[2] = "--dependency=afterok:" + array_id;
  const Outcome merged = Run(submit_merge);
  const std::string merge_id = JobId(merged.out);
  if (merged.status != 0 || merge_id.empty()) {
    Run({"scancel", array_id});
    throw std::runtime_error("--slurm: sbatch refused the merge job (job array " + array_id +
                             " cancelled): " + FirstLine(merged));
  }
  std::printf("submitted job array %s (%d tasks, %d thread(s) each) and merge job %s "
              "(afterok:%s); the study will be in %s (scancel %s %s cancels it)\n",
              array_id.c_str(), count, threads, merge_id.c_str(), array_id.c_str(),
              run_dir.string().c_str(), array_id.c_str(), merge_id.c_str());
  return 0;
}

}  // namespace leaky::cli

// `leaky gan --jobs J`: J worker processes of this program, one shard each,
// their progress shown together, then the merge.
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <deque>
#include <stdexcept>
#include <thread>

#include "gan_launch.h"
#include "lab.h"
#include "merge.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

namespace fs = std::filesystem;

// Lines kept per worker, shown when it fails.
constexpr size_t kTailLines = 6;

struct Worker {
  int index = 0;
  pid_t pid = -1;
  int fd = -1;  // its stdout and stderr
  std::string pending, last;
  std::deque<std::string> tail;
  int status = 0;
};

Worker Spawn(int index, const std::vector<std::string>& args) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("--jobs: cannot make a pipe for a worker");
  std::vector<char*> argv;
  std::string program = "leaky";
  argv.push_back(program.data());
  std::vector<std::string> copy = args;
  for (std::string& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("--jobs: cannot start a worker (fork failed)");
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    dup2(fds[1], STDERR_FILENO);
    close(fds[0]);
    close(fds[1]);
    execv("/proc/self/exe", argv.data());
    std::fprintf(stderr, "cannot run /proc/self/exe\n");
    _exit(127);
  }
  close(fds[1]);
  Worker w;
  w.index = index;
  w.pid = pid;
  w.fd = fds[0];
  return w;
}

// Reads what a worker wrote; false at its end.
bool Drain(Worker& w, bool terminal, int count) {
  char buffer[4096];
  const ssize_t got = read(w.fd, buffer, sizeof(buffer));
  if (got < 0 && errno == EINTR) return true;
  if (got <= 0) return false;
  w.pending.append(buffer, static_cast<size_t>(got));
  for (size_t end; (end = w.pending.find('\n')) != std::string::npos;) {
    std::string line = w.pending.substr(0, end);
    w.pending.erase(0, end + 1);
    if (line.empty()) continue;
    if (!terminal) std::fprintf(stderr, "worker %d/%d: %s\n", w.index, count, line.c_str());
    w.last = line;
    w.tail.push_back(line);
    if (w.tail.size() > kTailLines) w.tail.pop_front();
  }
  return true;
}

// On a terminal: one line per worker, redrawn in place.
void Draw(const std::vector<Worker>& workers, bool redraw) {
  if (redraw) std::fprintf(stderr, "\x1b[%zuA", workers.size());
  for (const Worker& w : workers) {
    std::string shown = w.fd < 0 ? "finished" : w.last;
    if (shown.size() > 110) shown.resize(110);
    std::fprintf(stderr, "\rworker %d: %s\x1b[K\n", w.index, shown.c_str());
  }
}

bool Stopped(int status) {
  return (WIFEXITED(status) && WEXITSTATUS(status) == 130) ||
         (WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
}

}  // namespace

int RunWorkers(const GanOptions& o, const gan::LabConfig& c, const std::atomic<bool>& stop) {
  // No more workers than runs: a worker without a run still loads the data.
  const size_t runs = gan::PlannedRuns(c).size();
  const int count = static_cast<int>(std::min(static_cast<size_t>(o.jobs), std::max<size_t>(runs, 1)));
  if (count < o.jobs) {
    std::fprintf(stderr, "gan: --jobs %d, but the study has %zu run(s): %d worker(s)\n", o.jobs, runs,
                 count);
  }
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = o.threads > 0 ? o.threads : std::max(1, cores / count);
  const fs::path run_dir = fs::absolute(fs::path(c.out_dir) / c.name);
  // The study's folder: the same study resumes (each worker its shard's
  // finished runs and checkpoints), another is refused unless --force.
  gan::PrepareRunFolder(c, run_dir);
  fs::create_directories(run_dir / "shards");
  std::fprintf(stderr, "gan: %d worker(s), %d thread(s) each, shards in %s\n", count, threads,
               (run_dir / "shards").string().c_str());
  std::vector<Worker> workers;
  for (int k = 1; k <= count; ++k) {
    workers.push_back(Spawn(k, ShardArgs(o, c, std::to_string(k), count, threads)));
  }
  bool forwarded = false, drawn = false;
  for (;;) {
    if (stop && !forwarded) {
      for (const Worker& w : workers) {
        if (w.fd >= 0) kill(w.pid, SIGINT);
      }
      forwarded = true;
    }
    std::vector<pollfd> fds;
    for (const Worker& w : workers) {
      if (w.fd >= 0) fds.push_back({w.fd, POLLIN, 0});
    }
    if (fds.empty()) break;
    if (poll(fds.data(), fds.size(), 250) < 0 && errno != EINTR) break;
    for (Worker& w : workers) {
      const auto it = std::find_if(fds.begin(), fds.end(), [&](const pollfd& p) { return p.fd == w.fd; });
      if (it == fds.end() || it->revents == 0) continue;
      if (!Drain(w, c.terminal, count)) {
        close(w.fd);
        w.fd = -1;
        while (waitpid(w.pid, &w.status, 0) < 0 && errno == EINTR) {
        }
      }
    }
    if (c.terminal) {
      Draw(workers, drawn);
      drawn = true;
    }
  }
  bool failed = false;
  gan::MergeOptions merge;
  merge.out = run_dir.string();
  for (const Worker& w : workers) {
    const bool ok = WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0;
    if (!ok && !Stopped(w.status)) {
      failed = true;
      std::fprintf(stderr, "gan: worker %d/%d failed (%s %d); its last lines:\n", w.index, count,
                   WIFEXITED(w.status) ? "exit status" : "signal",
                   WIFEXITED(w.status) ? WEXITSTATUS(w.status) : WTERMSIG(w.status));
      for (const std::string& line : w.tail) std::fprintf(stderr, "  %s\n", line.c_str());
    }
    const fs::path shard = ShardDir(run_dir, std::to_string(w.index), count);
    if (fs::exists(shard / "results.json")) merge.inputs.push_back(shard.string());
  }
  merge.allow_partial = stop || failed;
  if (merge.inputs.empty() && stop) {
    std::fprintf(stderr, "gan: stopped before any run finished; the same command resumes them\n");
    return 130;
  }
  if (merge.inputs.empty()) throw std::runtime_error("--jobs: no worker wrote its results");
  gan::Results merged;
  try {
    merged = gan::MergeResults(merge);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(std::string("merging the workers' shards: ") + e.what());
  }
  WriteResults(merged, run_dir);
  return stop ? 130 : failed ? 1 : 0;
}

}  // namespace leaky::cli

// leaky-gan: the GAN lab's commands of `leaky` (gan, precision), which
// `leaky` runs with its own arguments. A program of their own because they
// link LibTorch, whose loading took 0.67 s of every `leaky` command's start
// on this project's 2-core machine (docs/gan-lab.md); the lab's worker
// processes and Slurm tasks run this program again.
#include <CLI/CLI.hpp>
#include <functional>

#include "app.h"
#include "commands.h"
#include "leaky/leaky.h"

int main(int argc, char** argv) {
  CLI::App app{"leaky: exact, tiled, multi-core LeakyReLU operators (the GAN lab's commands)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", leaky_version());
  std::function<int()> run;
  leaky::cli::AddGanCommand(app, run);
  leaky::cli::AddPrecisionCommand(app, run);
  return leaky::cli::RunApp(app, run, argc, argv);
}

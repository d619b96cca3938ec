// `leaky`: the toolkit's commands. The GAN lab's (gan, precision) run in
// leaky-gan beside it, so that only they pay for loading LibTorch (0.67 s of
// every command's start when this program linked it).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "app.h"
#include "commands.h"
#include "leaky/leaky.h"

int main(int argc, char** argv) {
  CLI::App app{"leaky: exact, tiled, multi-core LeakyReLU operators"};
  app.require_subcommand(1);
  app.set_version_flag("--version", leaky_version());
  std::function<int()> run;
  leaky::cli::AddDemoCommand(app, run);
  leaky::cli::AddBenchCommand(app, run);
  leaky::cli::AddPlanCommand(app, run);
  leaky::cli::AddGoldenCommand(app, run);
  leaky::cli::AddCheckCommand(app, run);
#ifdef LEAKY_WITH_OPENCL
  leaky::cli::AddDeviceCommand(app, run);
#endif
#ifdef LEAKY_WITH_GAN
  // Listed here (`leaky --help`), run by leaky-gan with the same arguments.
  app.add_subcommand("gan", leaky::cli::kGanSummary);
  app.add_subcommand("precision", leaky::cli::kPrecisionSummary);
  if (argc > 1 && (std::string(argv[1]) == "gan" || std::string(argv[1]) == "precision")) {
    const std::string lab = leaky::cli::SelfDirectory() + "/leaky-gan";
    execv(lab.c_str(), argv);
    return leaky::cli::Unusable(
        app, "cannot run the GAN lab's program " + lab + ": `make build` builds it beside leaky");
  }
#endif
  // Commands of the full build that this one was configured without: said
  // with the command that builds them, not as unknown.
  struct Absent {
    const char* name;
    const char* what;
    const char* how;
  };
  const Absent absent[] = {
#ifndef LEAKY_WITH_OPENCL
      {"device", "the OpenCL device backend",
       "`make build` builds it (its packages: scripts/bootstrap.sh device)"},
#endif
#ifndef LEAKY_WITH_GAN
      {"gan", "the GAN lab", "`make demo` or `make build` builds it (LibTorch: scripts/bootstrap.sh demo)"},
      {"precision", "the GAN lab's f16 precision table", "`make demo` or `make build` builds it"},
#endif
      {nullptr, nullptr, nullptr}};
  for (const Absent& a : absent) {
    if (a.name != nullptr && argc > 1 && std::string(argv[1]) == a.name) {
      return leaky::cli::Unusable(app, "this build has no '" + std::string(a.name) + "' command (" +
                                           a.what + "): " + a.how);
    }
  }
  return leaky::cli::RunApp(app, run, argc, argv);
}

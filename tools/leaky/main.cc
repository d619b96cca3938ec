#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>

#include "commands.h"
#include "leaky/leaky.h"

int main(int argc, char** argv) {
  CLI::App app{"leaky: exact, tiled, multi-core LeakyReLU operators"};
  app.require_subcommand(1);
  app.set_version_flag("--version", leaky_version());
  std::function<int()> run;
  leaky::tools::AddDemoCommand(app, run);
  leaky::tools::AddBenchCommand(app, run);
  leaky::tools::AddPlanCommand(app, run);
  leaky::tools::AddGoldenCommand(app, run);
  leaky::tools::AddCheckCommand(app, run);
#ifdef LEAKY_WITH_OPENCL
  leaky::tools::AddDeviceCommand(app, run);
#endif
#ifdef LEAKY_WITH_GAN
  leaky::tools::AddGanCommand(app, run);
  leaky::tools::AddPrecisionCommand(app, run);
#endif
  // Exit status: 0 success, 1 a verdict of failure (`leaky check` found a
  // mismatch), 2 unusable input or arguments.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leaky: %s\n", e.what());
    return 2;
  }
}

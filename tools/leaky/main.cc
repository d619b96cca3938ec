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
  CLI11_PARSE(app, argc, argv);
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "leaky: %s\n", e.what());
    return 1;
  }
}

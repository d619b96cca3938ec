#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "leaky/leaky.h"

namespace {

// Unusable input or arguments: exit 2 with one line on stderr, "leaky
// COMMAND: message", whatever failed (a CLI11 parse error, a check of
// cli_checks.h, a file the command read). A command asked for JSON (its
// --json flag) also prints {"error": message} on stdout, so a script reading
// stdout always gets a JSON object.
int Unusable(const CLI::App& app, std::string message) {
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  while (!message.empty() && message.back() == ' ') message.pop_back();
  // The subcommands given, outermost first, whether or not parsing finished.
  std::string command_line = "leaky";
  const CLI::App* command = &app;
  for (auto given = command->get_subcommands(); !given.empty();
       given = command->get_subcommands()) {
    command = given.front();
    command_line += " " + command->get_name();
  }
  std::fprintf(stderr, "%s: %s\n", command_line.c_str(), message.c_str());
  const CLI::Option* json = command->get_option_no_throw("--json");
  if (json != nullptr && json->get_expected_max() == 0 && json->count() > 0) {
    std::printf("%s\n", nlohmann::json{{"error", message}}.dump(2).c_str());
  }
  return 2;
}

}  // namespace

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
  // mismatch), 2 unusable input or arguments (one line: Unusable).
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return Unusable(app, e.what());
  }
  try {
    return run();
  } catch (const std::exception& e) {
    return Unusable(app, e.what());
  }
}

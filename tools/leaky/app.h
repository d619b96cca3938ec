// What both programs of the command line share (`leaky`, and `leaky-gan`,
// which runs the GAN lab's commands for it): parsing, the one-line errors
// and exit statuses, and where the program is.
#ifndef LEAKY_CLI_APP_H_
#define LEAKY_CLI_APP_H_

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

namespace leaky::cli {

// Parses the command line and runs the command `run` was set to. Exit
// status: 0 success, 1 a verdict of failure (`leaky check` found a
// mismatch), 2 unusable input or arguments (one line on stderr, "leaky
// COMMAND: message"; a command asked for --json also prints {"error": ...}).
int RunApp(CLI::App& app, const std::function<int()>& run, int argc, char** argv);

// Exit 2 with `message` as that one line, for what fails before parsing.
int Unusable(const CLI::App& app, std::string message);

// The folder of the running program (its helpers, leaky-bench and
// leaky-gan, sit beside it); "." if it cannot be read.
std::string SelfDirectory();

}  // namespace leaky::cli

#endif  // LEAKY_CLI_APP_H_

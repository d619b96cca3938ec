#include "app.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace leaky::cli {
namespace {

// The innermost command the parse reached ("leaky gan merge" -> merge).
const CLI::App* Innermost(const CLI::App& app) {
  const CLI::App* command = &app;
  for (auto given = command->get_subcommands(); !given.empty();
       given = command->get_subcommands()) {
    command = given.front();
  }
  return command;
}

// Edit distance, for "did you mean".
size_t Distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// " (did you mean X?)" for the nearest of `names` within 2 edits, or "".
std::string Nearest(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& name : names) {
    const size_t d = Distance(word, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

// CLI11's words for a parse error, in the user's: an unknown command or
// option named, with the nearest one; a missing command with the list.
std::string ParseMessage(const CLI::App& app, const CLI::ParseError& e,
                         const std::vector<std::string>& args) {
  const CLI::App* command = Innermost(app);
  std::vector<std::string> commands;
  for (const CLI::App* sub : command->get_subcommands({})) commands.push_back(sub->get_name());
  if (dynamic_cast<const CLI::RequiredError*>(&e) && !commands.empty() &&
      std::string(e.what()).find("subcommand") != std::string::npos) {
    std::string list;
    for (const std::string& c : commands) list += (list.empty() ? "" : ", ") + c;
    // The first word after the command's own name that is not an option.
    bool after = command == &app;
    for (const std::string& a : args) {
      if (!after) {
        after = a == command->get_name();
        continue;
      }
      if (!a.empty() && a[0] != '-') {
        return "unknown command '" + a + "'" + Nearest(a, commands) + "; the commands: " + list;
      }
    }
    return "a command is required: one of " + list;
  }
  // A missing positional argument, named by its description ("give the run
  // folders, ...") rather than its internal name ("dirs is required").
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    const std::string what = e.what(), tail = " is required";
    if (what.size() > tail.size() && what[0] != '-' &&
        what.compare(what.size() - tail.size(), tail.size(), tail) == 0) {
      const std::string name = what.substr(0, what.size() - tail.size());
      for (const CLI::Option* o : command->get_options()) {
        if (!o->get_positional() || o->get_name() != name) continue;
        std::string d = o->get_description();
        if (!d.empty()) d[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(d[0])));
        return "give " + std::string(d.rfind("the ", 0) == 0 ? "" : "the ") + d;
      }
    }
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> options;
    for (const CLI::Option* o : command->get_options()) {
      for (const std::string& name : o->get_lnames()) options.push_back("--" + name);
    }
    for (const std::string& a : command->remaining()) {
      if (a.size() > 1 && a[0] == '-') {
        const std::string name = a.substr(0, a.find('='));
        return "unknown option " + name + Nearest(name, options) + " (--help lists them)";
      }
    }
    const std::vector<std::string> rest = command->remaining();
    if (!rest.empty()) return "unexpected argument '" + rest.front() + "'";
  }
  return e.what();
}

}  // namespace

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

int RunApp(CLI::App& app, const std::function<int()>& run, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    return Unusable(app, ParseMessage(app, e, std::vector<std::string>(argv + 1, argv + argc)));
  }
  try {
    return run();
  } catch (const std::exception& e) {
    return Unusable(app, e.what());
  }
}

std::string SelfDirectory() {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string(".") : self.parent_path().string();
}

}  // namespace leaky::cli

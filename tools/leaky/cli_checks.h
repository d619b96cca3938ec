// Argument checks for the `leaky` CLI's options that fail in plain words, in
// one line that names the option: "--elems must be at least 1, not 0".
// CLI11's own validators say "Value 0 not in range 0.000000 to 1797...", a
// 310-digit bound, let "-5" wrap around in an unsigned option (strtoull
// accepts the sign) and let NaN through every comparison of CLI::Range.
// Every subcommand uses these, so a bad value is refused before anything
// runs or is written; main.cc prints the UsageError as `leaky COMMAND: ...`.
#ifndef LEAKY_CLI_CLI_CHECKS_H_
#define LEAKY_CLI_CLI_CHECKS_H_

#include <CLI/CLI.hpp>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace leaky::cli {

// Unusable arguments: exit 2 with this one line. Thrown from a check below it
// passes CLI11's own "NAME: " prefix by (CLI11 catches only its
// ValidationError around a check), so each message names its option itself.
class UsageError : public CLI::ParseError {
 public:
  explicit UsageError(std::string message)
      : CLI::ParseError("UsageError", std::move(message), CLI::ExitCodes::ValidationError) {}
};

namespace cli_checks_detail {

inline std::string Number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

inline const char* SkipSpace(const std::string& text) {
  const char* at = text.c_str();
  while (std::isspace(static_cast<unsigned char>(*at))) ++at;
  return at;
}

}  // namespace cli_checks_detail

// `option` takes a whole number from `low` to `high`. The text is read as
// CLI11 then converts it (strtoll / strtoull, base 0), so the value checked
// is the value stored; a minus sign is checked as such, never wrapped.
template <class T>
CLI::Option* WholeNumber(CLI::Option* option, T low, T high = std::numeric_limits<T>::max()) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  const std::string name = option->get_name();
  const std::string range = high == std::numeric_limits<T>::max()
                                ? ">= " + std::to_string(low)
                                : "in [" + std::to_string(low) + " - " + std::to_string(high) + "]";
  option->check(CLI::Validator(
      [name, low, high](std::string& text) -> std::string {
        const char* begin = cli_checks_detail::SkipSpace(text);
        char* end = nullptr;
        errno = 0;
        bool below = false, above = false;
        if (*begin == '-') {
          const long long value = std::strtoll(begin, &end, 0);
          below = errno == ERANGE || std::cmp_less(value, low);
          above = !below && std::cmp_greater(value, high);
        } else {
          const unsigned long long value = std::strtoull(begin, &end, 0);
          above = errno == ERANGE || std::cmp_greater(value, high);
          below = !above && std::cmp_less(value, low);
        }
        if (end == begin || *end != '\0') {
          throw UsageError(name + " must be a whole number, not '" + text + "'");
        }
        if (below) {
          throw UsageError(name + " must be at least " + std::to_string(low) + ", not " + text);
        }
        if (above) {
          throw UsageError(name + " must be at most " + std::to_string(high) + ", not " + text);
        }
        return {};
      },
      range));
  return option;
}

// `option` takes a finite number from `low` to `high` (either may be
// infinite: no bound on that side).
inline CLI::Option* FiniteNumber(CLI::Option* option, double low = -HUGE_VAL,
                                 double high = HUGE_VAL) {
  using cli_checks_detail::Number;
  const std::string name = option->get_name();
  std::string range = "a finite number";
  if (std::isfinite(low) && std::isfinite(high)) {
    range += " from " + Number(low) + " to " + Number(high);
  } else if (std::isfinite(low)) {
    range += " of at least " + Number(low);
  } else if (std::isfinite(high)) {
    range += " of at most " + Number(high);
  }
  option->check(CLI::Validator(
      [name, low, high, range](std::string& text) -> std::string {
        const char* begin = cli_checks_detail::SkipSpace(text);
        char* end = nullptr;
        const double value = std::strtod(begin, &end);
        if (end == begin || *end != '\0' || !std::isfinite(value) || value < low || value > high) {
          throw UsageError(name + " must be " + range + ", not '" + text + "'");
        }
        return {};
      },
      std::isfinite(low) || std::isfinite(high) ? "in [" + Number(low) + " - " + Number(high) + "]"
                                                : "finite"));
  return option;
}

// `option` takes a power of two (an alignment).
inline CLI::Option* PowerOfTwo(CLI::Option* option) {
  const std::string name = option->get_name();
  option->check(CLI::Validator(
      [name](std::string& text) -> std::string {
        const unsigned long long value =
            std::strtoull(cli_checks_detail::SkipSpace(text), nullptr, 0);
        if (value == 0 || (value & (value - 1)) != 0) {
          throw UsageError(name + " must be a power of two, not " + text);
        }
        return {};
      },
      "power of two"));
  return option;
}

// `option` names a file (`what`, e.g. "a golden file") to be read or
// written: a directory there is refused by name, before anything runs.
inline CLI::Option* NotADirectory(CLI::Option* option, const std::string& what) {
  option->check(CLI::Validator(
      [what](std::string& path) -> std::string {
        std::error_code error;
        if (std::filesystem::is_directory(path, error)) {
          throw UsageError(path + " is a directory, not " + what);
        }
        return {};
      },
      ""));
  return option;
}

// `option` names a file to read (`what`, e.g. "an OpenCL C kernel"): one
// that is missing, a directory or unreadable is refused by name, before
// anything runs (a device opened or an output written).
inline CLI::Option* ReadableFile(CLI::Option* option, const std::string& what) {
  const std::string name = option->get_name();
  option->check(CLI::Validator(
      [name, what](std::string& path) -> std::string {
        std::error_code error;
        if (!std::filesystem::exists(path, error)) {
          throw UsageError(name + " " + path + " does not exist");
        }
        if (std::filesystem::is_directory(path, error)) {
          throw UsageError(name + " " + path + " is a directory, not " + what);
        }
        if (std::FILE* file = std::fopen(path.c_str(), "rb")) {
          std::fclose(file);
        } else {
          throw UsageError(name + " " + path + " cannot be read");
        }
        return {};
      },
      ""));
  return option;
}

// `option` names a directory: one to read (`must_exist`: the one `leaky
// golden` wrote) or one to write into (made when missing). A file in its
// place is refused by name, before anything runs.
inline CLI::Option* DirectoryPath(CLI::Option* option, bool must_exist) {
  const std::string name = option->get_name();
  option->check(CLI::Validator(
      [name, must_exist](std::string& path) -> std::string {
        std::error_code error;
        const bool exists = std::filesystem::exists(path, error);
        if (must_exist && !exists) throw UsageError(name + " " + path + " does not exist");
        if (exists && !std::filesystem::is_directory(path, error)) {
          throw UsageError(name + " " + path + " is a file, not a directory");
        }
        return {};
      },
      ""));
  return option;
}

}  // namespace leaky::cli

#endif  // LEAKY_CLI_CLI_CHECKS_H_

#include "provenance.h"

#include <unistd.h>

#include <leaky/leaky.h>

#include <ctime>
#include <fstream>
#include <sstream>

#include "sha256.h"
#include "source_state.h"

namespace leaky::gan {
namespace {

std::string ReadAll(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The SHA-256 of this process's executable, or "unreadable".
std::string BinarySha256() {
  const std::string bytes = ReadAll("/proc/self/exe");
  const std::string hex = bytes.empty() ? "" : toolkit::Sha256Hex(bytes);
  return hex.empty() ? "unreadable" : hex;
}

// The arguments, space-separated (/proc/self/cmdline separates them by NUL).
std::string CommandLine() {
  std::string line = ReadAll("/proc/self/cmdline");
  while (!line.empty() && line.back() == '\0') line.pop_back();
  for (char& c : line) {
    if (c == '\0') c = ' ';
  }
  return line;
}

// "host: CPU model, N cores".
std::string Machine() {
  char host[256] = "unknown";
  gethostname(host, sizeof(host) - 1);
  std::string model = "unknown CPU";
  std::istringstream cpuinfo(ReadAll("/proc/cpuinfo"));
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return std::string(host) + ": " + model + ", " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
         " cores";
}

}  // namespace

std::string UtcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

Provenance CurrentProvenance() {
  return Provenance{LEAKY_SOURCE_COMMIT, LEAKY_SOURCE_CLEAN, leaky_version(), BinarySha256(),
                    CommandLine(),       Machine(),          UtcNow(),        ""};
}

}  // namespace leaky::gan

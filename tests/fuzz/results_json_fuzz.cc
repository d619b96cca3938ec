// libFuzzer target for the GAN lab's results.json readers: what `leaky gan
// claims`, `report`, `table` and `merge` do with a file given to them. The
// bytes become <dir>/results.json; ReadResults must either refuse it with
// one std::runtime_error line naming the file, or return results that the
// claims, the tables and the report then take without crashing (any
// exception they throw must be a one-line std::exception too). Any other
// outcome, crash or sanitizer report is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "claims.h"
#include "report.h"
#include "results_json.h"
#include "tables.h"
#include "vega.h"

namespace {

[[noreturn]] void Bug(const std::string& what) {
  std::fprintf(stderr, "results_json_fuzz: %s\n", what.c_str());
  std::abort();
}

// A message a user may see: one line, none of the standard library's
// internal ones (vector::_M_range_check, basic_string::substr, ...).
void OneLine(const std::exception& e, const char* step) {
  const std::string message = e.what();
  if (message.empty() || message.find('\n') != std::string::npos ||
      message.find("_M_") != std::string::npos || message.find("basic_string") != std::string::npos ||
      message.find("vector::") != std::string::npos || message.find("map::at") != std::string::npos) {
    Bug(std::string(step) + ": a message that is not one line in words: '" + message + "'");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  // One folder per process, removed when it exits (32 were left in /tmp).
  struct Scratch {
    fs::path path = fs::temp_directory_path() / ("results_json_fuzz." + std::to_string(getpid()));
    Scratch() { fs::create_directories(path); }
    ~Scratch() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static const Scratch scratch;
  const fs::path& dir = scratch.path;
  {
    std::ofstream out(dir / "results.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  leaky::gan::Results results;
  try {
    results = leaky::gan::ReadResults(dir);
  } catch (const std::runtime_error& e) {
    OneLine(e, "ReadResults");
    if (std::string(e.what()).find("results.json") == std::string::npos) {
      Bug("ReadResults's refusal does not name the file: " + std::string(e.what()));
    }
    return 0;
  }
  try {
    (void)leaky::gan::MeasureClaims(results);
    if (results.claims) (void)leaky::gan::ClaimsMarkdown(*results.claims);
    (void)leaky::gan::SettleMarkdown(results);
    (void)leaky::gan::CrossingMarkdown({results});
    (void)leaky::gan::RenderReport(results, dir.string(), leaky::toolkit::VegaScripts{});
  } catch (const std::exception& e) {
    OneLine(e, "claims, tables or report");
  }
  return 0;
}

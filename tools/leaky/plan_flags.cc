#include "plan_flags.h"

#include "cli_checks.h"
#include "golden_io.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of

void AddPlanOptions(CLI::App* command, PlanOptions& options, bool with_op) {
  command->add_option("--preset", options.preset,
                      "cpu: this machine as the library plans it; npu: an accelerator-style "
                      "example (48 vector cores, 192 KiB buffer each, 32-byte alignment, "
                      "double buffering - example values, not a product's)")
      ->check(CLI::IsMember({"cpu", "npu"}))
      ->capture_default_str();
  WholeNumber(command->add_option("--cores", options.cores, "Cores (threads) available"), 1u,
              65536u);
  WholeNumber(command->add_option("--buffer-bytes", options.buffer_bytes,
                                  "On-chip buffer per core (bytes)"),
              uint64_t{1}, uint64_t{1} << 40);
  PowerOfTwo(WholeNumber(command->add_option("--align", options.align_bytes,
                                             "Alignment granule (bytes, power of two)"),
                         1u, 65536u));
  WholeNumber(command->add_option("--buffers", options.buffers, "1 = single, 2 = double buffering"),
              1u, 8u);
  if (with_op) {
    command->add_option("--op", options.op, "forward (2 streams) or backward (3 streams)")
        ->check(CLI::IsMember({"forward", "backward"}))
        ->capture_default_str();
  }
  command->add_option("--split", options.split,
                      "granule: the library's (whole alignment granules, the remainder one "
                      "each to the first cores); even: the article's (step = n / cores, the "
                      "last core also takes n % cores); balanced: the remainder elements one "
                      "each to the first cores")
      ->check(CLI::IsMember({"granule", "even", "balanced"}))
      ->capture_default_str();
  WholeNumber(command->add_option("--tile-elems", options.tile_elems,
                                  "Fixed tile length in elements (a kernel's BLOCK_ELEMS) instead "
                                  "of sizing tiles from --buffer-bytes"),
              uint64_t{1}, uint64_t{1} << 40);
  WholeNumber(command->add_option("--address-offset", options.address_offset,
                                  "The output's address modulo --align, in bytes"),
              0u, 65535u);
}

bool PlanOptionsGiven(CLI::App* command) { return !GivenPlanOptions(command).empty(); }

std::vector<std::string> GivenPlanOptions(CLI::App* command) {
  std::vector<std::string> given;
  for (const char* name : {"--preset", "--cores", "--buffer-bytes", "--align", "--buffers",
                           "--split", "--tile-elems", "--address-offset"}) {
    if (command->get_option(name)->count() > 0) given.push_back(name);
  }
  return given;
}

std::optional<toolkit::PlanOptions> RecordedPlan(const nlohmann::json& recorded) {
  if (recorded.is_null()) return std::nullopt;
  try {
    return toolkit::PlanOptions::FromJson(recorded);
  } catch (const std::invalid_argument& e) {
    throw toolkit::GoldenError(std::string("golden.json: malformed plan: ") + e.what());
  }
}

}  // namespace leaky::cli

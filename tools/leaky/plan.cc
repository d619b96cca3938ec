// `leaky plan`: the tiling the library's planner makes for a problem on a
// target, per core, with the checks an operator developer wants before
// writing a device kernel against it.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <stdexcept>

#include "commands.h"
#include "golden_io.h"
#include "plan_options.h"

namespace leaky::tools {
namespace {

using json = nlohmann::json;

struct PlanSettings {
  PlanOptions target;
  uint64_t elements = 0;
  std::vector<uint64_t> shape;
  std::string dtype = "f32";
  bool json_output = false;
  uint32_t show = 64;  // cores printed in the table
};

json BuildReport(const PlanSettings& s) {
  uint64_t n = s.elements;
  if (!s.shape.empty()) {
    n = std::accumulate(s.shape.begin(), s.shape.end(), uint64_t{1},
                        [](uint64_t a, uint64_t b) { return a * b; });
  }
  const leaky_dtype dtype = ParseDtype(s.dtype);
  const leaky_plan_request request = MakePlanRequest(s.target, dtype, n);
  leaky_tiling t;
  if (leaky_plan_tiling(&request, &t) != LEAKY_OK) throw std::invalid_argument(leaky_last_error());

  json cores = json::array();
  uint64_t expected = 0, covered = 0, min_length = UINT64_MAX, max_length = 0;
  bool contiguous = true, aligned = true;
  for (uint32_t core = 0; core < t.cores_used; ++core) {
    uint64_t start, length;
    leaky_tiling_core_range(&t, core, &start, &length);
    contiguous = contiguous && start == expected;
    expected = start + length;
    covered += length;
    min_length = std::min(min_length, length);
    max_length = std::max(max_length, length);
    const uint64_t tiles = leaky_tiling_tile_count(&t, core);
    uint64_t tail_start = 0, tail_length = 0;
    if (tiles > 0) leaky_tiling_tile_range(&t, core, tiles - 1, &tail_start, &tail_length);
    // Every tile (DMA chunk) must start on the alignment grid; only the very
    // first element of the array may sit off it.
    for (uint64_t tile = 0; tile < tiles; tile += std::max<uint64_t>(1, tiles - 1)) {
      uint64_t ts, tl;
      leaky_tiling_tile_range(&t, core, tile, &ts, &tl);
      if (ts != 0 && (ts + t.lead_length) % t.granule_length != 0) aligned = false;
      if (tiles == 1) break;
    }
    cores.push_back({{"core", core}, {"start", start}, {"length", length}, {"tiles", tiles},
                     {"tail_tile_length", tail_length}});
  }
  const uint64_t tile_bytes = t.tile_length * t.element_bytes;
  const uint64_t needed = uint64_t{t.buffer_count} * tile_bytes * t.streams;
  return {{"problem", {{"elements", n}, {"dtype", s.dtype}, {"op", s.target.op},
                       {"streams", t.streams}}},
          {"target", {{"preset", s.target.preset}, {"cores", request.max_cores},
                      {"buffer_bytes", request.buffer_bytes}, {"align_bytes", request.align_bytes},
                      {"buffers", request.buffer_count}}},
          {"tiling", {{"cores_used", t.cores_used}, {"granule_length", t.granule_length},
                      {"granule_count", t.granule_count}, {"granules_per_core", t.granules_per_core},
                      {"granules_remainder", t.granules_remainder}, {"tile_length", t.tile_length},
                      {"buffer_count", t.buffer_count}, {"stream_stores", t.stream_stores}}},
          {"checks", {{"covered_exactly_once", contiguous && covered == n && expected == n},
                      {"chunks_aligned", aligned},
                      {"load_ratio", min_length == 0 ? json(nullptr)
                                                     : json(static_cast<double>(max_length) /
                                                            static_cast<double>(min_length))},
                      {"buffer_bytes_needed", needed},
                      {"fits_buffer", needed <= request.buffer_bytes},
                      {"idle_cores", request.max_cores - t.cores_used}}},
          {"cores", cores}};
}

int RunPlan(const PlanSettings& s) {
  const json report = BuildReport(s);
  if (s.json_output) {
    std::printf("%s\n", report.dump(2).c_str());
    return 0;
  }
  const json& p = report["problem"];
  const json& tg = report["target"];
  const json& t = report["tiling"];
  const json& c = report["checks"];
  std::printf("problem: %llu x %s, %s (%d streams)\n", p["elements"].get<unsigned long long>(),
              s.dtype.c_str(), s.target.op.c_str(), p["streams"].get<int>());
  std::printf("target:  %s preset, %u cores, %llu-byte buffer per core, %u-byte alignment, %u "
              "buffer(s)\n",
              s.target.preset.c_str(), tg["cores"].get<unsigned>(),
              tg["buffer_bytes"].get<unsigned long long>(), tg["align_bytes"].get<unsigned>(),
              tg["buffers"].get<unsigned>());
  std::printf("tiling:  %u cores used, granule %llu elements, tile %llu elements, %s stores\n\n",
              t["cores_used"].get<unsigned>(), t["granule_length"].get<unsigned long long>(),
              t["tile_length"].get<unsigned long long>(),
              t["stream_stores"].get<int>() ? "streaming" : "cached");
  std::printf("%6s %14s %14s %10s %14s\n", "core", "start", "length", "tiles", "tail tile");
  const json& cores = report["cores"];
  for (size_t i = 0; i < cores.size(); ++i) {
    if (i == s.show && cores.size() > s.show + 1) {
      std::printf("%6s\n", "...");
      i = cores.size() - 1;
    }
    const json& row = cores[i];
    std::printf("%6u %14llu %14llu %10llu %14llu\n", row["core"].get<unsigned>(),
                row["start"].get<unsigned long long>(), row["length"].get<unsigned long long>(),
                row["tiles"].get<unsigned long long>(),
                row["tail_tile_length"].get<unsigned long long>());
  }
  auto verdict = [](bool ok) { return ok ? "yes" : "NO"; };
  std::printf("\nchecks:\n");
  std::printf("  every element covered exactly once:  %s\n", verdict(c["covered_exactly_once"]));
  std::printf("  every DMA chunk aligned:             %s\n", verdict(c["chunks_aligned"]));
  std::printf("  largest / smallest core load:        %s\n",
              c["load_ratio"].is_null() ? "-" : std::to_string(c["load_ratio"].get<double>()).c_str());
  std::printf("  buffers x tile bytes x streams:      %llu of %llu bytes (%s)\n",
              c["buffer_bytes_needed"].get<unsigned long long>(),
              tg["buffer_bytes"].get<unsigned long long>(),
              c["fits_buffer"].get<bool>() ? "fits" : "DOES NOT FIT");
  std::printf("  idle cores:                          %u\n", c["idle_cores"].get<unsigned>());
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, std::function<int()>& run) {
  auto s = std::make_shared<PlanSettings>();
  auto* command = app.add_subcommand("plan", "Print the tiling the planner makes for a problem");
  auto* elements = command->add_option("--elems", s->elements, "Number of elements");
  auto* shape = command->add_option("--shape", s->shape, "Shape, e.g. --shape 64,128,28,28")
                    ->delimiter(',')->excludes(elements);
  (void)shape;
  command->add_option("--dtype", s->dtype, "f32, f64, f16 or bf16")
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16"}))->capture_default_str();
  command->add_flag("--json", s->json_output, "Print JSON instead of the table");
  AddPlanOptions(command, s->target);
  command->callback([&run, s, elements, command] {
    if (elements->count() == 0 && command->get_option("--shape")->count() == 0) {
      throw CLI::ValidationError("leaky plan", "give --elems N or --shape A,B,...");
    }
    run = [s] { return RunPlan(*s); };
  });
}

}  // namespace leaky::tools

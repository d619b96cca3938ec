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

#include "cli_checks.h"
#include "commands.h"
#include "eight_bit_format.h"
#include "golden_io.h"
#include "layout.h"
#include "plan_flags.h"
#include "timeline.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

using json = nlohmann::json;

struct PlanSettings {
  PlanOptions target;
  uint64_t elements = 0;
  std::vector<uint64_t> shape;
  std::string dtype = "f32";
  bool json_output = false;
  uint32_t show = 64;  // cores printed in the table
  bool timeline = false;
  std::string svg;
  double copy_gbps = 0;      // 0: the preset's example
  double vector_gelems = 0;  // 0: the preset's example
};

// The presets' example rates for the timeline: bytes per ns per core and
// direction, elements per ns per core. Illustrations, not a product's.
double CopyRate(const PlanSettings& s) {
  return s.copy_gbps > 0 ? s.copy_gbps : s.target.preset == "npu" ? 32.0 : 10.0;
}
double VectorRate(const PlanSettings& s) {
  return s.vector_gelems > 0 ? s.vector_gelems : s.target.preset == "npu" ? 64.0 : 16.0;
}

json TimelineJson(const Timeline& t) {
  const CoreTimeline& slowest = t.cores[t.slowest_core];
  return {{"buffers", t.buffers}, {"modelled_ns", t.makespan}, {"slowest_core", t.slowest_core},
          {"serial_ns", slowest.serial}, {"overlap_ns", slowest.serial - slowest.end}};
}

json BuildReport(const PlanSettings& s) {
  uint64_t n = s.elements;
  if (!s.shape.empty()) {
    n = 1;
    for (uint64_t extent : s.shape) {
      if (__builtin_mul_overflow(n, extent, &n)) throw std::invalid_argument("--shape overflows 64 bits");
    }
  }
  // 8-bit data as golden and check plan it: one-byte elements.
  const Layout l = ParseType8(s.dtype) ? MakeByteLayout(s.target, n)
                                       : MakeLayout(s.target, ParseDtype(s.dtype), n);
  const LayoutChecks c = CheckLayout(l);
  json cores = json::array();
  for (uint32_t core = 0; core < l.cores(); ++core) {
    const uint64_t tiles = l.core_length[core] == 0 ? 0 : l.TileCount(core);
    uint64_t tail_start = 0, tail_length = 0;
    if (tiles > 0) l.TileRange(core, tiles - 1, &tail_start, &tail_length);
    cores.push_back({{"core", core}, {"start", l.core_start[core]}, {"length", l.core_length[core]},
                     {"tiles", tiles}, {"tail_tile_length", tail_length}});
  }
  json unaligned = json::array();
  for (const auto& [core, tile] : c.first_unaligned) unaligned.push_back({{"core", core}, {"tile", tile}});
  json report = {
      {"problem", {{"elements", n}, {"dtype", s.dtype}, {"op", s.target.op}, {"streams", l.streams}}},
      {"target", {{"preset", s.target.preset}, {"cores", l.cores_available},
                  {"buffer_bytes", l.buffer_bytes}, {"align_bytes", l.align_bytes},
                  {"buffers", l.buffers}, {"address_offset", l.address_offset}}},
      {"tiling", {{"split", l.split}, {"cores_used", l.cores()}, {"tile_length", l.tile_length},
                  {"tile_source", s.target.tile_elems ? "--tile-elems" : "buffer"}}},
      {"checks", {{"covered_exactly_once", c.covered_exactly_once},
                  {"chunks_aligned", c.unaligned_copies == 0},
                  {"copies", c.copies},
                  {"unaligned_copies", c.unaligned_copies},
                  {"first_unaligned", unaligned},
                  {"load_ratio", c.load_ratio == 0 ? json(nullptr) : json(c.load_ratio)},
                  {"buffer_bytes_needed", c.buffer_bytes_needed},
                  {"fits_buffer", c.fits_buffer},
                  {"idle_cores", c.idle_cores},
                  {"cores_with_fewer_tiles_than_buffers", c.cores_with_fewer_tiles_than_buffers}}},
      {"cores", cores}};
  if (l.split == "granule") {
    report["tiling"]["granule_length"] = l.tiling.granule_length;
    report["tiling"]["stream_stores"] = l.tiling.stream_stores;
  }
  if (s.timeline) {
    // The chosen buffer count's model, and 1 and 2 for the comparison
    // (the chosen one reused when it is 1 or 2).
    const Timeline single = ModelTimeline(l, 1, CopyRate(s), VectorRate(s));
    const Timeline twice = ModelTimeline(l, 2, CopyRate(s), VectorRate(s));
    const Timeline chosen = l.buffers == 1   ? single
                            : l.buffers == 2 ? twice
                                             : ModelTimeline(l, l.buffers, CopyRate(s), VectorRate(s));
    report["timeline"] = TimelineJson(chosen);
    report["timeline"]["copy_gbps"] = CopyRate(s);
    report["timeline"]["vector_gelems"] = VectorRate(s);
    report["timeline"]["one_buffer_ns"] = single.makespan;
    report["timeline"]["two_buffers_ns"] = twice.makespan;
    report["timeline"]["speedup_two_over_one"] =
        twice.makespan > 0 ? single.makespan / twice.makespan : 1.0;
    if (!s.svg.empty()) {
      // TimelineSvg adds the modelled time, in its axis's unit.
      const std::string title = "leaky plan: " + std::to_string(n) + " x " + s.dtype + ", " +
                                l.split + " split, " + std::to_string(l.buffers) + " buffer(s)";
      const std::string svg = TimelineSvg(chosen, title, 16);
      WriteFile(s.svg, svg.data(), svg.size());
    }
  }
  return report;
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
  std::printf("tiling:  %s split, %u cores, tile %llu elements (%s)", t["split"].get<std::string>().c_str(),
              t["cores_used"].get<unsigned>(), t["tile_length"].get<unsigned long long>(),
              t["tile_source"].get<std::string>().c_str());
  if (t.contains("granule_length")) {
    std::printf(", granule %llu elements, %s stores", t["granule_length"].get<unsigned long long>(),
                t["stream_stores"].get<int>() ? "streaming" : "cached");
  }
  std::printf("\n\n%6s %14s %14s %10s %14s\n", "core", "start", "length", "tiles", "tail tile");
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
  std::printf("  every DMA chunk aligned:             %s", verdict(c["chunks_aligned"]));
  if (c["unaligned_copies"].get<uint64_t>() > 0) {
    std::printf(" (%llu of %llu copies off the %u-byte grid, the first core %u tile %llu)",
                c["unaligned_copies"].get<unsigned long long>(), c["copies"].get<unsigned long long>(),
                tg["align_bytes"].get<unsigned>(), c["first_unaligned"][0]["core"].get<unsigned>(),
                c["first_unaligned"][0]["tile"].get<unsigned long long>());
  }
  std::printf("\n  largest / smallest core load:        %s\n",
              c["load_ratio"].is_null() ? "-" : std::to_string(c["load_ratio"].get<double>()).c_str());
  std::printf("  buffers x tile bytes x streams:      %llu of %llu bytes (%s)\n",
              c["buffer_bytes_needed"].get<unsigned long long>(),
              tg["buffer_bytes"].get<unsigned long long>(),
              c["fits_buffer"].get<bool>() ? "fits" : "DOES NOT FIT");
  std::printf("  idle cores:                          %u\n", c["idle_cores"].get<unsigned>());
  const unsigned short_cores = c["cores_with_fewer_tiles_than_buffers"].get<unsigned>();
  if (short_cores > 0) {
    std::printf("  warning: %u core(s) have fewer tiles than the %u buffers: nothing there can "
                "overlap (smaller tiles: --tile-elems or --buffer-bytes)\n",
                short_cores, tg["buffers"].get<unsigned>());
  }
  if (report.contains("timeline")) {
    const json& m = report["timeline"];
    std::printf("\ntimeline (model: %.3g GB/s copy-in and copy-out per core, %.3g G elements/s "
                "compute per core):\n",
                m["copy_gbps"].get<double>(), m["vector_gelems"].get<double>());
    std::printf("  modelled time, %u buffer(s):        %.0f ns (slowest: core %u)\n",
                m["buffers"].get<unsigned>(), m["modelled_ns"].get<double>(),
                m["slowest_core"].get<unsigned>());
    std::printf("  that core with nothing overlapped:   %.0f ns (copy and compute overlap %.0f ns, "
                "%.0f%%)\n",
                m["serial_ns"].get<double>(), m["overlap_ns"].get<double>(),
                m["serial_ns"].get<double>() > 0
                    ? 100 * m["overlap_ns"].get<double>() / m["serial_ns"].get<double>()
                    : 0.0);
    std::printf("  1 buffer: %.0f ns, 2 buffers: %.0f ns, speed-up of 2 over 1: %.2fx\n",
                m["one_buffer_ns"].get<double>(), m["two_buffers_ns"].get<double>(),
                m["speedup_two_over_one"].get<double>());
    if (!s.svg.empty()) std::printf("  chart: %s\n", s.svg.c_str());
  }
  return 0;
}

}  // namespace

void AddPlanCommand(CLI::App& app, std::function<int()>& run) {
  auto s = std::make_shared<PlanSettings>();
  auto* command = app.add_subcommand("plan", "Print the tiling the planner makes for a problem");
  auto* elements =
      WholeNumber(command->add_option("--elems", s->elements, "Number of elements"), uint64_t{1});
  WholeNumber(command->add_option("--shape", s->shape, "Shape, e.g. --shape 64,128,28,28")
                  ->delimiter(',')
                  ->excludes(elements),
              uint64_t{1});
  command->add_option("--dtype", s->dtype, "f32, f64, f16, bf16, or 8-bit: qu8, qs8, fp8_e4m3, fp8_e5m2")
      ->check(CLI::IsMember({"f32", "f64", "f16", "bf16", "qu8", "qs8", "fp8_e4m3", "fp8_e5m2"}))
      ->capture_default_str();
  command->add_flag("--json", s->json_output, "Print JSON instead of the table");
  command->add_flag("--timeline", s->timeline,
                    "Model copy-in, compute and copy-out per core with the buffers (and 1 vs 2)");
  NotADirectory(command->add_option("--svg", s->svg,
                                    "Draw the timeline as an SVG Gantt chart (needs --timeline)"),
                "an SVG file");
  // NaN passed CLI::Range and then fell back to the preset's rate unsaid.
  FiniteNumber(command->add_option("--copy-gbps", s->copy_gbps,
                                   "Timeline: copy bandwidth per core and direction, GB/s (preset "
                                   "example: npu 32, cpu 10)"),
               1e-6, 1e9);
  FiniteNumber(command->add_option("--vector-gelems", s->vector_gelems,
                                   "Timeline: vector throughput per core, G elements/s (npu 64, "
                                   "cpu 16)"),
               1e-6, 1e9);
  AddPlanOptions(command, s->target);
  command->callback([&run, s, elements, command] {
    if (elements->count() == 0 && command->get_option("--shape")->count() == 0) {
      throw UsageError("give --elems N or --shape A,B,...");
    }
    // The timeline's options do nothing without it: refused, not ignored.
    if (!s->timeline) {
      for (const char* name : {"--svg", "--copy-gbps", "--vector-gelems"}) {
        if (command->get_option(name)->count() > 0) {
          throw UsageError(std::string(name) + " needs --timeline");
        }
      }
    }
    run = [s] { return RunPlan(*s); };
  });
}

}  // namespace leaky::cli

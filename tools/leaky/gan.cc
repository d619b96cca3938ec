// `leaky gan` and `leaky precision`: the lab's command line.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "charts.h"
#include "claims.h"
#include "cli_checks.h"
#include "commands.h"
#include "gan_launch.h"
#include "lab.h"
#include "merge.h"
#include "precision.h"
#include "report.h"
#include "results_json.h"
#include "speed_check.h"
#include "tables.h"
#include "vega.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

using leaky::gan::ActivationSpec;

std::atomic<bool> g_stop{false};
extern "C" void OnInterrupt(int) { g_stop = true; }

// A study's label in the tables: its folder's name ("dir/" too).
std::string FolderName(const std::string& dir) {
  std::filesystem::path path(dir);
  if (path.filename().empty()) path = path.parent_path();
  return path.filename().string();
}

// A line per variant of its final values (the mean over seeds; classes and
// modes truncated to whole numbers).
void PrintFinals(const gan::Results& results) {
  if (const auto& c = results.study.classifier) {
    std::printf("  quality classifier: %.2f%% on %lld held-out images; real-vs-real FCD (the floor) %.2f\n",
                100 * c->held_out_accuracy, c->held_out_digits, c->real_fcd_floor);
  }
  for (const gan::VariantResults& v : results.variants) {
    const gan::Final& f = v.final;
    std::printf("  %-16s D loss %.3f  D(x) %.3f  D(G(z)) %.3f  |grad1| %.3g  ", v.plan.name.c_str(),
                f.d_loss, f.d_real, f.d_fake, f.grad_norm_first_layer);
    const gan::Quality& q = f.quality;
    if (q.fcd) {
      std::printf("FCD %.2f  classes %d\n", *q.fcd, static_cast<int>(q.class_coverage.value()));
    } else {
      std::printf("modes %d  HQ %.2f\n", static_cast<int>(q.modes_covered.value()),
                  q.high_quality_share.value());
    }
  }
}

void AddMergeCommand(CLI::App& gan_cmd, std::function<int()>& run) {
  auto* cmd = gan_cmd.add_subcommand(
      "merge", "combine shards (--shard, --jobs, --slurm) or runs of other seeds into one study");
  auto options = std::make_shared<gan::MergeOptions>();
  cmd->add_option("dirs", options->inputs, "run folders, each with its results.json")->required();
  cmd->add_option("--out", options->out, "the merged run folder")->required();
  cmd->add_flag("--allow-partial", options->allow_partial,
                "merge even when runs or shards are missing (the report says which)");
  cmd->callback([options, &run] {
    run = [options] {
      WriteResults(gan::MergeResults(*options), options->out);
      return 0;
    };
  });
}

// `leaky gan claims DIR [DIR...]`: the claims table of a study as Markdown;
// of several studies (setups), one table with a verdict column per setup.
void AddClaimsCommand(CLI::App& gan_cmd, std::function<int()>& run) {
  auto* cmd = gan_cmd.add_subcommand(
      "claims", "the article's claims as measured by a study (or by several setups), as Markdown");
  auto dirs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("dirs", *dirs, "run folders with results.json (several: a column per setup)")
      ->required();
  cmd->callback([dirs, &run] {
    run = [dirs] {
      std::vector<std::pair<std::string, std::vector<gan::Claim>>> setups;
      for (const std::string& dir : *dirs) {
        // Measured again from the runs (not read back), so the table always
        // follows this version's definitions.
        const auto claims = gan::MeasureClaims(gan::ReadResults(dir));
        if (!claims) {
          throw std::runtime_error(dir + "/results.json measures no claims (an MNIST or "
                                   "Fashion-MNIST study with relu and lrelu:0.2 variants does)");
        }
        setups.emplace_back(FolderName(dir), *claims);
      }
      std::printf("%s", setups.size() == 1 ? gan::ClaimsMarkdown(setups[0].second).c_str()
                                           : gan::ClaimsBySetupMarkdown(setups).c_str());
      return 0;
    };
  });
}

gan::Results ReadStudy(const std::string& dir) {
  gan::Results results = gan::ReadResults(dir);
  if (!results.study.images()) {
    throw std::runtime_error(dir + "/results.json is not an image study of the lab (MNIST or "
                             "Fashion-MNIST)");
  }
  return results;
}

// `leaky gan table KIND DIR...`: the studies' registered tables
// (docs/study/PLAN.md: crossing, settle; PLAN-4.md: slopes, long, floors)
// as Markdown.
void AddTableCommand(CLI::App& gan_cmd, std::function<int()>& run) {
  auto* cmd = gan_cmd.add_subcommand(
      "table", "a registered study table as Markdown: crossing (setups side by side), settle "
               "(a long study's windows and final slopes), slopes (a slope sweep), long (a long "
               "study's 2,000-step windows) or floors (each dataset's quality measure)");
  auto kind = std::make_shared<std::string>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("kind", *kind, "crossing, settle, slopes, long or floors")
      ->required()
      ->check(CLI::IsMember({"crossing", "settle", "slopes", "long", "floors"}));
  cmd->add_option("dirs", *dirs, "run folders with results.json")->required();
  cmd->callback([kind, dirs, &run] {
    run = [kind, dirs] {
      std::vector<std::pair<std::string, gan::Results>> studies;
      for (const std::string& dir : *dirs) studies.emplace_back(FolderName(dir), ReadStudy(dir));
      const bool one = *kind == "settle" || *kind == "slopes" || *kind == "long";
      if (one && studies.size() != 1) {
        throw std::invalid_argument("table " + *kind + ": give one study folder");
      }
      std::vector<gan::Results> results;
      for (const auto& study : studies) results.push_back(study.second);
      const std::string md = *kind == "crossing" ? gan::CrossingMarkdown(results)
                             : *kind == "settle" ? gan::SettleMarkdown(results[0])
                             : *kind == "slopes" ? gan::SlopesMarkdown(results[0])
                             : *kind == "long"   ? gan::LongMarkdown(results[0])
                                                 : gan::FloorsMarkdown(studies);
      if (md.empty()) {
        throw std::runtime_error(*kind == "floors" ? "no study has a quality classifier"
                                                   : "the study has no relu and lrelu:0.2 variants");
      }
      std::printf("%s", md.c_str());
      return 0;
    };
  });
}

// `leaky gan chart headline DIR...`: the headline across setups as a
// Vega-Lite spec (JSON, data inline); docs/study/README.md shows it as SVG.
void AddChartCommand(CLI::App& gan_cmd, std::function<int()>& run) {
  auto* cmd = gan_cmd.add_subcommand(
      "chart", "a registered chart as a Vega-Lite spec: headline (final FCD, ReLU minus "
               "LeakyReLU, per setup and slope)");
  auto kind = std::make_shared<std::string>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("kind", *kind, "headline")->required()->check(CLI::IsMember({"headline"}));
  cmd->add_option("dirs", *dirs, "run folders with results.json, one per setup")->required();
  cmd->callback([dirs, &run] {
    run = [dirs] {
      std::vector<std::pair<std::string, gan::Results>> setups;
      for (const std::string& dir : *dirs) setups.emplace_back(FolderName(dir), ReadStudy(dir));
      const nlohmann::json spec = gan::HeadlineChart(setups);
      if (spec["data"]["values"].empty()) {
        throw std::runtime_error("no study has relu and LeakyReLU variants");
      }
      std::printf("%s\n", spec.dump(1).c_str());
      return 0;
    };
  });
}

// `leaky gan report DIR`: report.html written again from DIR/results.json
// (and the sample grids in DIR's variant folders, when there), e.g. after
// the report's layout changed; results.json is only read.
void AddReportCommand(CLI::App& gan_cmd, std::function<int()>& run) {
  auto* cmd = gan_cmd.add_subcommand(
      "report", "write a run folder's report.html again from its results.json");
  auto dir = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  cmd->add_option("dir", *dir, "run folder with results.json")->required();
  NotADirectory(cmd->add_option("--out", *out, "the page to write (default: DIR/report.html)"),
                "an HTML file");
  cmd->callback([dir, out, &run] {
    run = [dir, out] {
      const gan::Results results = gan::ReadResults(*dir);
      const std::string path = out->empty() ? (std::filesystem::path(*dir) / "report.html").string() : *out;
      const toolkit::VegaScripts scripts = toolkit::LoadVegaScripts(toolkit::DefaultVegaDir());
      std::ofstream page(path);
      if (!page) throw std::runtime_error("cannot write " + path);
      page << gan::RenderReport(results, *dir, scripts);
      page.close();
      if (!page) throw std::runtime_error("could not write all of " + path);
      std::printf("wrote %s\n", path.c_str());
      if (!scripts.ok()) std::fprintf(stderr, "%s\n", scripts.missing.c_str());
      return 0;
    };
  });
}

}  // namespace

void WriteResults(const gan::Results& results, const std::filesystem::path& dir) {
  std::ofstream(dir / "results.json") << gan::ToJson(results).dump(1) << "\n";
  // Without the charting scripts the report still has its tables and
  // samples; it and this line say how to fetch them.
  const toolkit::VegaScripts scripts = toolkit::LoadVegaScripts(toolkit::DefaultVegaDir());
  std::ofstream(dir / "report.html") << gan::RenderReport(results, dir.string(), scripts);
  std::printf("wrote %s and %s\n", (dir / "results.json").string().c_str(),
              (dir / "report.html").string().c_str());
  if (!scripts.ok()) std::fprintf(stderr, "%s\n", scripts.missing.c_str());
  PrintFinals(results);
}

void AddGanCommand(CLI::App& app, std::function<int()>& run) {
  auto* cmd = app.add_subcommand("gan", kGanSummary);
  auto o = std::make_shared<GanOptions>();
  AddGanOptions(cmd, o.get());
  AddMergeCommand(*cmd, run);
  AddClaimsCommand(*cmd, run);
  AddTableCommand(*cmd, run);
  AddChartCommand(*cmd, run);
  AddReportCommand(*cmd, run);
  cmd->callback([o, cmd, &run] {
    if (cmd->got_subcommand("merge") || cmd->got_subcommand("claims") ||
        cmd->got_subcommand("table") || cmd->got_subcommand("chart") ||
        cmd->got_subcommand("report")) {
      return;
    }
    run = [o] {
      const gan::LabConfig c = MakeConfig(*o);
      if ((o->jobs > 1 || o->slurm || o->slurm_dry_run) && !o->shard.empty()) {
        throw std::invalid_argument("--shard runs one shard: not with --jobs or --slurm");
      }
      if (o->slurm || o->slurm_dry_run) return SubmitSlurm(*o, c);
      // Ctrl-C, and Slurm's SIGTERM before a requeue or at the time limit:
      // the runs in progress save a checkpoint and the command stops.
      std::signal(SIGINT, OnInterrupt);
      std::signal(SIGTERM, OnInterrupt);
      if (o->jobs > 1) return RunWorkers(*o, c, g_stop);
      gan::Results results = gan::RunLab(c, g_stop);
      // Stopped before any run finished: nothing to summarise (RunLab said
      // which runs it kept checkpoints of).
      if (results.variants.empty()) return g_stop ? 130 : 0;
      // One speed check per study: a shard other than the first skips it.
      if (!o->no_speed_check && !g_stop && c.shard_index == 1) {
        results.study.speed_check = gan::MeasureSpeedCheck(c.data, c.shape, c.batch);
      }
      WriteResults(results, std::filesystem::path(c.out_dir) / c.name);
      return g_stop ? 130 : 0;
    };
  });
}

void AddPrecisionCommand(CLI::App& app, std::function<int()>& run) {
  auto* cmd = app.add_subcommand("precision", kPrecisionSummary);
  auto input = std::make_shared<std::string>();
  auto slope = std::make_shared<double>(0.2);
  auto json_out = std::make_shared<std::string>();
  cmd->add_option("input", *input, "raw little-endian f32 values, e.g. runs/gan-demo/lrelu:0.2/preact_layer2.f32")
      ->required();
  FiniteNumber(cmd->add_option("--slope", *slope, "negative slope"));
  NotADirectory(cmd->add_option("--json", *json_out, "also write the table as JSON"), "a JSON file");
  cmd->callback([=, &run] {
    run = [=] {
      if (std::filesystem::is_directory(*input)) {
        throw UsageError(*input + " is a directory, not a raw f32 file");
      }
      std::ifstream in(*input, std::ios::binary | std::ios::ate);
      if (!in) throw std::runtime_error("cannot read " + *input);
      const auto bytes = static_cast<size_t>(in.tellg());
      if (bytes == 0 || bytes % sizeof(float) != 0) {
        throw std::runtime_error(*input + ": not a raw f32 file (" + std::to_string(bytes) + " bytes)");
      }
      std::vector<float> x(bytes / sizeof(float));
      in.seekg(0);
      in.read(reinterpret_cast<char*>(x.data()), static_cast<std::streamsize>(bytes));
      std::ofstream json;  // opened before the work: an unwritable path fails first
      if (!json_out->empty()) {
        json.open(*json_out);
        if (!json) throw std::runtime_error("cannot write --json " + *json_out);
      }
      const auto rows = gan::MeasurePrecision(x, *slope);
      std::printf("%-32s %10s %10s %12s %12s\n", "format", "negatives", "to zero", "max rel err",
                  "mean rel err");
      for (const auto& r : rows) {
        std::printf("%-32s %10lld %10lld %12.3g %12.3g\n", r.format.c_str(), r.negatives,
                    r.flushed_to_zero, r.max_relative_error, r.mean_relative_error);
      }
      if (json.is_open()) {
        json << gan::ToJson(gan::PrecisionTable{*slope, *input, rows}).dump(1) << "\n";
        json.flush();
        if (!json) throw std::runtime_error("could not write all of --json " + *json_out);
      }
      return 0;
    };
  });
}

}  // namespace leaky::cli

// `leaky gan` and `leaky precision`: the lab's command line.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "claims.h"
#include "cli_checks.h"
#include "commands.h"
#include "gan_launch.h"
#include "lab.h"
#include "merge.h"
#include "models.h"
#include "precision.h"
#include "report.h"
#include "tables.h"

namespace leaky::tools {
namespace {

using leaky::gan::ActivationSpec;
using nlohmann::json;

std::atomic<bool> g_stop{false};
extern "C" void OnInterrupt(int) { g_stop = true; }

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

// A discriminator training step (forward, backward on a real batch) with
// this library's LeakyReLU against torch::nn::LeakyReLU, interleaved.
json SpeedCheck(gan::Dataset data, gan::ModelShape shape, int batch) {
  using gan::Discriminator;
  std::vector<ActivationSpec> ours(4, gan::ParseActivation("lrelu:0.2"));
  std::vector<ActivationSpec> theirs(4, gan::ParseActivation("lrelu:0.2@torch"));
  torch::manual_seed(0);
  Discriminator a(data, ours, false, 0, shape);
  torch::manual_seed(0);
  Discriminator b(data, theirs, false, 0, shape);
  const torch::Tensor x = data == gan::Dataset::kMnist ? torch::randn({batch, 1, 28, 28})
                                                       : torch::randn({batch * 4, 2});
  auto time = [&](Discriminator& d) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) {
      d->zero_grad();
      d->forward(x).sum().backward();
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10;
  };
  time(a), time(b);  // warm-up
  // Paired rounds in alternating order, so drift in the machine's load (it
  // is shared) falls on both sides; the figure is the median of the
  // per-round ratios, with its quartiles as the spread.
  constexpr int kRounds = 25;
  std::vector<double> ta, tb, ratio;
  for (int round = 0; round < kRounds; ++round) {
    double ms_a, ms_b;
    if (round % 2 == 0) {
      ms_a = time(a), ms_b = time(b);
    } else {
      ms_b = time(b), ms_a = time(a);
    }
    ta.push_back(ms_a), tb.push_back(ms_b), ratio.push_back(ms_a / ms_b);
  }
  auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  return {{"leaky_ms", quantile(ta, 0.5)}, {"torch_ms", quantile(tb, 0.5)},
          {"ratio", quantile(ratio, 0.5)},
          {"ratio_quartiles", {quantile(ratio, 0.25), quantile(ratio, 0.75)}},
          {"what", "median over 25 paired rounds (order alternating) of 10 discriminator "
                   "forward+backward steps each, LeakyReLU(0.2) on every hidden layer; ratio = "
                   "this library's step time / torch::nn::LeakyReLU's"}};
}


// The study the options describe (the preset, then what was given).
gan::LabConfig MakeConfig(const GanOptions& o) {
  gan::LabConfig c;
  c.preset = o.preset;
  std::string acts = "relu,lrelu:0.2", layers = "2,4", norm = "none";
  if (o.preset == "default") {
    c.name = "gan-demo";
    c.steps = 800;
  } else if (o.preset == "dcgan-3000") {
    c.name = "dcgan-3000";
    c.steps = 3000;
    c.seeds = 5;
    c.log_every = 25;
    acts = "relu,lrelu:0.2,prelu,elu,rrelu";
    norm = "both";
  } else {
    c.name = "ring8";
    c.data = gan::Dataset::kRing8;
    c.steps = 1000;
    c.samples = 2000;
  }
  if (o.data == "ring8") c.data = gan::Dataset::kRing8, c.samples = 2000;
  if (o.data == "mnist") c.data = gan::Dataset::kMnist;
  if (!o.acts.empty()) acts = o.acts;
  if (!o.layers.empty()) layers = o.layers;
  if (!o.norm.empty()) norm = o.norm;
  if (!o.name.empty()) c.name = o.name;
  if (o.steps > 0) c.steps = o.steps;
  if (o.seeds > 0) c.seeds = o.seeds;
  c.first_seed = o.first_seed;
  if (o.log_every > 0) c.log_every = o.log_every;
  if (o.samples > 0) c.samples = o.samples;
  c.threads = o.threads;
  c.out_dir = o.out;
  c.data_dir = o.data_dir.empty() ? DefaultDataDir() : o.data_dir;
  c.base_act = gan::ParseActivation(o.base);
  c.shape.width = o.width;
  c.shape.init = o.init == "default" ? gan::Init::kDefault : gan::Init::kDcgan;
  if (c.samples < 10) {
    throw std::invalid_argument("--samples " + std::to_string(c.samples) +
                                ": the quality metrics need at least 10 generated samples");
  }
  if (c.data == gan::Dataset::kMnist && c.samples > 1000) {
    throw std::invalid_argument("--samples " + std::to_string(c.samples) +
                                ": at most 1000 on MNIST (two real sets of that size come from "
                                "its 2,000 held-out digits)");
  }
  c.terminal = isatty(STDERR_FILENO) != 0;
  std::vector<int> layer_list;
  if (layers != "all") {
    for (const std::string& l : Split(layers, ',')) {
      if (l.size() != 1 || l[0] < '1' || l[0] > '4') {
        throw std::invalid_argument("--d-act-layers: '" + l + "' is not a layer 1-4 (or 'all')");
      }
      layer_list.push_back(l[0] - '0');
    }
  }
  for (bool bn : {false, true}) {
    if ((bn && norm == "none") || (!bn && norm == "batch")) continue;
    for (const std::string& a : Split(acts, ',')) {
      const gan::ActivationSpec spec = gan::ParseActivation(a);
      // Variants are named as the activation prints ("prelu:0.25" is "prelu").
      gan::Variant v{spec.Name() + (bn ? "+bn" : ""), spec, layer_list, bn};
      for (const gan::Variant& earlier : c.variants) {
        if (earlier.name == v.name) {
          throw std::invalid_argument("--acts: " + a + " is given twice (each variant trains once)");
        }
      }
      c.variants.push_back(v);
    }
  }
  if (c.variants.empty()) throw std::invalid_argument("no variants: give --acts");
  if (!o.shard.empty()) {
    const auto slash = o.shard.find('/');
    char* end = nullptr;
    const long k = std::strtol(o.shard.c_str(), &end, 10);
    const bool k_ok = slash != std::string::npos && end == o.shard.c_str() + slash && slash > 0;
    const long n = k_ok ? std::strtol(o.shard.c_str() + slash + 1, &end, 10) : 0;
    if (!k_ok || *end != '\0' || slash + 1 == o.shard.size() || n < 1 || k < 1 || k > n ||
        n > 100000) {
      throw std::invalid_argument("--shard: '" + o.shard + "' is not K/N with 1 <= K <= N");
    }
    c.shard_index = static_cast<int>(k), c.shard_count = static_cast<int>(n);
  }
  return c;
}

void PrintFinals(const json& results) {
  if (results.contains("classifier")) {
    std::printf("  quality classifier: %.2f%% on %d held-out digits; real-vs-real FCD (the floor) %.2f\n",
                100 * results["classifier"]["held_out_accuracy"].get<double>(),
                results["classifier"]["held_out_digits"].get<int>(),
                results["classifier"]["real_fcd_floor"].get<double>());
  }
  for (const json& v : results["variants"]) {
    const json& f = v["final"];
    std::printf("  %-16s D loss %.3f  D(x) %.3f  D(G(z)) %.3f  |grad1| %.3g  ",
                v["name"].get<std::string>().c_str(), f["d_loss"].get<double>(),
                f["d_real"].get<double>(), f["d_fake"].get<double>(),
                f["grad_norm_first_layer"].get<double>());
    if (f.contains("fcd")) {
      std::printf("FCD %.2f  classes %d\n", f["fcd"].get<double>(), f["class_coverage"].get<int>());
    } else {
      std::printf("modes %d  HQ %.2f\n", f["modes_covered"].get<int>(),
                  f["high_quality_share"].get<double>());
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
      const json results = gan::MergeResults(*options);
      WriteResults(results, options->out);
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
      std::vector<std::pair<std::string, json>> setups;
      for (const std::string& dir : *dirs) {
        std::ifstream in(std::filesystem::path(dir) / "results.json");
        if (!in) throw std::runtime_error(dir + " has no results.json");
        const json results = json::parse(in, nullptr, false);
        // Measured again from the runs (not read back), so the table always
        // follows this version's definitions.
        const json claims = results.is_discarded() || !results.contains("variants")
                                ? json()
                                : gan::MeasureClaims(results);
        if (claims.is_null()) {
          throw std::runtime_error(dir + "/results.json measures no claims (an MNIST study with "
                                   "relu and lrelu:0.2 variants does)");
        }
        std::filesystem::path path(dir);
        if (path.filename().empty()) path = path.parent_path();  // "dir/"
        setups.emplace_back(path.filename().string(), claims);
      }
      std::printf("%s", setups.size() == 1 ? gan::ClaimsMarkdown(setups[0].second).c_str()
                                           : gan::ClaimsBySetupMarkdown(setups).c_str());
      return 0;
    };
  });
}

json ReadStudy(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / "results.json");
  if (!in) throw std::runtime_error(dir + " has no results.json");
  json results = json::parse(in, nullptr, false);
  if (results.is_discarded() || !results.contains("variants") || results["dataset"] != "mnist") {
    throw std::runtime_error(dir + "/results.json is not an MNIST study of the lab");
  }
  return results;
}

// `leaky gan table crossing DIR...` / `leaky gan table settle DIR`: the
// study's registered tables (docs/study/PLAN.md) as Markdown.
void AddTableCommand(CLI::App& gan_cmd, std::function<int()>& run) {
  auto* cmd = gan_cmd.add_subcommand(
      "table", "a registered study table as Markdown: crossing (setups side by side) or settle "
               "(a long study's windows and final slopes)");
  auto kind = std::make_shared<std::string>();
  auto dirs = std::make_shared<std::vector<std::string>>();
  cmd->add_option("kind", *kind, "crossing or settle")
      ->required()
      ->check(CLI::IsMember({"crossing", "settle"}));
  cmd->add_option("dirs", *dirs, "run folders with results.json")->required();
  cmd->callback([kind, dirs, &run] {
    run = [kind, dirs] {
      std::vector<json> studies;
      for (const std::string& dir : *dirs) studies.push_back(ReadStudy(dir));
      if (*kind == "settle" && studies.size() != 1) {
        throw std::invalid_argument("table settle: give one study folder");
      }
      const std::string md =
          *kind == "crossing" ? gan::CrossingMarkdown(studies) : gan::SettleMarkdown(studies[0]);
      if (md.empty()) throw std::runtime_error("the study has no relu and lrelu:0.2 variants");
      std::printf("%s", md.c_str());
      return 0;
    };
  });
}

}  // namespace

std::string DefaultDataDir() {
  if (const char* env = std::getenv("LEAKY_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return LEAKY_SOURCE_DIR "/data/mnist";
}

std::filesystem::path ShardDir(const std::filesystem::path& run_dir, const std::string& k, int n) {
  return run_dir / "shards" / ("shard-" + k + "-of-" + std::to_string(n));
}

std::vector<std::string> ShardArgs(const GanOptions& o, const gan::LabConfig& c,
                                   const std::string& k, int n, int threads) {
  namespace fs = std::filesystem;
  const fs::path run_dir = fs::absolute(fs::path(c.out_dir) / c.name);
  std::vector<std::string> args = {"gan", "--preset", o.preset, "--base-act", o.base};
  auto add = [&](const char* flag, const std::string& value) {
    if (!value.empty()) args.insert(args.end(), {flag, value});
  };
  auto add_number = [&](const char* flag, int value) {
    if (value > 0) args.insert(args.end(), {flag, std::to_string(value)});
  };
  add("--data", o.data);
  add("--acts", o.acts);
  add("--d-act-layers", o.layers);
  add("--d-norm", o.norm);
  add_number("--steps", o.steps);
  add_number("--seeds", o.seeds);
  add_number("--first-seed", o.first_seed);
  add_number("--log-every", o.log_every);
  add_number("--samples", o.samples);
  add_number("--threads", threads);
  add_number("--width", o.width);
  add("--init", o.init);
  add("--data-dir", fs::absolute(c.data_dir).string());
  add("--out", (run_dir / "shards").string());
  add("--name", ShardDir(run_dir, k, n).filename().string());
  add("--shard", k + "/" + std::to_string(n));
  if (!o.speed_check) args.push_back("--no-speed-check");
  return args;
}

void WriteResults(const json& results, const std::filesystem::path& dir) {
  std::ofstream(dir / "results.json") << results.dump(1) << "\n";
  std::ofstream(dir / "report.html") << gan::RenderReport(results, dir.string());
  std::printf("wrote %s and %s\n", (dir / "results.json").string().c_str(),
              (dir / "report.html").string().c_str());
  PrintFinals(results);
}

void AddGanCommand(CLI::App& app, std::function<int()>& run) {
  auto* cmd = app.add_subcommand(
      "gan", "the GAN lab: what ReLU, LeakyReLU and relatives do to a discriminator");
  auto o = std::make_shared<GanOptions>();
  cmd->add_option("--preset", o->preset,
                  "default (MNIST, relu vs lrelu:0.2 at layers 2,4, 1 seed, ~3 min), dcgan-3000 "
                  "(all five activations, both norms, 5 seeds, 3000 steps) or ring8")
      ->check(CLI::IsMember({"default", "dcgan-3000", "ring8"}));
  cmd->add_option("--data", o->data, "mnist or ring8")->check(CLI::IsMember({"mnist", "ring8"}));
  cmd->add_option("--acts", o->acts, "comma list: relu, lrelu:<slope>, prelu, elu, rrelu (@torch: torch's module)");
  cmd->add_option("--d-act-layers", o->layers, "discriminator layers (1-4) that get the activation, or 'all'");
  cmd->add_option("--d-norm", o->norm, "none, batch or both")->check(CLI::IsMember({"none", "batch", "both"}));
  cmd->add_option("--base-act", o->base, "the activation of the other layers");
  WholeNumber(cmd->add_option("--width", o->width,
                              "model size: 1 (D 16/32/64/64, G 64x7x7, latent 64) or 2 (every "
                              "channel doubled, latent 100)"),
              1, 2);
  cmd->add_option("--init", o->init,
                  "dcgan (conv/linear N(0, 0.02), BN N(1, 0.02), by module type) or default "
                  "(LibTorch's)")
      ->check(CLI::IsMember({"dcgan", "default"}));
  WholeNumber(cmd->add_option("--steps", o->steps, "training steps per run"), 1);
  WholeNumber(cmd->add_option("--seeds", o->seeds, "seeds per variant"), 1);
  WholeNumber(cmd->add_option("--first-seed", o->first_seed,
                              "number of the first seed (runs of other seeds can be merged in later)"),
              0);
  WholeNumber(cmd->add_option("--log-every", o->log_every, "steps between measurements"), 1);
  WholeNumber(cmd->add_option("--threads", o->threads,
                              "torch threads (0: all; with --jobs: the cores shared out; with "
                              "--slurm: 1)"),
              0);
  WholeNumber(cmd->add_option("--samples", o->samples, "generated samples for the quality metrics"),
              1);
  cmd->add_option("--name", o->name, "run name: output in <out>/<name>");
  cmd->add_option("--out", o->out, "output root");
  cmd->add_option("--data-dir", o->data_dir,
                  "where scripts/fetch_mnist.sh put the digits (default: $LEAKY_DATA_DIR, else " +
                      DefaultDataDir() + ")");
  cmd->add_flag("!--no-speed-check", o->speed_check, "skip the LeakyReLU step-time comparison");
  cmd->add_option("--shard", o->shard,
                  "K/N: run only the K-th of N slices of the runs, into <out>/<name> (merge them "
                  "with `leaky gan merge`)");
  WholeNumber(cmd->add_option("--jobs", o->jobs, "worker processes (each one shard), merged at the end"),
              1, 256);
  cmd->add_flag("--slurm", o->slurm,
                "submit a Slurm job array (one task per shard: --jobs, default one per run) "
                "and a merge job after it");
  cmd->add_flag("--slurm-dry-run", o->slurm_dry_run, "print the Slurm scripts instead of submitting");
  cmd->add_option("--slurm-args", o->slurm_args,
                  "more sbatch options for both jobs, e.g. \"--partition=gpu --time=2:00:00\"");
  AddMergeCommand(*cmd, run);
  AddClaimsCommand(*cmd, run);
  AddTableCommand(*cmd, run);
  cmd->callback([o, cmd, &run] {
    if (cmd->got_subcommand("merge") || cmd->got_subcommand("claims") ||
        cmd->got_subcommand("table")) {
      return;
    }
    run = [o] {
      const gan::LabConfig c = MakeConfig(*o);
      if ((o->jobs > 1 || o->slurm || o->slurm_dry_run) && !o->shard.empty()) {
        throw std::invalid_argument("--shard runs one shard: not with --jobs or --slurm");
      }
      if (o->slurm || o->slurm_dry_run) return SubmitSlurm(*o, c);
      std::signal(SIGINT, OnInterrupt);
      if (o->jobs > 1) return RunWorkers(*o, c, g_stop);
      json results = gan::RunLab(c, g_stop);
      // One speed check per study: a shard other than the first skips it.
      if (o->speed_check && !g_stop && c.shard_index == 1) {
        results["speed_check"] = SpeedCheck(c.data, c.shape, c.batch);
      }
      WriteResults(results, std::filesystem::path(c.out_dir) / c.name);
      return g_stop ? 130 : 0;
    };
  });
}

void AddPrecisionCommand(CLI::App& app, std::function<int()>& run) {
  auto* cmd = app.add_subcommand(
      "precision", "16-bit LeakyReLU error on captured pre-activations (raw f32 file)");
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
        json << gan::PrecisionJson(rows, *slope, *input).dump(1) << "\n";
        json.flush();
        if (!json) throw std::runtime_error("could not write all of --json " + *json_out);
      }
      return 0;
    };
  });
}

}  // namespace leaky::tools

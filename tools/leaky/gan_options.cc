// `leaky gan`'s options: declared on the command line, turned into the
// study's configuration, and given again to each shard's process.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "cli_checks.h"
#include "gan_launch.h"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, sep);) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

}  // namespace

void AddGanOptions(CLI::App* cmd, GanOptions* o) {
  cmd->add_option("--preset", o->preset,
                  "default (MNIST, relu vs lrelu:0.2 at layers 2,4, 1 seed, ~3 min), dcgan-3000 "
                  "(all five activations, both norms, 5 seeds, 3000 steps) or ring8 (8 Gaussians "
                  "on a ring). The options below default to the preset's values")
      ->check(CLI::IsMember({"default", "dcgan-3000", "ring8"}))
      ->capture_default_str();
  cmd->add_option("--data", o->data, "mnist, fashion (Fashion-MNIST) or ring8 (default: the preset's, mnist; ring8 for ring8)")
      ->check(CLI::IsMember({"mnist", "fashion", "ring8"}));
  cmd->add_option("--loss", o->loss, "non-saturating or hinge")
      ->check(CLI::IsMember({"non-saturating", "hinge"}))
      ->capture_default_str();
  cmd->add_flag("--d-spectral-norm", o->spectral_norm,
                "spectral normalisation of the discriminator's convolutions and head");
  cmd->add_option("--acts", o->acts, "comma list: relu, lrelu:<slope>, prelu, elu, rrelu (@torch: torch's module); default: "
                  "relu,lrelu:0.2 (dcgan-3000: all five)");
  cmd->add_option("--d-act-layers", o->layers, "discriminator layers (1-4) that get the activation, or 'all' (default: 2,4)");
  cmd->add_option("--d-norm", o->norm, "none, batch or both (default: none; dcgan-3000: both)")->check(CLI::IsMember({"none", "batch", "both"}));
  cmd->add_option("--base-act", o->base, "the activation of the other layers")->capture_default_str();
  WholeNumber(cmd->add_option("--width", o->width,
                              "model size: 1 (D 16/32/64/64, G 64x7x7, latent 64) or 2 (every "
                              "channel doubled, latent 100)")
                  ->capture_default_str(),
              1, 2);
  cmd->add_option("--init", o->init,
                  "dcgan (conv/linear N(0, 0.02), BN N(1, 0.02), by module type) or default "
                  "(LibTorch's)")
      ->check(CLI::IsMember({"dcgan", "default"}))
      ->capture_default_str();
  WholeNumber(cmd->add_option("--steps", o->steps, "training steps per run (default: 800; dcgan-3000: 3000; ring8: 1000)"), 1);
  WholeNumber(cmd->add_option("--seeds", o->seeds, "seeds per variant (default: 1; dcgan-3000: 5)"), 1);
  WholeNumber(cmd->add_option("--first-seed", o->first_seed,
                              "number of the first seed (runs of other seeds can be merged in later)")
                  ->capture_default_str(),
              0);
  WholeNumber(cmd->add_option("--log-every", o->log_every, "steps between measurements (default: 10; dcgan-3000: 25)"), 1);
  WholeNumber(cmd->add_option("--threads", o->threads,
                              "torch threads (0: all; with --jobs: the cores shared out; with "
                              "--slurm: 1)")
                  ->capture_default_str(),
              0);
  WholeNumber(cmd->add_option("--samples", o->samples, "generated samples for the quality metrics (default: 1000; ring8: 2000)"),
              1);
  cmd->add_option("--name", o->name, "run name: output in <out>/<name> (default: the preset's: gan-demo, dcgan-3000, ring8)")
      ->check([](const std::string& name) -> std::string {
        // The run folder must be one folder inside --out: an empty name
        // once fell back to gan-demo's, and ../x wrote outside --out.
        if (name.empty()) return "--name must not be empty";
        if (name == "." || name == ".." || name.find('/') != std::string::npos) {
          return "--name '" + name + "' must be a folder name inside --out (no '/', not . or ..)";
        }
        return "";
      });
  cmd->add_flag("--force", o->force,
                "replace the run folder when it holds another study (the same study resumes)");
  WholeNumber(cmd->add_option("--checkpoint-every", o->checkpoint_every,
                              "steps between a run's checkpoints (a killed run resumes from its "
                              "last)")
                  ->capture_default_str(),
              1);
  cmd->add_option("--out", o->out, "output root")->capture_default_str();
  cmd->add_option("--data-dir", o->data_dir,
                  "where scripts/fetch_mnist.sh put the digits (default: $LEAKY_DATA_DIR, else " +
                      DefaultDataDir() + "), or fetch_fashion_mnist.sh the Fashion-MNIST "
                      "images (default: " + DefaultDataDir(gan::Dataset::kFashion) + ")");
  // A plain flag and its negation kept apart: "!--no-speed-check" printed
  // as --no-speed-check{false} in --help.
  cmd->add_flag("--no-speed-check", o->no_speed_check, "skip the LeakyReLU step-time comparison");
  cmd->add_option("--shard", o->shard,
                  "K/N: run only the K-th of N slices of the runs, into <out>/<name> (merge them "
                  "with `leaky gan merge`)");
  WholeNumber(cmd->add_option("--jobs", o->jobs, "worker processes (each one shard, at most one per run), merged at the end")
                  ->capture_default_str(),
              1, 256);
  cmd->add_flag("--slurm", o->slurm,
                "submit a Slurm job array (one task per shard: --jobs, default one per run) "
                "and a merge job after it");
  cmd->add_flag("--slurm-dry-run", o->slurm_dry_run, "print the Slurm scripts instead of submitting");
  cmd->add_option("--slurm-args", o->slurm_args,
                  "more sbatch options for both jobs, e.g. \"--partition=gpu --time=2:00:00\"");
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
  if (o.data == "fashion") c.data = gan::Dataset::kFashion;
  c.loss = o.loss == "hinge" ? gan::Loss::kHinge : gan::Loss::kNonSaturating;
  c.shape.spectral_norm = o.spectral_norm;
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
  c.checkpoint_every = o.checkpoint_every;
  c.force = o.force;
  c.out_dir = o.out;
  c.data_dir = o.data_dir.empty() ? DefaultDataDir(c.data) : o.data_dir;
  c.base_act = gan::ParseActivation(o.base);
  c.shape.width = o.width;
  c.shape.init = o.init == "default" ? gan::Init::kDefault : gan::Init::kDcgan;
  if (c.samples < 10) {
    throw std::invalid_argument("--samples " + std::to_string(c.samples) +
                                ": the quality metrics need at least 10 generated samples");
  }
  if (gan::IsImages(c.data) && c.samples > 1000) {
    throw std::invalid_argument("--samples " + std::to_string(c.samples) +
                                ": at most 1000 on image data (two real sets of that size come "
                                "from its 2,000 reference images)");
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

std::string DefaultDataDir(gan::Dataset data) {
  if (data == gan::Dataset::kFashion) return LEAKY_SOURCE_DIR "/data/fashion-mnist";
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
  add_number("--checkpoint-every", o.checkpoint_every);
  add("--init", o.init);
  add("--loss", o.loss);
  if (o.spectral_norm) args.push_back("--d-spectral-norm");
  add("--data-dir", fs::absolute(c.data_dir).string());
  add("--out", (run_dir / "shards").string());
  add("--name", ShardDir(run_dir, k, n).filename().string());
  add("--shard", k + "/" + std::to_string(n));
  if (o.no_speed_check) args.push_back("--no-speed-check");
  return args;
}

}  // namespace leaky::cli

// What the lab measures and what results.json holds, as typed records: the
// lab's modules (merge, summary, claims, tables, report) exchange these;
// results_json.h converts them to and from JSON at the edge. No LibTorch.
#ifndef LEAKY_GAN_RECORDS_H_
#define LEAKY_GAN_RECORDS_H_

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "precision.h"
#include "stats.h"

namespace leaky::gan {

using PerLayer = std::vector<double>;  // one value per hidden layer of D

// One logged step.
struct Row {
  int step;
  double d_loss, g_loss, d_real, d_fake, grad_norm, step_ms;
  PerLayer zero, nonpos, dead;  // per hidden layer
};

// A dead-unit probe at a checkpoint: the discriminator in eval mode (batch
// norm on its running statistics, RReLU at its mean slope) on the same
// kProbeImages real digits and kProbeImages samples of fixed noise (the
// generator in eval mode), per hidden layer: the fraction of channels never
// above 0 on any of the 2 x kProbeImages images, and the fractions of
// activations exactly 0 and <= 0 on the real and on the generated images.
struct Probe {
  int step;
  PerLayer dead, zero_real, nonpos_real, zero_fake, nonpos_fake;
};

// The quality of generated samples: MNIST's measures or ring8's, the others
// absent. The counts (classes, modes) are whole in a run and fractional in
// a mean over seeds, so they are held as doubles.
struct Quality {
  std::optional<double> fcd, class_coverage, class_kl;       // image data
  std::optional<double> kid;                                 // image data, lab version 4
  std::optional<double> modes_covered, high_quality_share;   // ring8
};

struct QualityPoint {
  int step;
  Quality quality;
};

// A run's final values: losses, D outputs, gradient norm, per-layer sparsity
// and dead channels over the last tenth of its rows, the mean step time, the
// last probe's dead channels and the last quality point. Also the mean over
// a variant's seeds.
struct Final {
  double d_loss = 0, g_loss = 0, d_real = 0, d_fake = 0, grad_norm_first_layer = 0, step_ms = 0;
  PerLayer sparsity_zero, sparsity_nonpos, dead_channels;
  std::optional<PerLayer> probe_dead_channels;  // runs with probes (MNIST)
  Quality quality;
};

// The f16 counts (precision.h) of one training batch's layer-2
// pre-activations (lab version 4: every seed, at each probe step).
struct PrecisionPoint {
  int step;
  std::vector<PrecisionRow> rows;
};

// Every PReLU layer's slopes per channel at the start and the end of a run.
struct PreluSlopes {
  using Layers = std::vector<std::pair<std::string, std::vector<double>>>;  // (module, slopes)
  Layers start, end;
};

// One finished (variant, seed) run.
struct Run {
  std::string variant;
  int seed = 0;
  Final final;
  std::vector<Row> history;
  std::vector<QualityPoint> quality_history;
  std::optional<std::vector<Probe>> probe_history;  // absent before lab version 3
  std::optional<std::vector<PrecisionPoint>> precision_history;  // lab version 4, image data
  std::optional<PreluSlopes> prelu_slopes;                       // lab version 4, with PReLU
};

// A variant as the plan names it.
struct PlannedVariant {
  std::string name, activation, d_norm;  // d_norm: "none" or "batch"
  std::vector<std::string> layer_activations;
  bool operator==(const PlannedVariant&) const = default;
};

// A variant's runs and their summary over seeds.
struct VariantResults {
  PlannedVariant plan;
  std::vector<Run> runs;                   // seeds ascending
  Final final;                             // the mean over seeds
  std::map<std::string, Summary> summary;  // per number of Final (Numbers' names)
};

// The quality classifier (lab version 3; the rest lab version 4).
struct ClassifierInfo {
  long long train_digits = 0, held_out_digits = 0;
  double held_out_accuracy = 0, real_fcd_floor = 0;
  std::string what;
  // Lab version 4: the images split three ways; the floors over
  // kFloorSplits random halvings of the reference images.
  std::optional<long long> gan_images, reference_images;
  std::optional<Summary> fcd_floor, kid_floor;
};

// Where and from what a study ran (lab version 4).
struct Provenance {
  std::string commit;       // the source's git commit at build time
  bool tree_clean = false;  // no uncommitted change in the source then
  std::string library_version, binary_sha256, command_line, machine, started, finished;
};

// This library's LeakyReLU against torch::nn::LeakyReLU in a discriminator step.
struct SpeedCheck {
  double leaky_ms = 0, torch_ms = 0, ratio = 0;
  std::optional<std::array<double, 2>> ratio_quartiles;  // absent in early studies
  std::string what;
};

// What a merge with --allow-partial lacked.
struct Partial {
  std::vector<std::string> missing_runs, missing_shards;
};

// results.json's description of a study: its configuration and how it ran.
struct Study {
  std::string name, preset;
  int lab_version = 0;
  std::string dataset;  // "mnist", "fashion" or "ring8"
  bool images() const { return dataset != "ring8"; }  // 28x28 images, a classifier
  std::string data_checksum, classifier_checksum;
  int steps = 0, seeds = 0, first_seed = 0, batch = 0, log_every = 0, quality_every = 0,
      samples = 0, threads = 0;
  std::string models, base_activation;
  std::optional<int> width, probe_every;  // lab version 3
  std::optional<std::string> init;        // lab version 3
  std::optional<std::string> loss;        // lab version 4
  std::optional<bool> spectral_norm;      // lab version 4
  std::optional<Provenance> provenance;   // lab version 4; a merge: every part's
  struct Plan {
    std::vector<PlannedVariant> variants;
    int seeds = 0, first_seed = 0;
  } plan;
  bool stopped_early = false;
  std::optional<ClassifierInfo> classifier;  // MNIST, lab version 3
  std::optional<std::pair<int, int>> shard;  // (index, count) of a shard
  std::optional<std::vector<int>> threads_per_part;  // a merge of parts at different thread counts
  std::optional<Partial> partial;
  std::optional<SpeedCheck> speed_check;
};

// One measured part of a claim: an interval against a bound (paired
// comparisons add the sign test)...
struct IntervalPart {
  std::string what;
  double mean = 0, ci_low = 0, ci_high = 0;
  int n = 0;
  std::string bound, result;
  std::optional<SignTest> sign_test;
  // A registered primary measure (lab version 4, docs/study/PLAN-4.md): its
  // one-sided p-values, the Holm-adjusted p of the study's family, and the
  // bound beyond which it refutes the claim.
  struct Test {
    double p_hold = 1, p_refute = 1, p_holm = 1;
    std::string refute_bound;
  };
  std::optional<Test> test;
};
// ...or a count (the f16 claim).
struct CountPart {
  std::string what;
  long long count = 0, of = 0;
};
using ClaimPart = std::variant<IntervalPart, CountPart>;

// A claim in one norm setting, or the f16 claim on one source.
struct ClaimSetting {
  std::string setting;
  std::vector<ClaimPart> parts;
  std::string verdict;
};

struct Claim {
  std::string id, text;
  std::vector<ClaimSetting> settings;
  std::string verdict;
};

// What results.json holds.
struct Results {
  Study study;
  std::vector<VariantResults> variants;
  std::optional<PrecisionTable> precision;  // when pre-activations were captured
  std::optional<std::vector<Claim>> claims;  // MNIST studies with relu and lrelu:0.2
};

}  // namespace leaky::gan

#endif  // LEAKY_GAN_RECORDS_H_

// One (variant, seed) training run of the lab, as a pure computation: it
// reads the shared data and returns what it measured (logged rows, sample
// grids, layer 2's pre-activations; generated samples for the quality
// metrics go to a callback as training goes); writing
// files and summarising are other rooms' work (outputs.h, summary.h).
#ifndef LEAKY_GAN_TRAIN_H_
#define LEAKY_GAN_TRAIN_H_

#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "config.h"
#include "data.h"
#include "models.h"
#include "records.h"

namespace leaky::gan {

using Clock = std::chrono::steady_clock;
// Wall seconds since `from` (the lab's and the trainer's progress).
double Seconds(Clock::time_point from);

// What the runs of one lab invocation share, read-only during training.
// Image data only, but fixed_z: the images split three ways (lab.cc's
// SplitOf): the classifier's, the reference (seen by neither the classifier
// nor the GAN) and the GAN's.
struct LabData {
  Digits digits;                    // the GAN's images
  std::string data_checksum;        // of every image and label of the dataset
  Classifier classifier{nullptr};   // the quality metrics' classifier
  double classifier_accuracy = 0;   // on every image it did not train on
  int64_t classifier_train = 0, classifier_unseen = 0, reference_images = 0;
  torch::Tensor real_features;      // classifier features of `samples` reference images
  double real_fcd_floor = 0;        // FCD of those against `samples` other reference images
  std::vector<double> fcd_floors, kid_floors;  // over kFloorSplits random halvings
  torch::Tensor fixed_z;            // the sample grids' noise
  torch::Tensor probe_real;         // the dead-unit probes' real images (reference images)
  torch::Tensor probe_z;            // the probes' generator noise
};

// Random halvings of the reference images for the floors' spread.
inline constexpr int kFloorSplits = 10;
// Real and generated images of each dead-unit probe (Probe, records.h).
inline constexpr int64_t kProbeImages = 512;

struct TrainedRun {
  std::vector<Row> rows;
  std::vector<QualityPoint> quality;  // every quality_every steps and at the last
  std::vector<Probe> probes;   // MNIST: every probe_every steps and at the last
  std::vector<std::pair<int, torch::Tensor>> sample_grids;  // (step, generated samples)
  torch::Tensor preact2;       // layer 2's pre-activations at the last logged step
  std::vector<PrecisionPoint> precision;  // image data: f16 counts at each probe step
  PreluSlopes::Layers prelu_start, prelu_end;
  double step_ms = 0;          // mean over all steps
};

// Trains; `on_log(step)` is called at every logged step (progress), and
// `measure(samples)` every `quality_every` steps and at the last with
// config.samples generated samples (the same noise every time and in every
// run, the generator in eval mode). With `capture` the sample grids (at a
// quarter, half and the end) and the pre-activations are kept.
// With a `checkpoint` path the run's whole state is saved there every
// config.checkpoint_every steps and when `stop` becomes true, and a run that
// finds one there goes on from it (checkpoint.h): the result has the bits of
// an uninterrupted run. Returns nothing if `stop` became true.
std::optional<TrainedRun> TrainRun(
    const LabConfig& config, const LabData& data, const Variant& v, int seed, bool capture,
    int quality_every, const std::function<void(int step)>& on_log,
    const std::function<Quality(const torch::Tensor& samples)>& measure,
    const std::filesystem::path& checkpoint, const std::atomic<bool>& stop);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_TRAIN_H_

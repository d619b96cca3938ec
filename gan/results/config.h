// What a lab invocation is asked to do: the activations, the variants, the
// data, the model shape and the training settings, and which runs they
// make. Plain values without LibTorch, so the parts of the lab that only
// read a study (merge, claims, tables) compile without it.
#ifndef LEAKY_GAN_CONFIG_H_
#define LEAKY_GAN_CONFIG_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace leaky::gan {

// "relu", "lrelu:<slope>", "prelu[:<init>]", "elu", "rrelu"; a suffix
// "@torch" builds the torch::nn module instead of this library's (the speed
// reference).
enum class ActivationKind { kRelu, kLeakyRelu, kPrelu, kElu, kRrelu };

// PReLU's initial slope when none is given (PyTorch's and the PReLU paper's).
inline constexpr double kPreluDefaultInit = 0.25;

struct ActivationSpec {
  ActivationKind kind = ActivationKind::kLeakyRelu;
  double slope = 0.2;    // kLeakyRelu: the slope; kPrelu: the initial slope
  bool torch_impl = false;
  std::string Name() const;  // "prelu" when its init is the default
};
ActivationSpec ParseActivation(const std::string& text);  // throws on a bad spec
const char* KindName(ActivationKind kind);  // "relu", "lrelu", ...

// The LeakyReLU slope the f16 precision counts use (precision.h): layer 2's
// when it is LeakyReLU, else the base activation's when that is, else 0.2.
// The one rule of the trainer's counts and the merge's tables.
double PrecisionSlope(const ActivationSpec& layer2, const ActivationSpec& base);

// The image datasets (28x28 grey, 10 classes; image_files.h) and ring8.
enum class Dataset { kMnist, kRing8, kFashion };
inline bool IsImages(Dataset data) { return data != Dataset::kRing8; }
const char* DatasetName(Dataset data);  // "mnist", "ring8", "fashion"

// The GAN loss: the non-saturating loss (binary cross-entropy on logits,
// G maximising log D(G(z))) or the hinge loss (D: relu(1 - D(x)) +
// relu(1 + D(G(z))); G: -D(G(z))), the usual partner of spectral norm.
enum class Loss { kNonSaturating, kHinge };
const char* LossName(Loss loss);  // "non-saturating", "hinge"

// How the networks' parameters start. kDcgan, as DCGAN's reference code,
// by module type: convolution, transposed convolution and linear weights
// N(0, 0.02) with zero biases, batch-norm weights N(1, 0.02) with zero
// biases; activation parameters keep their own initial value (PReLU's
// slope). kDefault: LibTorch's own initialisation of each module.
// Activations draw nothing from torch's generator in either, so every
// variant of a seed starts from identical conv, linear and norm weights.
enum class Init { kDcgan, kDefault };
const char* InitName(Init init);  // "dcgan", "default"

// The model size: width 1 is the lab's original networks (D 16/32/64/64,
// G latent 64, 64x7x7 -> 32 -> 1); width 2 doubles every channel count (D
// 32/64/128/128; G latent 100, 128x7x7 -> 64 -> 1), the common DCGAN on
// MNIST. ring8's MLPs ignore it.
struct ModelShape {
  int width = 1;  // 1 or 2
  Init init = Init::kDcgan;
  // The discriminator's convolutions and head divide their weight by its
  // largest singular value (spectral_norm.h: one power iteration per
  // training step).
  bool spectral_norm = false;
};

// The generator's noise size: MNIST 64 (width 1) or 100 (width 2); ring8 8.
int64_t LatentSize(Dataset data, ModelShape shape);

// The discriminator's hidden layers (each with its chosen activation).
inline constexpr int kHiddenLayers = 4;

struct Variant {
  std::string name;
  ActivationSpec act;           // on the chosen layers
  std::vector<int> layers;      // 1-based; empty = all hidden layers
  bool batch_norm = false;
};

// Bumped whenever a change alters what a run measures: `leaky gan merge`
// refuses to combine runs of different versions.
// 3: initialisation by module type (PReLU starts at its init), --width and
// --init, the held-out classifier and real-vs-real floor, dead-unit probes.
// 4: the images split three ways (the classifier's, the real reference's,
// the GAN's), the stronger classifier, KID, the floor's spread, probes on
// held-out images, f16 counts of every seed, Fashion-MNIST, spectral norm
// and the hinge loss, provenance.
inline constexpr int kLabVersion = 4;

struct LabConfig {
  std::string preset = "default";
  std::string name = "gan-demo";
  std::string out_dir = "runs";
  std::string data_dir = "data/mnist";
  Dataset data = Dataset::kMnist;
  std::vector<Variant> variants;
  ActivationSpec base_act;      // the layers a variant does not choose
  int steps = 600;
  int seeds = 1;
  int first_seed = 0;           // seeds first_seed .. first_seed + seeds - 1
  int log_every = 10;
  int batch = 64;
  int threads = 0;              // 0: torch's default
  int samples = 1000;           // generated samples for the quality metrics
  int quality_every = 0;        // steps between sample-quality points; 0: steps / 20
  ModelShape shape;             // --width, --init, --d-spectral-norm
  Loss loss = Loss::kNonSaturating;
  int probe_every = 500;        // steps between dead-unit probes (and the last step)
  int checkpoint_every = 200;   // steps between a run's checkpoints (checkpoint.h)
  bool force = false;           // replace a run folder that holds another study
  int shard_index = 1;          // run the shard_index-th of shard_count slices
  int shard_count = 1;
  bool terminal = true;         // progress as one updating line (else plain lines)
};

// The activation of each discriminator layer for a variant.
std::vector<ActivationSpec> LayerActs(const LabConfig& config, const Variant& v);

// One (variant, seed) run of a preset; `variant` indexes config.variants.
struct RunKey {
  size_t variant;
  int seed;
};

// Every run of the configuration, variant by variant, seeds ascending.
std::vector<RunKey> PlannedRuns(const LabConfig& config);

// Whether run `index` (0-based, in PlannedRuns' order) is shard K's of N:
// every N-th run from the (K-1)-th, so each shard gets a mix of variants
// and seeds. The one rule for running shards and for merging them.
inline bool InShard(size_t index, int shard_index, int shard_count) {
  return index % static_cast<size_t>(shard_count) == static_cast<size_t>(shard_index - 1);
}

// The runs of shard K of N (InShard).
std::vector<RunKey> ShardRuns(const LabConfig& config);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_CONFIG_H_

// The lab's networks: a DCGAN-style generator and 4-layer convolutional
// discriminator for MNIST, small MLPs for ring8. The discriminator's hidden
// activations are chosen per run and layer; it can hand back each hidden
// layer's output (sparsity, dead channels) and layer 2's pre-activation
// (`leaky precision`).
#ifndef LEAKY_GAN_MODELS_H_
#define LEAKY_GAN_MODELS_H_

#include <torch/torch.h>

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

torch::nn::AnyModule MakeActivation(const ActivationSpec& spec, int64_t channels, int64_t seed);

struct DiscriminatorCapture {
  std::vector<torch::Tensor> hidden;  // each hidden layer's activation output
  torch::Tensor preact2;              // layer 2's input to its activation
};

enum class Dataset { kMnist, kRing8 };

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
};

// The generator's noise size: MNIST 64 (width 1) or 100 (width 2); ring8 8.
int64_t LatentSize(Dataset data, ModelShape shape);

// Applies `init` to every submodule of `module` (kDefault: nothing to do).
void InitParameters(torch::nn::Module& module, Init init);

class DiscriminatorImpl : public torch::nn::Module {
 public:
  // acts[i]: the activation of hidden layer i + 1 (4 layers); batch_norm on
  // layers 2..4 (DCGAN keeps the first layer unnormalized).
  DiscriminatorImpl(Dataset data, const std::vector<ActivationSpec>& acts, bool batch_norm,
                    int64_t seed, ModelShape shape = {});
  torch::Tensor forward(const torch::Tensor& x, DiscriminatorCapture* capture = nullptr);
  torch::Tensor FirstLayerWeight() const { return first_weight_; }
  static constexpr int kHidden = 4;

 private:
  std::vector<torch::nn::AnyModule> layers_, norms_, acts_;
  torch::nn::Linear head_{nullptr};
  torch::Tensor first_weight_;
  bool image_;
};
TORCH_MODULE(Discriminator);

class GeneratorImpl : public torch::nn::Module {
 public:
  explicit GeneratorImpl(Dataset data, ModelShape shape = {});
  torch::Tensor forward(const torch::Tensor& z);
  int64_t latent() const { return latent_; }

 private:
  torch::nn::Sequential body_{nullptr};
  int64_t latent_;
};
TORCH_MODULE(Generator);

// A small CNN trained once on the digits; its 64-d penultimate layer gives
// the features of the Fréchet distance ("FCD").
class ClassifierImpl : public torch::nn::Module {
 public:
  ClassifierImpl();
  torch::Tensor Features(const torch::Tensor& x);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Sequential features_{nullptr};
  torch::nn::Linear out_{nullptr};
};
TORCH_MODULE(Classifier);

// The model sizes and initialisation, for the report (and, in results.json,
// part of what makes runs one study).
std::string DescribeModels(Dataset data, ModelShape shape = {});

}  // namespace leaky::gan

#endif  // LEAKY_GAN_MODELS_H_

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

#include "config.h"

namespace leaky::gan {

torch::nn::AnyModule MakeActivation(const ActivationSpec& spec, int64_t channels, int64_t seed);

struct DiscriminatorCapture {
  std::vector<torch::Tensor> hidden;  // each hidden layer's activation output
  torch::Tensor preact2;              // layer 2's input to its activation
};

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
  static constexpr int kHidden = kHiddenLayers;

 private:
  std::vector<torch::nn::AnyModule> layers_, norms_, acts_;
  torch::nn::AnyModule head_;
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

// A CNN (two 3x3 conv pairs of 32 and 64 channels, each pair pooled; 128
// features; dropout 0.3 in training) trained once per dataset on images the
// GAN never sees; its 128-d penultimate layer gives the features of the
// Fréchet distance ("FCD") and of KID.
inline constexpr int64_t kClassifierFeatures = 128;
class ClassifierImpl : public torch::nn::Module {
 public:
  ClassifierImpl();
  torch::Tensor Features(const torch::Tensor& x);
  torch::Tensor Logits(const torch::Tensor& features);  // from Features' output
  torch::Tensor forward(const torch::Tensor& x);

 private:
  torch::nn::Sequential features_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear out_{nullptr};
};
TORCH_MODULE(Classifier);

// The model sizes and initialisation, for the report (and, in results.json,
// part of what makes runs one study).
std::string DescribeModels(Dataset data, ModelShape shape = {},
                           Loss loss = Loss::kNonSaturating);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_MODELS_H_

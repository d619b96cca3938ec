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

// "relu", "lrelu:<slope>", "prelu", "elu", "rrelu"; a suffix "@torch" builds
// the torch::nn module instead of this library's (the speed reference).
enum class ActivationKind { kRelu, kLeakyRelu, kPrelu, kElu, kRrelu };

struct ActivationSpec {
  ActivationKind kind = ActivationKind::kLeakyRelu;
  double slope = 0.2;    // kLeakyRelu only
  bool torch_impl = false;
  std::string Name() const;
};
ActivationSpec ParseActivation(const std::string& text);  // throws on a bad spec
const char* KindName(ActivationKind kind);  // "relu", "lrelu", ...

torch::nn::AnyModule MakeActivation(const ActivationSpec& spec, int64_t channels, int64_t seed);

struct DiscriminatorCapture {
  std::vector<torch::Tensor> hidden;  // each hidden layer's activation output
  torch::Tensor preact2;              // layer 2's input to its activation
};

enum class Dataset { kMnist, kRing8 };

class DiscriminatorImpl : public torch::nn::Module {
 public:
  // acts[i]: the activation of hidden layer i + 1 (4 layers); batch_norm on
  // layers 2..4 (DCGAN keeps the first layer unnormalized).
  DiscriminatorImpl(Dataset data, const std::vector<ActivationSpec>& acts, bool batch_norm,
                    int64_t seed);
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
  explicit GeneratorImpl(Dataset data);
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

// The model sizes, for the report.
std::string DescribeModels(Dataset data);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_MODELS_H_

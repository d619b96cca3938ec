// Spectral normalisation (Miyato et al. 2018) for the discriminator: a
// weight divided by its largest singular value, estimated by a power
// iteration whose vector u persists between calls. LibTorch's C++ API has
// no torch.nn.utils.spectral_norm, so this is our own.
#ifndef LEAKY_GAN_SPECTRAL_NORM_H_
#define LEAKY_GAN_SPECTRAL_NORM_H_

#include <torch/torch.h>

#include <cstdint>

namespace leaky::gan {

// weight / sigma, sigma the largest singular value of weight viewed as an
// [out, rest] matrix W. With `update`, first runs `iterations` power steps
// that refine u ([out], unit norm) in place, outside autograd. v is always
// derived from the current u, so a call without `update` (eval) is a pure
// function of weight and the stored u. sigma = u^T W v is differentiated
// through W only (u, v constants), as in torch.nn.utils.spectral_norm.
torch::Tensor SpectralNormalize(const torch::Tensor& weight, torch::Tensor& u, bool update,
                                int iterations = 1);

// A Conv2d / Linear whose weight is spectrally normalised at each forward
// (u refined once per training-mode forward, frozen in eval). The plain
// layer is registered as "inner", so initialisation by module type
// (InitParameters) still finds its weight and bias; u is the buffer "u",
// saved and loaded with the module, drawn from its own generator seeded by
// `seed`, so the global generator advances exactly as for the plain layer
// and a model starts from the same weights with or without normalisation.
class SpectralConv2dImpl : public torch::nn::Module {
 public:
  SpectralConv2dImpl(torch::nn::Conv2dOptions options, uint64_t seed);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Conv2d inner{nullptr};
  torch::Tensor u;
};
TORCH_MODULE(SpectralConv2d);

class SpectralLinearImpl : public torch::nn::Module {
 public:
  SpectralLinearImpl(torch::nn::LinearOptions options, uint64_t seed);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear inner{nullptr};
  torch::Tensor u;
};
TORCH_MODULE(SpectralLinear);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_SPECTRAL_NORM_H_

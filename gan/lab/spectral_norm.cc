#include "spectral_norm.h"

#include <ATen/CPUGeneratorImpl.h>

namespace leaky::gan {

namespace {

namespace F = torch::nn::functional;

// x / max(|x|, 1e-12): the eps of torch.nn.utils.spectral_norm, so the
// iterates are PyTorch's and a zero vector stays zero instead of NaN.
torch::Tensor Normalized(const torch::Tensor& x) {
  return F::normalize(x, F::NormalizeFuncOptions().p(2).dim(0).eps(1e-12));
}

// The unit-norm start of the power iteration, from a generator of its own:
// drawing it from torch's global one would shift every weight drawn after
// it, so runs with and without normalisation would start apart.
torch::Tensor InitialU(int64_t out, uint64_t seed, const torch::TensorOptions& options) {
  torch::Generator generator = at::detail::createCPUGenerator(seed);
  return Normalized(torch::randn({out}, generator, options));
}

}  // namespace

torch::Tensor SpectralNormalize(const torch::Tensor& weight, torch::Tensor& u, bool update,
                                int iterations) {
  TORCH_CHECK(weight.dim() >= 1 && u.dim() == 1 && u.size(0) == weight.size(0),
              "spectral norm: u must have one entry per output of the weight");
  const torch::Tensor matrix = weight.reshape({weight.size(0), -1});
  torch::Tensor v;
  {
    torch::NoGradGuard no_grad;
    const torch::Tensor w = matrix.detach();
    if (update) {
      for (int i = 0; i < iterations; ++i) {
        u.copy_(Normalized(w.mv(Normalized(w.t().mv(u)))));
      }
    }
    v = Normalized(w.t().mv(u));
  }
  // A copy of u: autograd keeps the u it multiplied by, and the next
  // training forward updates u in place before this one's backward (D runs
  // on real and fake images, then one backward), which autograd refuses.
  const torch::Tensor sigma = torch::dot(u.clone(), matrix.mv(v));
  return weight / sigma;
}

SpectralConv2dImpl::SpectralConv2dImpl(torch::nn::Conv2dOptions options, uint64_t seed) {
  // forward calls F::conv2d, which knows zero padding only.
  TORCH_CHECK(c10::get_if<torch::enumtype::kZeros>(&options.padding_mode()) != nullptr,
              "SpectralConv2d: only zero padding is supported");
  inner = register_module("inner", torch::nn::Conv2d(options));
  u = register_buffer("u", InitialU(options.out_channels(), seed, inner->weight.options()));
}

torch::Tensor SpectralConv2dImpl::forward(const torch::Tensor& x) {
  const auto& o = inner->options;
  return F::conv2d(x, SpectralNormalize(inner->weight, u, is_training()),
                   F::Conv2dFuncOptions()
                       .bias(inner->bias)
                       .stride(o.stride())
                       .padding(o.padding())
                       .dilation(o.dilation())
                       .groups(o.groups()));
}

SpectralLinearImpl::SpectralLinearImpl(torch::nn::LinearOptions options, uint64_t seed) {
  inner = register_module("inner", torch::nn::Linear(options));
  u = register_buffer("u", InitialU(options.out_features(), seed, inner->weight.options()));
}

torch::Tensor SpectralLinearImpl::forward(const torch::Tensor& x) {
  return F::linear(x, SpectralNormalize(inner->weight, u, is_training()), inner->bias);
}

}  // namespace leaky::gan

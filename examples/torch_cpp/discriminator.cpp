// A small DCGAN-style discriminator in LibTorch, built twice: with
// torch::nn::LeakyReLU and with leaky::nn::LeakyReLU swapped in (one line).
// Same weights, same input: the scores and the weight gradients must match.
#include <leaky/torch.hpp>
#include <torch/torch.h>

#include <iostream>

template <class Act>
torch::nn::Sequential Discriminator() {
  const auto lrelu = torch::nn::LeakyReLUOptions().negative_slope(0.2);
  return torch::nn::Sequential(
      torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 16, 4).stride(2).padding(1)), Act(lrelu),
      torch::nn::Conv2d(torch::nn::Conv2dOptions(16, 32, 4).stride(2).padding(1)), Act(lrelu),
      torch::nn::Flatten(), torch::nn::Linear(32 * 7 * 7, 1));
}

int main() {
  torch::manual_seed(0);
  auto reference = Discriminator<torch::nn::LeakyReLU>();
  auto ours = Discriminator<leaky::nn::LeakyReLU>();  // the swap
  {
    torch::NoGradGuard no_grad;
    auto from = reference->parameters();
    auto to = ours->parameters();
    for (size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  }
  const auto images = torch::randn({8, 1, 28, 28});
  const auto score_reference = reference->forward(images);
  const auto score_ours = ours->forward(images);
  score_reference.sum().backward();
  score_ours.sum().backward();
  const bool same_scores = torch::equal(score_reference, score_ours);
  bool same_grads = true;
  for (size_t i = 0; i < ours->parameters().size(); ++i) {
    same_grads &= torch::allclose(ours->parameters()[i].grad(),
                                  reference->parameters()[i].grad(), 1e-6, 0);
  }
  // StyleGAN's fused bias + LeakyReLU + gain, against the unfused sequence.
  leaky::nn::BiasAct bias_act(leaky::nn::BiasActOptions(16).alpha(0.2));
  {
    torch::NoGradGuard no_grad;
    bias_act->bias.uniform_(-1, 1);
  }
  const auto features = torch::randn({8, 16, 14, 14});
  const auto unfused = torch::leaky_relu(features + bias_act->bias.view({1, 16, 1, 1}), 0.2) *
                       1.4142135623730951;
  const bool same_bias_act = torch::equal(bias_act->forward(features), unfused);
  // The relatives: PReLU (learnable slope) and RReLU in evaluation.
  torch::nn::PReLU torch_prelu(torch::nn::PReLUOptions().num_parameters(16));
  leaky::nn::PReLU our_prelu(torch::nn::PReLUOptions().num_parameters(16));
  const bool same_prelu = torch::equal(our_prelu->forward(features), torch_prelu->forward(features));
  torch::nn::RReLU torch_rrelu;
  leaky::nn::RReLU our_rrelu;
  torch_rrelu->eval();
  our_rrelu->eval();
  const bool same_rrelu = torch::equal(our_rrelu->forward(features), torch_rrelu->forward(features));
  std::cout << *ours[1] << "\n"
            << "scores equal: " << same_scores << ", gradients equal: " << same_grads
            << ", bias_act equal: " << same_bias_act << ", prelu equal: " << same_prelu
            << ", rrelu equal: " << same_rrelu << "\n";
  return same_scores && same_grads && same_bias_act && same_prelu && same_rrelu ? 0 : 1;
}

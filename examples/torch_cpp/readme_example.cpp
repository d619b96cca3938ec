#include <leaky/torch.hpp>
#include <iostream>

int main() {
  auto act = leaky::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2));
  auto x = torch::tensor({-2.0f, 3.0f}, torch::requires_grad());
  auto y = act(x);
  y.sum().backward();
  std::cout << act << ' ' << y[0].item<float>() << ' ' << x.grad()[0].item<float>() << '\n';
}

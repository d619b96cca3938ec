// leaky for LibTorch users: the torch.ops.leaky operators as C++ functions
// (through the dispatcher, so autograd works to any order), and modules that
// are drop-in replacements for their torch::nn namesakes:
//
//   torch::nn::Sequential d(torch::nn::Linear(784, 256),
//                           leaky::nn::LeakyReLU(torch::nn::LeakyReLUOptions().negative_slope(0.2)),
//                           torch::nn::Linear(256, 1));
//
// Link the `leaky_torch` CMake target (libleaky_torch.so registers the ops).
#ifndef LEAKY_TORCH_HPP_
#define LEAKY_TORCH_HPP_

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/nn/cloneable.h>
#include <torch/nn/options/activation.h>
#include <torch/nn/pimpl.h>

#include <ostream>

namespace leaky::ops {

namespace detail {
template <class Signature>
c10::TypedOperatorHandle<Signature> Find(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}
}  // namespace detail

// y = x > 0 ? x : x * negative_slope (f16/bf16 computed in f32, exact).
inline at::Tensor leaky_relu(const at::Tensor& self, double negative_slope = 0.01) {
  static const auto op = detail::Find<at::Tensor(const at::Tensor&, double)>("leaky::leaky_relu");
  return op.call(self, negative_slope);
}

inline at::Tensor& leaky_relu_(at::Tensor& self, double negative_slope = 0.01) {
  static const auto op = detail::Find<at::Tensor&(at::Tensor&, double)>("leaky::leaky_relu_");
  return op.call(self, negative_slope);
}

// dx = saved > 0 ? dy : dy * negative_slope; saved is the input, or the
// result when self_is_result (which needs negative_slope >= 0).
inline at::Tensor leaky_relu_backward(const at::Tensor& grad_output, const at::Tensor& self,
                                      double negative_slope, bool self_is_result) {
  static const auto op =
      detail::Find<at::Tensor(const at::Tensor&, const at::Tensor&, double, bool)>(
          "leaky::leaky_relu_backward");
  return op.call(grad_output, self, negative_slope, self_is_result);
}

}  // namespace leaky::ops

namespace leaky::nn {

// Takes torch::nn::LeakyReLUOptions, like torch::nn::LeakyReLU.
class LeakyReLUImpl : public torch::nn::Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const torch::nn::LeakyReLUOptions& options_ = {}) : options(options_) {}

  at::Tensor forward(at::Tensor input) {
    if (options.inplace()) return ops::leaky_relu_(input, options.negative_slope());
    return ops::leaky_relu(input, options.negative_slope());
  }

  void reset() override {}

  void pretty_print(std::ostream& stream) const override {
    stream << "leaky::nn::LeakyReLU(negative_slope=" << options.negative_slope()
           << (options.inplace() ? ", inplace=true" : "") << ")";
  }

  torch::nn::LeakyReLUOptions options;
};
TORCH_MODULE(LeakyReLU);

}  // namespace leaky::nn

#endif  // LEAKY_TORCH_HPP_

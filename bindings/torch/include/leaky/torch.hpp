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
#include <torch/arg.h>
#include <torch/types.h>
#include <torch/torch.h>

#include <string>

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

inline at::Tensor relu(const at::Tensor& self) {
  static const auto op = detail::Find<at::Tensor(const at::Tensor&)>("leaky::relu");
  return op.call(self);
}

inline at::Tensor& relu_(at::Tensor& self) {
  static const auto op = detail::Find<at::Tensor&(at::Tensor&)>("leaky::relu_");
  return op.call(self);
}

inline at::Tensor elu(const at::Tensor& self, double alpha = 1.0, double scale = 1.0,
                      double input_scale = 1.0) {
  static const auto op =
      detail::Find<at::Tensor(const at::Tensor&, double, double, double)>("leaky::elu");
  return op.call(self, alpha, scale, input_scale);
}

inline at::Tensor& elu_(at::Tensor& self, double alpha = 1.0, double scale = 1.0,
                        double input_scale = 1.0) {
  static const auto op = detail::Find<at::Tensor&(at::Tensor&, double, double, double)>("leaky::elu_");
  return op.call(self, alpha, scale, input_scale);
}

// clamp(act(x + b) * gain, -clamp, clamp), b along `dim`; act: "lrelu",
// "relu", "linear" (alpha and gain not given: StyleGAN's defaults for the
// activation - linear gain 1; relu gain sqrt(2); lrelu alpha 0.2, gain
// sqrt(2)); then dropout with probability dropout_p, its keep mask drawn from
// the Philox stream (seed, offset) (see leaky.h).
inline at::Tensor bias_act(const at::Tensor& x, const c10::optional<at::Tensor>& b = c10::nullopt,
                           int64_t dim = 1, c10::string_view act = "lrelu",
                           c10::optional<double> alpha = c10::nullopt,
                           c10::optional<double> gain = c10::nullopt,
                           c10::optional<double> clamp = c10::nullopt, double dropout_p = 0.0,
                           int64_t seed = 0, int64_t offset = 0) {
  static const auto op =
      detail::Find<at::Tensor(const at::Tensor&, const c10::optional<at::Tensor>&, int64_t,
                              c10::string_view, c10::optional<double>, c10::optional<double>,
                              c10::optional<double>, double, int64_t, int64_t)>("leaky::bias_act");
  return op.call(x, b, dim, act, alpha, gain, clamp, dropout_p, seed, offset);
}

// y = x > 0 ? x : weight[c] * x, c along axis 1 (one weight: shared).
inline at::Tensor prelu(const at::Tensor& self, const at::Tensor& weight) {
  static const auto op =
      detail::Find<at::Tensor(const at::Tensor&, const at::Tensor&)>("leaky::prelu");
  return op.call(self, weight);
}

// Training: slopes from U(lower, upper) drawn from the stream (seed, offset);
// evaluation: (lower + upper) / 2.
inline at::Tensor rrelu(const at::Tensor& self, double lower = 1.0 / 8, double upper = 1.0 / 3,
                        bool training = false, int64_t seed = 0, int64_t offset = 0) {
  static const auto op =
      detail::Find<at::Tensor(const at::Tensor&, double, double, bool, int64_t, int64_t)>(
          "leaky::rrelu");
  return op.call(self, lower, upper, training, seed, offset);
}

// A seed from torch's default generator (torch::manual_seed makes it
// repeatable), for modules that own a stream.
inline int64_t fresh_seed() {
  return torch::randint(int64_t{1} << 62, {1}, torch::kLong).item<int64_t>();
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

// Takes torch::nn::ReLUOptions, like torch::nn::ReLU.
class ReLUImpl : public torch::nn::Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const torch::nn::ReLUOptions& options_ = {}) : options(options_) {}
  at::Tensor forward(at::Tensor input) {
    return options.inplace() ? ops::relu_(input) : ops::relu(input);
  }
  void reset() override {}
  void pretty_print(std::ostream& stream) const override {
    stream << "leaky::nn::ReLU(" << (options.inplace() ? "inplace=true" : "") << ")";
  }
  torch::nn::ReLUOptions options;
};
TORCH_MODULE(ReLU);

// Takes torch::nn::ELUOptions, like torch::nn::ELU.
class ELUImpl : public torch::nn::Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const torch::nn::ELUOptions& options_ = {}) : options(options_) {}
  at::Tensor forward(at::Tensor input) {
    return options.inplace() ? ops::elu_(input, options.alpha()) : ops::elu(input, options.alpha());
  }
  void reset() override {}
  void pretty_print(std::ostream& stream) const override {
    stream << "leaky::nn::ELU(alpha=" << options.alpha()
           << (options.inplace() ? ", inplace=true" : "") << ")";
  }
  torch::nn::ELUOptions options;
};
TORCH_MODULE(ELU);

struct BiasActOptions {
  BiasActOptions(int64_t channels) : channels_(channels) {}  // NOLINT: implicit, like torch's
  TORCH_ARG(int64_t, channels);
  TORCH_ARG(std::string, act) = "lrelu";
  TORCH_ARG(c10::optional<double>, alpha) = c10::nullopt;  // none: the activation's default
  TORCH_ARG(c10::optional<double>, gain) = c10::nullopt;   // none: the activation's default
  TORCH_ARG(c10::optional<double>, clamp) = c10::nullopt;
  TORCH_ARG(int64_t, dim) = 1;
  TORCH_ARG(bool, bias) = true;
  TORCH_ARG(double, dropout_p) = 0.0;        // applied in training only
  TORCH_ARG(c10::optional<int64_t>, seed) = c10::nullopt;  // none: ops::fresh_seed()
};

// A learnable per-channel bias (zero-initialised) + activation + gain +
// optional clamp + optional dropout, fused. Each training call advances the
// module's stream offset by the input's size, so masks are fresh.
class BiasActImpl : public torch::nn::Cloneable<BiasActImpl> {
 public:
  explicit BiasActImpl(const BiasActOptions& options_) : options(options_) { reset(); }
  void reset() override {
    if (options.bias()) bias = register_parameter("bias", torch::zeros({options.channels()}));
    // Not value_or: its argument would draw from torch's generator even when
    // a seed is given, shifting every later draw (the GAN lab's weights).
    seed = options.seed().has_value() ? *options.seed() : ops::fresh_seed();
    offset = 0;
  }
  at::Tensor forward(const at::Tensor& input) {
    const double p = is_training() ? options.dropout_p() : 0.0;
    const int64_t at_offset = offset;
    if (p > 0) offset += input.numel();
    return ops::bias_act(input, bias.defined() ? c10::optional<at::Tensor>(bias) : c10::nullopt,
                         options.dim(), options.act(), options.alpha(), options.gain(),
                         options.clamp(), p, seed, at_offset);
  }
  void pretty_print(std::ostream& stream) const override {
    stream << "leaky::nn::BiasAct(channels=" << options.channels() << ", act=" << options.act()
           << ", alpha=" << (options.alpha() ? std::to_string(*options.alpha()) : "default")
           << ", gain=" << (options.gain() ? std::to_string(*options.gain()) : "default")
           << ", dropout_p=" << options.dropout_p() << ")";
  }
  BiasActOptions options;
  at::Tensor bias;
  int64_t seed = 0, offset = 0;
};
TORCH_MODULE(BiasAct);

// Takes torch::nn::PReLUOptions, like torch::nn::PReLU.
class PReLUImpl : public torch::nn::Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const torch::nn::PReLUOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override {
    weight = register_parameter("weight", torch::full({options.num_parameters()}, options.init()));
  }
  at::Tensor forward(const at::Tensor& input) { return ops::prelu(input, weight); }
  void pretty_print(std::ostream& stream) const override {
    stream << "leaky::nn::PReLU(num_parameters=" << options.num_parameters() << ")";
  }
  torch::nn::PReLUOptions options;
  at::Tensor weight;
};
TORCH_MODULE(PReLU);

// Takes torch::nn::RReLUOptions (inplace is not supported), like
// torch::nn::RReLU; its slopes come from the module's stream.
class RReLUImpl : public torch::nn::Cloneable<RReLUImpl> {
 public:
  explicit RReLUImpl(const torch::nn::RReLUOptions& options_ = {},
                     c10::optional<int64_t> seed_ = c10::nullopt)
      : options(options_), seed(seed_.has_value() ? *seed_ : ops::fresh_seed()) {
    TORCH_CHECK(!options.inplace(), "leaky::nn::RReLU: inplace is not supported");
  }
  void reset() override { offset = 0; }
  at::Tensor forward(const at::Tensor& input) {
    const int64_t at_offset = offset;
    if (is_training()) offset += input.numel();
    return ops::rrelu(input, options.lower(), options.upper(), is_training(), seed, at_offset);
  }
  void pretty_print(std::ostream& stream) const override {
    stream << "leaky::nn::RReLU(lower=" << options.lower() << ", upper=" << options.upper() << ")";
  }
  torch::nn::RReLUOptions options;
  int64_t seed = 0, offset = 0;
};
TORCH_MODULE(RReLU);

}  // namespace leaky::nn

#endif  // LEAKY_TORCH_HPP_

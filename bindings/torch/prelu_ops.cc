// PReLU as `leaky` PyTorch operators, mirroring PyTorch 1.13's own:
//   prelu(self, weight) -> y; prelu_backward(grad_output, self, weight) -> (dx, dweight)
// differentiable to any order.
#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "common.h"
#include "leaky/leaky.h"

namespace leaky::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// PyTorch's rule: the channel axis is 1 (dim 0 of a 1-D input has no
// channels); a one-element weight is shared by every element.
ChannelView ViewForPrelu(const at::Tensor& self, const at::Tensor& weight) {
  CheckCpu(weight, "prelu", "weight");
  TORCH_CHECK(weight.scalar_type() == self.scalar_type(), "leaky::prelu: weight is ",
              weight.scalar_type(), " but self is ", self.scalar_type());
  if (weight.numel() == 1 || self.dim() < 2) {
    TORCH_CHECK(weight.numel() == 1, "leaky::prelu: a ", self.dim(),
                "-D input has no channel axis; weight must have one element, got ",
                weight.numel());
    const at::Tensor x = Dense(self);
    return {x, 1, 1, static_cast<size_t>(x.numel())};
  }
  ChannelView v = ViewAroundChannels(self, 1, "prelu");
  TORCH_CHECK(weight.dim() == 1 && static_cast<size_t>(weight.numel()) == v.channels,
              "leaky::prelu: weight must have 1 or ", v.channels, " elements (the channels), got ",
              weight.sizes());
  return v;
}

at::Tensor PreluCpu(const at::Tensor& self, const at::Tensor& weight) {
  CheckCpu(self, "prelu", "self");
  const leaky_dtype dtype = DtypeOf(self, "prelu");
  const ChannelView v = ViewForPrelu(self, weight);
  const at::Tensor w = weight.contiguous();
  at::Tensor y = at::empty_like(v.x);
  const leaky_options options = Options();
  Check(leaky_prelu_forward(dtype, v.outer, v.channels, v.inner, v.x.data_ptr(), w.data_ptr(),
                            y.data_ptr(), &options),
        "prelu");
  return y;
}

std::tuple<at::Tensor, at::Tensor> PreluBackwardCpu(const at::Tensor& grad_output,
                                                    const at::Tensor& self,
                                                    const at::Tensor& weight) {
  CheckCpu(grad_output, "prelu_backward", "grad_output");
  CheckCpu(self, "prelu_backward", "self");
  TORCH_CHECK(grad_output.sizes() == self.sizes() &&
                  grad_output.scalar_type() == self.scalar_type(),
              "leaky::prelu_backward: grad_output (", grad_output.sizes(), ", ",
              grad_output.scalar_type(), ") does not match self (", self.sizes(), ", ",
              self.scalar_type(), ")");
  const leaky_dtype dtype = DtypeOf(self, "prelu_backward");
  const ChannelView v = ViewForPrelu(self, weight);
  const at::Tensor dy = SameLayoutAs(grad_output, v.x);
  const at::Tensor w = weight.contiguous();
  at::Tensor dx = at::empty_like(v.x);
  at::Tensor dw = at::empty_like(w);
  const leaky_options options = Options();
  Check(leaky_prelu_backward(dtype, v.outer, v.channels, v.inner, dy.data_ptr(), v.x.data_ptr(),
                             w.data_ptr(), dx.data_ptr(), dw.data_ptr(), &options),
        "prelu_backward");
  return {dx, dw.view(weight.sizes())};
}

at::Tensor CallPrelu(const at::Tensor& self, const at::Tensor& weight) {
  static const auto op = Find<at::Tensor(const at::Tensor&, const at::Tensor&)>("leaky::prelu");
  return op.call(self, weight);
}
std::tuple<at::Tensor, at::Tensor> CallPreluBackward(const at::Tensor& grad_output,
                                                     const at::Tensor& self,
                                                     const at::Tensor& weight) {
  static const auto op =
      Find<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&,
                                              const at::Tensor&)>("leaky::prelu_backward");
  return op.call(grad_output, self, weight);
}

// The weight (1 or C elements) broadcast against self (channel axis 1).
at::Tensor BroadcastWeight(const at::Tensor& w, const at::Tensor& self) {
  if (w.numel() == 1 || self.dim() < 2) return w.reshape({}).expand(self.sizes());
  std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
  shape[1] = self.size(1);
  return w.reshape(shape).expand(self.sizes());
}

// Sums a tensor shaped like self down to the weight's shape.
at::Tensor SumToWeight(const at::Tensor& t, const at::Tensor& w, const at::Tensor& self) {
  if (w.numel() == 1 || self.dim() < 2) return t.sum().reshape(w.sizes());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < self.dim(); ++d) if (d != 1) dims.push_back(d);
  return t.sum(dims).reshape(w.sizes());
}

class PreluFunction : public torch::autograd::Function<PreluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self,
                            const at::Tensor& weight) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self, weight});
    return CallPrelu(self, weight);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    auto [dx, dw] = CallPreluBackward(grad_outputs[0], saved[0], saved[1]);
    return {dx, dw};
  }
};

// dx = x > 0 ? g : w g and dw = sum(x <= 0 ? x g : 0) are linear in g; in w
// (dx) and in x (dw, almost everywhere) too. For incoming (ggx, ggw):
//   d g = prelu_backward(ggx).dx + (x <= 0 ? x : 0) * ggw
//   d w = sum(x <= 0 ? ggx * g : 0)
//   d x = (x <= 0 ? g : 0) * ggw
// written with ops that have derivatives of their own.
class PreluBackwardFunction : public torch::autograd::Function<PreluBackwardFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& grad_output,
                               const at::Tensor& self, const at::Tensor& weight) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({grad_output, self, weight});
    auto [dx, dw] = CallPreluBackward(grad_output, self, weight);
    return {dx, dw};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &g = saved[0], &x = saved[1], &w = saved[2];
    const at::Tensor &ggx = grad_outputs[0], &ggw = grad_outputs[1];
    const at::Tensor negative = x <= 0;
    at::Tensor d_g, d_w, d_x;
    if (ggx.defined()) {
      d_g = std::get<0>(CallPreluBackward(ggx, x, w));
      d_w = SumToWeight(at::where(negative, ggx * g, at::zeros_like(g)), w, x);
    }
    if (ggw.defined()) {
      const at::Tensor ggw_full = BroadcastWeight(ggw, x);
      const at::Tensor from_w = at::where(negative, x, at::zeros_like(x)) * ggw_full;
      d_g = d_g.defined() ? d_g + from_w : from_w;
      d_x = at::where(negative, g, at::zeros_like(g)) * ggw_full;
    }
    return {d_g, d_x, d_w};
  }
};

at::Tensor PreluAutograd(const at::Tensor& self, const at::Tensor& weight) {
  return ApplyOrCall<PreluFunction>(
      {&self, &weight}, [&] { return CallPrelu(self, weight); }, self, weight);
}
std::tuple<at::Tensor, at::Tensor> PreluBackwardAutograd(const at::Tensor& grad_output,
                                                         const at::Tensor& self,
                                                         const at::Tensor& weight) {
  auto outputs = PreluBackwardFunction::apply(grad_output, self, weight);
  return {outputs[0], outputs[1]};
}

at::Tensor PreluMeta(const at::Tensor& self, const at::Tensor& weight) {
  TORCH_CHECK(weight.scalar_type() == self.scalar_type(), "leaky::prelu: weight is ",
              weight.scalar_type(), " but self is ", self.scalar_type());
  return UnaryMeta(self, "prelu");
}
std::tuple<at::Tensor, at::Tensor> PreluBackwardMeta(const at::Tensor& grad_output,
                                                     const at::Tensor& self,
                                                     const at::Tensor& weight) {
  return {BinaryMeta(grad_output, self, "prelu_backward"), at::empty_like(weight)};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  // PyTorch's prelu / prelu_backward (1.13's names).
  m.def("prelu(Tensor self, Tensor weight) -> Tensor");
  m.def("prelu_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("prelu", &PreluCpu);
  m.impl("prelu_backward", &PreluBackwardCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("prelu", &PreluAutograd);
  m.impl("prelu_backward", &PreluBackwardAutograd);
}

TORCH_LIBRARY_IMPL(leaky, Meta, m) {
  m.impl("prelu", &PreluMeta);
  m.impl("prelu_backward", &PreluBackwardMeta);
}

}  // namespace leaky::torch_ops

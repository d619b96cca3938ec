// ReLU as `leaky` PyTorch operators (relu, relu_, relu_backward: PyTorch's
// names; the C API calls it leaky_plain_relu_*). The backward is PyTorch's
// threshold_backward at 0 on the result.
#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>

#include "common.h"
#include "leaky/leaky.h"

namespace leaky::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

at::Tensor ReluCpu(const at::Tensor& self) {
  return UnaryCpu(self, "relu", &leaky_plain_relu_forward);
}

at::Tensor& ReluInplaceCpu(at::Tensor& self) {
  return UnaryInplaceCpu(self, "relu_", &leaky_plain_relu_forward);
}

at::Tensor ReluBackwardCpu(const at::Tensor& grad_output, const at::Tensor& result) {
  return BinaryCpu(grad_output, result, "relu_backward", &leaky_plain_relu_backward);
}

at::Tensor CallRelu(const at::Tensor& self) {
  static const auto op = Find<at::Tensor(const at::Tensor&)>("leaky::relu");
  return op.call(self);
}
at::Tensor& CallReluInplace(at::Tensor& self) {
  static const auto op = Find<at::Tensor&(at::Tensor&)>("leaky::relu_");
  return op.call(self);
}
at::Tensor CallReluBackward(const at::Tensor& grad_output, const at::Tensor& result) {
  static const auto op = Find<at::Tensor(const at::Tensor&, const at::Tensor&)>("leaky::relu_backward");
  return op.call(grad_output, result);
}

class ReluFunction : public torch::autograd::Function<ReluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    at::Tensor result = CallRelu(self);
    ctx->save_for_backward({result});
    return result;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {CallReluBackward(grad_outputs[0], ctx->get_saved_variables()[0])};
  }
};

class ReluInplaceFunction : public torch::autograd::Function<ReluInplaceFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::Tensor self) {
    {
      at::AutoDispatchBelowADInplaceOrView below_autograd;
      CallReluInplace(self);
    }
    ctx->mark_dirty({self});
    ctx->save_for_backward({self});
    return self;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {CallReluBackward(grad_outputs[0], ctx->get_saved_variables()[0])};
  }
};

class ReluBackwardFunction : public torch::autograd::Function<ReluBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_output,
                            const at::Tensor& result) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({result});
    return CallReluBackward(grad_output, result);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {CallReluBackward(grad_outputs[0], ctx->get_saved_variables()[0]), at::Tensor()};
  }
};

at::Tensor ReluAutograd(const at::Tensor& self) {
  return ApplyOrCall<ReluFunction>(
      {&self}, [&] { return CallRelu(self); }, self);
}

at::Tensor& ReluInplaceAutograd(at::Tensor& self) {
  torch::autograd::check_inplace(self, self.requires_grad());
  ReluInplaceFunction::apply(self);
  return self;
}

at::Tensor ReluBackwardAutograd(const at::Tensor& grad_output, const at::Tensor& result) {
  return ApplyOrCall<ReluBackwardFunction>(
      {&grad_output, &result}, [&] { return CallReluBackward(grad_output, result); }, grad_output,
      result);
}

at::Tensor ReluMeta(const at::Tensor& self) { return UnaryMeta(self, "relu"); }
at::Tensor& ReluInplaceMeta(at::Tensor& self) {
  DtypeOf(self, "relu_");
  return self;
}
at::Tensor ReluBackwardMeta(const at::Tensor& grad_output, const at::Tensor& result) {
  return BinaryMeta(grad_output, result, "relu_backward");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  // PyTorch's relu; the backward is threshold_backward at 0 on the result.
  m.def("relu(Tensor self) -> Tensor");
  m.def("relu_(Tensor(a!) self) -> Tensor(a!)");
  m.def("relu_backward(Tensor grad_output, Tensor result) -> Tensor");
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("relu", &ReluCpu);
  m.impl("relu_", &ReluInplaceCpu);
  m.impl("relu_backward", &ReluBackwardCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("relu", &ReluAutograd);
  m.impl("relu_", &ReluInplaceAutograd);
  m.impl("relu_backward", &ReluBackwardAutograd);
}

TORCH_LIBRARY_IMPL(leaky, Meta, m) {
  m.impl("relu", &ReluMeta);
  m.impl("relu_", &ReluInplaceMeta);
  m.impl("relu_backward", &ReluBackwardMeta);
}

}  // namespace leaky::torch_ops

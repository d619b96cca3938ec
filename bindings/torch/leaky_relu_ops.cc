// LeakyReLU as `leaky` PyTorch operators: leaky_relu, leaky_relu_ and
// leaky_relu_backward (PyTorch's schemas), CPU kernels on the C API and
// Autograd kernels whose backward is itself an operator with a derivative.
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

void CheckSlope(double slope, const char* op) {
  TORCH_CHECK(std::isfinite(slope), "leaky::", op, ": negative_slope = ", slope,
              " is not finite");
}

auto LeakyReluRun(double negative_slope) {
  return [negative_slope](leaky_dtype dtype, size_t n, const void* x, void* y,
                          const leaky_options* options) {
    return leaky_relu_forward(dtype, n, x, y, negative_slope, options);
  };
}

at::Tensor LeakyReluCpu(const at::Tensor& self, double negative_slope) {
  CheckSlope(negative_slope, "leaky_relu");
  return UnaryCpu(self, "leaky_relu", LeakyReluRun(negative_slope));
}

at::Tensor& LeakyReluInplaceCpu(at::Tensor& self, double negative_slope) {
  CheckSlope(negative_slope, "leaky_relu_");
  return UnaryInplaceCpu(self, "leaky_relu_", LeakyReluRun(negative_slope));
}

at::Tensor LeakyReluBackwardCpu(const at::Tensor& grad_output, const at::Tensor& self,
                                double negative_slope, bool self_is_result) {
  CheckSlope(negative_slope, "leaky_relu_backward");
  // PyTorch's message: the sign of the input cannot be recovered from the
  // result when the slope is negative.
  TORCH_CHECK(!self_is_result || negative_slope >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which "
              "is not supported. This is caused by calling in-place forward function with a "
              "negative slope, please call out-of-place version instead.");
  return BinaryCpu(grad_output, self, "leaky_relu_backward",
                   [&](leaky_dtype dtype, size_t n, const void* dy, const void* saved, void* dx,
                       const leaky_options* options) {
                     return leaky_relu_backward(dtype, n, dy, saved, self_is_result ? 1 : 0, dx,
                                                negative_slope, options);
                   });
}

at::Tensor CallLeakyRelu(const at::Tensor& self, double slope) {
  static const auto op = Find<at::Tensor(const at::Tensor&, double)>("leaky::leaky_relu");
  return op.call(self, slope);
}
at::Tensor& CallLeakyReluInplace(at::Tensor& self, double slope) {
  static const auto op = Find<at::Tensor&(at::Tensor&, double)>("leaky::leaky_relu_");
  return op.call(self, slope);
}
at::Tensor CallLeakyReluBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                 double slope, bool self_is_result) {
  static const auto op = Find<at::Tensor(const at::Tensor&, const at::Tensor&, double, bool)>("leaky::leaky_relu_backward");
  return op.call(grad_output, self, slope, self_is_result);
}

class LeakyReluFunction : public torch::autograd::Function<LeakyReluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, double slope) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    ctx->saved_data["slope"] = slope;
    return CallLeakyRelu(self, slope);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {CallLeakyReluBackward(grad_outputs[0], ctx->get_saved_variables()[0],
                                  ctx->saved_data["slope"].toDouble(), false),
            at::Tensor()};
  }
};

class LeakyReluInplaceFunction : public torch::autograd::Function<LeakyReluInplaceFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::Tensor self, double slope) {
    {
      at::AutoDispatchBelowADInplaceOrView below_autograd;
      CallLeakyReluInplace(self, slope);
    }
    ctx->mark_dirty({self});
    ctx->save_for_backward({self});
    ctx->saved_data["slope"] = slope;
    return self;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {CallLeakyReluBackward(grad_outputs[0], ctx->get_saved_variables()[0],
                                  ctx->saved_data["slope"].toDouble(), true),
            at::Tensor()};
  }
};

// d(dx)/d(dy) is the same masked scaling; d(dx)/d(self) is zero almost
// everywhere (the op is piecewise linear), returned as no gradient.
class LeakyReluBackwardFunction : public torch::autograd::Function<LeakyReluBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_output,
                            const at::Tensor& self, double slope, bool self_is_result) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    ctx->saved_data["slope"] = slope;
    ctx->saved_data["self_is_result"] = self_is_result;
    return CallLeakyReluBackward(grad_output, self, slope, self_is_result);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    return {CallLeakyReluBackward(grad_outputs[0], ctx->get_saved_variables()[0],
                                  ctx->saved_data["slope"].toDouble(),
                                  ctx->saved_data["self_is_result"].toBool()),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor LeakyReluAutograd(const at::Tensor& self, double negative_slope) {
  return ApplyOrCall<LeakyReluFunction>(
      {&self}, [&] { return CallLeakyRelu(self, negative_slope); }, self, negative_slope);
}

at::Tensor& LeakyReluInplaceAutograd(at::Tensor& self, double negative_slope) {
  // PyTorch's checks for in-place ops, before any byte is written.
  torch::autograd::check_inplace(self, self.requires_grad());
  LeakyReluInplaceFunction::apply(self, negative_slope);
  return self;
}

at::Tensor LeakyReluBackwardAutograd(const at::Tensor& grad_output, const at::Tensor& self,
                                     double negative_slope, bool self_is_result) {
  return ApplyOrCall<LeakyReluBackwardFunction>(
      {&grad_output, &self},
      [&] { return CallLeakyReluBackward(grad_output, self, negative_slope, self_is_result); },
      grad_output, self, negative_slope, self_is_result);
}

at::Tensor LeakyReluMeta(const at::Tensor& self, double) { return UnaryMeta(self, "leaky_relu"); }
at::Tensor& LeakyReluInplaceMeta(at::Tensor& self, double) {
  DtypeOf(self, "leaky_relu_");
  return self;
}
at::Tensor LeakyReluBackwardMeta(const at::Tensor& grad_output, const at::Tensor& self, double,
                                 bool) {
  return BinaryMeta(grad_output, self, "leaky_relu_backward");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  m.def("leaky_relu(Tensor self, float negative_slope=0.01) -> Tensor");
  m.def("leaky_relu_(Tensor(a!) self, float negative_slope=0.01) -> Tensor(a!)");
  m.def("leaky_relu_backward(Tensor grad_output, Tensor self, float negative_slope, "
        "bool self_is_result) -> Tensor");
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("leaky_relu", &LeakyReluCpu);
  m.impl("leaky_relu_", &LeakyReluInplaceCpu);
  m.impl("leaky_relu_backward", &LeakyReluBackwardCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("leaky_relu", &LeakyReluAutograd);
  m.impl("leaky_relu_", &LeakyReluInplaceAutograd);
  m.impl("leaky_relu_backward", &LeakyReluBackwardAutograd);
}

TORCH_LIBRARY_IMPL(leaky, Meta, m) {
  m.impl("leaky_relu", &LeakyReluMeta);
  m.impl("leaky_relu_", &LeakyReluInplaceMeta);
  m.impl("leaky_relu_backward", &LeakyReluBackwardMeta);
}

}  // namespace leaky::torch_ops

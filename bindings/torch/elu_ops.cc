// ELU as `leaky` PyTorch operators: elu, elu_ and elu_backward with
// PyTorch's schemas (float for Scalar), differentiable to any order.
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

void CheckEluCoefficients(double alpha, double scale, double input_scale, const char* op) {
  TORCH_CHECK(std::isfinite(alpha) && std::isfinite(scale) && std::isfinite(input_scale),
              "leaky::", op, ": alpha, scale and input_scale must be finite (got ", alpha, ", ",
              scale, ", ", input_scale, ")");
}

auto EluRun(double alpha, double scale, double input_scale) {
  return [=](leaky_dtype dtype, size_t n, const void* x, void* y, const leaky_options* options) {
    return leaky_elu_forward(dtype, n, x, y, alpha, scale, input_scale, options);
  };
}

at::Tensor EluCpu(const at::Tensor& self, double alpha, double scale, double input_scale) {
  CheckEluCoefficients(alpha, scale, input_scale, "elu");
  return UnaryCpu(self, "elu", EluRun(alpha, scale, input_scale));
}

at::Tensor& EluInplaceCpu(at::Tensor& self, double alpha, double scale, double input_scale) {
  CheckEluCoefficients(alpha, scale, input_scale, "elu_");
  return UnaryInplaceCpu(self, "elu_", EluRun(alpha, scale, input_scale));
}

at::Tensor EluBackwardCpu(const at::Tensor& grad_output, double alpha, double scale,
                          double input_scale, bool is_result, const at::Tensor& self_or_result) {
  CheckEluCoefficients(alpha, scale, input_scale, "elu_backward");
  // PyTorch's message for the same rule.
  TORCH_CHECK(!is_result || alpha >= 0.0,
              "In-place elu backward calculation is triggered with a negative slope which is not "
              "supported. This is caused by calling in-place forward function with a negative "
              "slope, please call out-of-place version instead.");
  return BinaryCpu(grad_output, self_or_result, "elu_backward",
                   [&](leaky_dtype dtype, size_t n, const void* dy, const void* saved, void* dx,
                       const leaky_options* options) {
                     return leaky_elu_backward(dtype, n, dy, saved, is_result ? 1 : 0, dx, alpha,
                                               scale, input_scale, options);
                   });
}

at::Tensor CallElu(const at::Tensor& self, double alpha, double scale, double input_scale) {
  static const auto op = Find<at::Tensor(const at::Tensor&, double, double, double)>("leaky::elu");
  return op.call(self, alpha, scale, input_scale);
}
at::Tensor& CallEluInplace(at::Tensor& self, double alpha, double scale, double input_scale) {
  static const auto op = Find<at::Tensor&(at::Tensor&, double, double, double)>("leaky::elu_");
  return op.call(self, alpha, scale, input_scale);
}
at::Tensor CallEluBackward(const at::Tensor& grad_output, double alpha, double scale,
                           double input_scale, bool is_result, const at::Tensor& saved) {
  static const auto op = Find<at::Tensor(const at::Tensor&, double, double, double, bool, const at::Tensor&)>("leaky::elu_backward");
  return op.call(grad_output, alpha, scale, input_scale, is_result, saved);
}

struct EluCoefficients {
  double alpha, scale, input_scale;
  void Save(AutogradContext* ctx) const {
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["input_scale"] = input_scale;
  }
  static EluCoefficients Load(AutogradContext* ctx) {
    return {ctx->saved_data["alpha"].toDouble(), ctx->saved_data["scale"].toDouble(),
            ctx->saved_data["input_scale"].toDouble()};
  }
};

class EluFunction : public torch::autograd::Function<EluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, double alpha,
                            double scale, double input_scale) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    EluCoefficients{alpha, scale, input_scale}.Save(ctx);
    return CallElu(self, alpha, scale, input_scale);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const EluCoefficients c = EluCoefficients::Load(ctx);
    return {CallEluBackward(grad_outputs[0], c.alpha, c.scale, c.input_scale, false,
                            ctx->get_saved_variables()[0]),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

class EluInplaceFunction : public torch::autograd::Function<EluInplaceFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::Tensor self, double alpha, double scale,
                            double input_scale) {
    {
      at::AutoDispatchBelowADInplaceOrView below_autograd;
      CallEluInplace(self, alpha, scale, input_scale);
    }
    ctx->mark_dirty({self});
    ctx->save_for_backward({self});
    EluCoefficients{alpha, scale, input_scale}.Save(ctx);
    return self;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const EluCoefficients c = EluCoefficients::Load(ctx);
    return {CallEluBackward(grad_outputs[0], c.alpha, c.scale, c.input_scale, true,
                            ctx->get_saved_variables()[0]),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// dx = elu_backward(dy, saved). Its derivative in dy is elu_backward again.
// In saved, where saved <= 0 (elsewhere dx does not depend on it):
//   from the input x:  d/dx [dy*is*coef*exp(x*is)] = is * dx
//   from the result y: d/dy [dy*is*(y + coef)]     = is * dy
// built from differentiable ops, so any order works.
class EluBackwardFunction : public torch::autograd::Function<EluBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_output, double alpha,
                            double scale, double input_scale, bool is_result,
                            const at::Tensor& saved) {
    at::Tensor dx;
    {
      at::AutoDispatchBelowADInplaceOrView below_autograd;
      dx = CallEluBackward(grad_output, alpha, scale, input_scale, is_result, saved);
    }
    ctx->save_for_backward({grad_output, saved});
    EluCoefficients{alpha, scale, input_scale}.Save(ctx);
    ctx->saved_data["is_result"] = is_result;
    return dx;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const EluCoefficients c = EluCoefficients::Load(ctx);
    const bool is_result = ctx->saved_data["is_result"].toBool();
    const auto saved_variables = ctx->get_saved_variables();
    const at::Tensor& grad_output = saved_variables[0];
    const at::Tensor& saved = saved_variables[1];
    const at::Tensor& gg = grad_outputs[0];
    const at::Tensor d_grad_output =
        CallEluBackward(gg, c.alpha, c.scale, c.input_scale, is_result, saved);
    const at::Tensor negative_side = saved <= 0;
    const at::Tensor d_saved =
        is_result
            ? at::where(negative_side, gg * grad_output * c.input_scale, at::zeros_like(gg))
            : at::where(negative_side,
                        CallEluBackward(gg * grad_output, c.alpha, c.scale, c.input_scale, false,
                                        saved) * c.input_scale,
                        at::zeros_like(gg));
    return {d_grad_output, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), d_saved};
  }
};

at::Tensor EluAutograd(const at::Tensor& self, double alpha, double scale, double input_scale) {
  return ApplyOrCall<EluFunction>(
      {&self}, [&] { return CallElu(self, alpha, scale, input_scale); }, self, alpha, scale,
      input_scale);
}

at::Tensor& EluInplaceAutograd(at::Tensor& self, double alpha, double scale, double input_scale) {
  torch::autograd::check_inplace(self, self.requires_grad());
  EluInplaceFunction::apply(self, alpha, scale, input_scale);
  return self;
}

at::Tensor EluBackwardAutograd(const at::Tensor& grad_output, double alpha, double scale,
                               double input_scale, bool is_result, const at::Tensor& saved) {
  return ApplyOrCall<EluBackwardFunction>(
      {&grad_output, &saved},
      [&] { return CallEluBackward(grad_output, alpha, scale, input_scale, is_result, saved); },
      grad_output, alpha, scale, input_scale, is_result, saved);
}

at::Tensor EluMeta(const at::Tensor& self, double, double, double) {
  return UnaryMeta(self, "elu");
}
at::Tensor& EluInplaceMeta(at::Tensor& self, double, double, double) {
  DtypeOf(self, "elu_");
  return self;
}
at::Tensor EluBackwardMeta(const at::Tensor& grad_output, double, double, double, bool,
                           const at::Tensor& saved) {
  return BinaryMeta(grad_output, saved, "elu_backward");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  // PyTorch's elu / elu_ / elu_backward, with float for Scalar.
  m.def("elu(Tensor self, float alpha=1.0, float scale=1.0, float input_scale=1.0) -> Tensor");
  m.def("elu_(Tensor(a!) self, float alpha=1.0, float scale=1.0, float input_scale=1.0) "
        "-> Tensor(a!)");
  m.def("elu_backward(Tensor grad_output, float alpha, float scale, float input_scale, "
        "bool is_result, Tensor self_or_result) -> Tensor");
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("elu", &EluCpu);
  m.impl("elu_", &EluInplaceCpu);
  m.impl("elu_backward", &EluBackwardCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("elu", &EluAutograd);
  m.impl("elu_", &EluInplaceAutograd);
  m.impl("elu_backward", &EluBackwardAutograd);
}

TORCH_LIBRARY_IMPL(leaky, Meta, m) {
  m.impl("elu", &EluMeta);
  m.impl("elu_", &EluInplaceMeta);
  m.impl("elu_backward", &EluBackwardMeta);
}

}  // namespace leaky::torch_ops

// RReLU as `leaky` PyTorch operators, mirroring PyTorch's own:
//   rrelu(self, lower, upper, training, seed, offset) -> y
//   rrelu_with_noise(...) -> (y, noise)
//   rrelu_backward(grad_output, self, lower, upper, training, seed, offset) -> dx
// The slopes come from the (seed, offset) Philox stream in the memory order
// of the processed tensor; backward draws them again from the same stream
// instead of keeping a noise tensor.
#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/library.h>

#include "common.h"
#include "leaky/leaky.h"

namespace leaky::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

leaky_rrelu_params RreluParams(double lower, double upper, bool training, int64_t seed,
                               int64_t offset, const char* op) {
  TORCH_CHECK(std::isfinite(lower) && std::isfinite(upper) && lower <= upper, "leaky::", op,
              ": lower = ", lower, " and upper = ", upper,
              " must be finite with lower <= upper");
  return leaky_rrelu_params{lower, upper, training ? 1 : 0, static_cast<uint64_t>(seed),
                            static_cast<uint64_t>(offset)};
}

std::tuple<at::Tensor, at::Tensor> RreluWithNoiseCpu(const at::Tensor& self, double lower,
                                                     double upper, bool training, int64_t seed,
                                                     int64_t offset) {
  CheckCpu(self, "rrelu", "self");
  const leaky_dtype dtype = DtypeOf(self, "rrelu");
  const leaky_rrelu_params p = RreluParams(lower, upper, training, seed, offset, "rrelu");
  const at::Tensor x = Dense(self);
  at::Tensor y = at::empty_like(x);
  // In evaluation every slope is the mean (PyTorch leaves its noise alone;
  // this returns ones for x > 0 and the mean slope elsewhere).
  at::Tensor noise = at::empty_like(x);
  const leaky_options options = Options();
  Check(leaky_rrelu_forward(dtype, static_cast<size_t>(x.numel()), x.data_ptr(), y.data_ptr(),
                            noise.data_ptr(), &p, &options),
        "rrelu");
  if (!training) noise = at::where(x <= 0, at::full_like(x, (lower + upper) / 2), at::ones_like(x));
  return {y, noise};
}

at::Tensor RreluCpu(const at::Tensor& self, double lower, double upper, bool training,
                    int64_t seed, int64_t offset) {
  CheckCpu(self, "rrelu", "self");
  const leaky_dtype dtype = DtypeOf(self, "rrelu");
  const leaky_rrelu_params p = RreluParams(lower, upper, training, seed, offset, "rrelu");
  const at::Tensor x = Dense(self);
  at::Tensor y = at::empty_like(x);
  const leaky_options options = Options();
  Check(leaky_rrelu_forward(dtype, static_cast<size_t>(x.numel()), x.data_ptr(), y.data_ptr(),
                            nullptr, &p, &options),
        "rrelu");
  return y;
}

at::Tensor RreluBackwardCpu(const at::Tensor& grad_output, const at::Tensor& self, double lower,
                            double upper, bool training, int64_t seed, int64_t offset) {
  CheckCpu(grad_output, "rrelu_backward", "grad_output");
  CheckCpu(self, "rrelu_backward", "self");
  TORCH_CHECK(grad_output.sizes() == self.sizes() &&
                  grad_output.scalar_type() == self.scalar_type(),
              "leaky::rrelu_backward: grad_output (", grad_output.sizes(), ", ",
              grad_output.scalar_type(), ") does not match self (", self.sizes(), ", ",
              self.scalar_type(), ")");
  const leaky_dtype dtype = DtypeOf(self, "rrelu_backward");
  const leaky_rrelu_params p = RreluParams(lower, upper, training, seed, offset, "rrelu_backward");
  // The forward's memory order, so every element meets its own slope.
  const at::Tensor x = Dense(self);
  const at::Tensor dy = SameLayoutAs(grad_output, x);
  at::Tensor dx = at::empty_like(x);
  const leaky_options options = Options();
  Check(leaky_rrelu_backward(dtype, static_cast<size_t>(x.numel()), dy.data_ptr(), x.data_ptr(),
                             dx.data_ptr(), &p, &options),
        "rrelu_backward");
  return dx;
}

using RreluSignature = at::Tensor(const at::Tensor&, double, double, bool, int64_t, int64_t);
using RreluBackwardSignature = at::Tensor(const at::Tensor&, const at::Tensor&, double, double,
                                          bool, int64_t, int64_t);

struct RreluArguments {
  double lower, upper;
  bool training;
  int64_t seed, offset;
  void Save(AutogradContext* ctx) const {
    ctx->saved_data["lower"] = lower;
    ctx->saved_data["upper"] = upper;
    ctx->saved_data["training"] = training;
    ctx->saved_data["seed"] = seed;
    ctx->saved_data["offset"] = offset;
  }
  static RreluArguments Load(AutogradContext* ctx) {
    return {ctx->saved_data["lower"].toDouble(), ctx->saved_data["upper"].toDouble(),
            ctx->saved_data["training"].toBool(), ctx->saved_data["seed"].toInt(),
            ctx->saved_data["offset"].toInt()};
  }
  at::Tensor Backward(const at::Tensor& grad_output, const at::Tensor& self) const {
    static const auto op = Find<RreluBackwardSignature>("leaky::rrelu_backward");
    return op.call(grad_output, self, lower, upper, training, seed, offset);
  }
};

class RreluFunction : public torch::autograd::Function<RreluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, double lower,
                            double upper, bool training, int64_t seed, int64_t offset) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    RreluArguments{lower, upper, training, seed, offset}.Save(ctx);
    static const auto op = Find<RreluSignature>("leaky::rrelu");
    return op.call(self, lower, upper, training, seed, offset);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor dx =
        RreluArguments::Load(ctx).Backward(grad_outputs[0], ctx->get_saved_variables()[0]);
    return {dx, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// dx = g * slope(x): linear in g, piecewise constant in x.
class RreluBackwardFunction : public torch::autograd::Function<RreluBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_output,
                            const at::Tensor& self, double lower, double upper, bool training,
                            int64_t seed, int64_t offset) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    const RreluArguments a{lower, upper, training, seed, offset};
    a.Save(ctx);
    return a.Backward(grad_output, self);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor d_grad =
        RreluArguments::Load(ctx).Backward(grad_outputs[0], ctx->get_saved_variables()[0]);
    return {d_grad,       at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor RreluAutograd(const at::Tensor& self, double lower, double upper, bool training,
                         int64_t seed, int64_t offset) {
  return ApplyOrCall<RreluFunction>(
      {&self},
      [&] {
        static const auto op = Find<RreluSignature>("leaky::rrelu");
        return op.call(self, lower, upper, training, seed, offset);
      },
      self, lower, upper, training, seed, offset);
}
at::Tensor RreluBackwardAutograd(const at::Tensor& grad_output, const at::Tensor& self,
                                 double lower, double upper, bool training, int64_t seed,
                                 int64_t offset) {
  return RreluBackwardFunction::apply(grad_output, self, lower, upper, training, seed, offset);
}

at::Tensor RreluMeta(const at::Tensor& self, double, double, bool, int64_t, int64_t) {
  return UnaryMeta(self, "rrelu");
}
std::tuple<at::Tensor, at::Tensor> RreluWithNoiseMeta(const at::Tensor& self, double, double, bool,
                                                      int64_t, int64_t) {
  return {UnaryMeta(self, "rrelu_with_noise"), at::empty_like(self)};
}
at::Tensor RreluBackwardMeta(const at::Tensor& grad_output, const at::Tensor& self, double, double,
                             bool, int64_t, int64_t) {
  return BinaryMeta(grad_output, self, "rrelu_backward");
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  // PyTorch's rrelu / rrelu_with_noise, with an explicit (seed, offset)
  // stream for its Generator.
  m.def("rrelu(Tensor self, float lower=0.125, float upper=0.3333333333333333, "
        "bool training=False, int seed=0, int offset=0) -> Tensor");
  m.def("rrelu_with_noise(Tensor self, float lower=0.125, float upper=0.3333333333333333, "
        "bool training=False, int seed=0, int offset=0) -> (Tensor, Tensor)");
  m.def("rrelu_backward(Tensor grad_output, Tensor self, float lower, float upper, "
        "bool training, int seed, int offset) -> Tensor");
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("rrelu", &RreluCpu);
  m.impl("rrelu_with_noise", &RreluWithNoiseCpu);
  m.impl("rrelu_backward", &RreluBackwardCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("rrelu", &RreluAutograd);
  m.impl("rrelu_backward", &RreluBackwardAutograd);
}

TORCH_LIBRARY_IMPL(leaky, Meta, m) {
  m.impl("rrelu", &RreluMeta);
  m.impl("rrelu_with_noise", &RreluWithNoiseMeta);
  m.impl("rrelu_backward", &RreluBackwardMeta);
}

// rrelu_with_noise has no autograd of its own: CPU tensors fall through to the CPU
// kernel (PyTorch's AutogradCPU fallthrough); meta tensors need it said.
TORCH_LIBRARY_IMPL(leaky, AutogradMeta, m) {
  m.impl("rrelu_with_noise", torch::CppFunction::makeFallthrough());
}

}  // namespace leaky::torch_ops

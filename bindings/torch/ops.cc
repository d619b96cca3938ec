// The `leaky` operator library for PyTorch: schemas (TORCH_LIBRARY), CPU
// kernels that call the core C API, and Autograd kernels whose backward is
// itself a `leaky` operator with its own derivative, so that gradients of
// gradients (the R1 penalty of GAN training) work to any order.
//
// Layouts: an elementwise op does not care about element order, so any
// tensor whose elements fill a dense block of memory (contiguous,
// channels-last, permuted) is processed in place in memory order, and the
// result has the input's strides. Tensors with gaps or overlaps (slices with
// a step, expanded views) are first copied with .contiguous(): documented,
// never a silent wrong answer.
#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>

#include "common.h"
#include "leaky/leaky.h"
#include "output_cache.h"

namespace leaky::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

void CheckSlope(double slope, const char* op) {
  TORCH_CHECK(std::isfinite(slope), "leaky::", op, ": negative_slope = ", slope,
              " is not finite");
}

// y = op(x) for any layout; `run(dtype, n, src, dst, options)` calls the C API.
template <class Run>
at::Tensor UnaryCpu(const at::Tensor& self, const char* op, Run run) {
  CheckCpu(self, op, "self");
  const leaky_dtype dtype = DtypeOf(self, op);
  const at::Tensor x = Dense(self);
  at::Tensor y = OutputCache::Get().EmptyLike(x);  // same strides as the dense x
  const leaky_options options = Options();
  Check(run(dtype, static_cast<size_t>(x.numel()), x.data_ptr(), y.data_ptr(), &options), op);
  return y;
}

template <class Run>
at::Tensor& UnaryInplaceCpu(at::Tensor& self, const char* op, Run run) {
  CheckCpu(self, op, "self");
  const leaky_dtype dtype = DtypeOf(self, op);
  at::assert_no_internal_overlap(self);
  if (self.is_non_overlapping_and_dense()) {
    const leaky_options options = Options();
    Check(run(dtype, static_cast<size_t>(self.numel()), self.data_ptr(), self.data_ptr(),
              &options),
          op);
  } else {
    self.copy_(UnaryCpu(self, op, run));
  }
  return self;
}

// dx = op(dy, saved): both in one layout (dense with equal strides, or
// packed copies), so elements pair up in memory order.
template <class Run>
at::Tensor BinaryCpu(const at::Tensor& grad_output, const at::Tensor& self, const char* op,
                     Run run) {
  CheckCpu(grad_output, op, "grad_output");
  CheckCpu(self, op, "self");
  TORCH_CHECK(grad_output.sizes() == self.sizes(), "leaky::", op, ": grad_output of shape ",
              grad_output.sizes(), " does not match self of shape ", self.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), "leaky::", op,
              ": grad_output is ", grad_output.scalar_type(), " but self is ",
              self.scalar_type());
  const leaky_dtype dtype = DtypeOf(self, op);
  at::Tensor saved = Dense(self);
  at::Tensor dy = grad_output;
  if (!dy.is_non_overlapping_and_dense() || dy.strides() != saved.strides()) {
    saved = self.contiguous();
    dy = grad_output.contiguous();
  }
  at::Tensor dx = OutputCache::Get().EmptyLike(saved);
  const leaky_options options = Options();
  Check(run(dtype, static_cast<size_t>(saved.numel()), dy.data_ptr(), saved.data_ptr(),
            dx.data_ptr(), &options),
        op);
  return dx;
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

at::Tensor ReluCpu(const at::Tensor& self) {
  return UnaryCpu(self, "relu", &leaky_plain_relu_forward);
}

at::Tensor& ReluInplaceCpu(at::Tensor& self) {
  return UnaryInplaceCpu(self, "relu_", &leaky_plain_relu_forward);
}

at::Tensor ReluBackwardCpu(const at::Tensor& grad_output, const at::Tensor& result) {
  return BinaryCpu(grad_output, result, "relu_backward", &leaky_plain_relu_backward);
}

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

// ------------------------------------------------------------ bias_act
leaky_bias_act_params BiasActParams(c10::string_view act, double alpha, double gain,
                                    c10::optional<double> clamp) {
  leaky_bias_act_params p{};
  if (act == "lrelu") p.activation = LEAKY_ACT_LRELU;
  else if (act == "relu") p.activation = LEAKY_ACT_RELU;
  else if (act == "linear") p.activation = LEAKY_ACT_LINEAR;
  else TORCH_CHECK(false, "leaky::bias_act: act '", act, "' is not 'lrelu', 'relu' or 'linear'");
  p.alpha = alpha;
  p.gain = gain;
  TORCH_CHECK(!clamp.has_value() || (std::isfinite(*clamp) && *clamp >= 0),
              "leaky::bias_act: clamp must be a finite value >= 0 or None");
  p.clamp = clamp.has_value() ? *clamp : -1.0;
  return p;
}

at::Tensor CheckedBias(const c10::optional<at::Tensor>& b, const ChannelView& v,
                       const at::Tensor& x) {
  if (!b.has_value() || !b->defined()) return at::Tensor();
  return CheckedPerChannel(*b, v.channels, x, "bias_act", "b");
}

void CheckDropoutP(double p, const char* op) {
  TORCH_CHECK(p >= 0.0 && p < 1.0, "leaky::", op, ": dropout_p = ", p, " is not in [0, 1)");
}

// y and, with dropout, the 1-bit keep mask of the elements in the memory
// order of the processed tensor (the same order backward sees).
std::tuple<at::Tensor, at::Tensor> BiasActForwardCpu(
    const at::Tensor& x, const c10::optional<at::Tensor>& b, int64_t dim, c10::string_view act,
    double alpha, double gain, c10::optional<double> clamp, double dropout_p, int64_t seed,
    int64_t offset, bool with_dropout) {
  CheckCpu(x, "bias_act", "x");
  const leaky_dtype dtype = DtypeOf(x, "bias_act");
  CheckDropoutP(dropout_p, "bias_act");
  const leaky_bias_act_params p = BiasActParams(act, alpha, gain, clamp);
  const ChannelView v = ViewAroundChannels(x, dim, "bias_act");
  const at::Tensor bias = CheckedBias(b, v, x);
  at::Tensor y = OutputCache::Get().EmptyLike(v.x);
  const leaky_options options = Options();
  const void* bias_data = bias.defined() ? bias.data_ptr() : nullptr;
  if (!with_dropout) {
    Check(leaky_bias_act_forward(dtype, v.outer, v.channels, v.inner, v.x.data_ptr(), bias_data,
                                 y.data_ptr(), &p, &options),
          "bias_act");
    return {y, at::Tensor()};
  }
  const auto n = static_cast<size_t>(v.x.numel());
  at::Tensor mask = at::empty({static_cast<int64_t>((n + 7) / 8)}, x.options().dtype(at::kByte));
  // seed and offset: int64 in the schema, their bits are the 64-bit key.
  const leaky_dropout_params dropout{dropout_p, static_cast<uint64_t>(seed),
                                     static_cast<uint64_t>(offset)};
  Check(leaky_bias_act_dropout_forward(dtype, v.outer, v.channels, v.inner, v.x.data_ptr(),
                                       bias_data, y.data_ptr(), mask.data_ptr<uint8_t>(), &p,
                                       &dropout, &options),
        "bias_act");
  return {y, mask};
}

at::Tensor BiasActCpu(const at::Tensor& x, const c10::optional<at::Tensor>& b, int64_t dim,
                      c10::string_view act, double alpha, double gain,
                      c10::optional<double> clamp, double dropout_p, int64_t seed,
                      int64_t offset) {
  return std::get<0>(BiasActForwardCpu(x, b, dim, act, alpha, gain, clamp, dropout_p, seed,
                                       offset, dropout_p > 0.0));
}

std::tuple<at::Tensor, at::Tensor> BiasActDropoutCpu(
    const at::Tensor& x, const c10::optional<at::Tensor>& b, int64_t dim, c10::string_view act,
    double alpha, double gain, c10::optional<double> clamp, double dropout_p, int64_t seed,
    int64_t offset) {
  return BiasActForwardCpu(x, b, dim, act, alpha, gain, clamp, dropout_p, seed, offset, true);
}

std::tuple<at::Tensor, at::Tensor> BiasActBackwardCpu(
    const at::Tensor& grad_output, const at::Tensor& x, const c10::optional<at::Tensor>& b,
    int64_t dim, c10::string_view act, double alpha, double gain, c10::optional<double> clamp,
    const c10::optional<at::Tensor>& mask, double dropout_p) {
  CheckCpu(grad_output, "bias_act_backward", "grad_output");
  CheckCpu(x, "bias_act_backward", "x");
  TORCH_CHECK(grad_output.sizes() == x.sizes() && grad_output.scalar_type() == x.scalar_type(),
              "leaky::bias_act_backward: grad_output (", grad_output.sizes(), ", ",
              grad_output.scalar_type(), ") does not match x (", x.sizes(), ", ",
              x.scalar_type(), ")");
  const leaky_dtype dtype = DtypeOf(x, "bias_act_backward");
  const leaky_bias_act_params p = BiasActParams(act, alpha, gain, clamp);
  // x in the forward's order; grad_output follows it (the mask bits do too).
  const ChannelView v = ViewAroundChannels(x, dim, "bias_act_backward");
  const at::Tensor dy = SameLayoutAs(grad_output, v.x);
  const at::Tensor bias = CheckedBias(b, v, x);
  at::Tensor dx = OutputCache::Get().EmptyLike(v.x);
  // Without a bias, grad_b is an empty tensor (an undefined one cannot leave
  // an autograd Function).
  at::Tensor db = at::empty({bias.defined() ? static_cast<int64_t>(v.channels) : 0}, x.options());
  const leaky_options options = Options();
  const void* bias_data = bias.defined() ? bias.data_ptr() : nullptr;
  void* db_data = bias.defined() ? db.data_ptr() : nullptr;
  if (mask.has_value() && mask->defined()) {
    CheckCpu(*mask, "bias_act_backward", "mask");
    CheckDropoutP(dropout_p, "bias_act_backward");
    const auto n = static_cast<size_t>(v.x.numel());
    TORCH_CHECK(mask->scalar_type() == at::kByte && mask->dim() == 1 &&
                    static_cast<size_t>(mask->numel()) == (n + 7) / 8,
                "leaky::bias_act_backward: mask must be uint8 of shape [", (n + 7) / 8,
                "] (one bit per element), got ", mask->scalar_type(), " ", mask->sizes());
    const at::Tensor bits = mask->contiguous();
    Check(leaky_bias_act_dropout_backward(dtype, v.outer, v.channels, v.inner, dy.data_ptr(),
                                          v.x.data_ptr(), bias_data, bits.data_ptr<uint8_t>(),
                                          dx.data_ptr(), db_data, &p, dropout_p, &options),
          "bias_act_backward");
  } else {
    TORCH_CHECK(dropout_p == 0.0, "leaky::bias_act_backward: dropout_p = ", dropout_p,
                " needs the forward's mask");
    Check(leaky_bias_act_backward(dtype, v.outer, v.channels, v.inner, dy.data_ptr(),
                                  v.x.data_ptr(), bias_data, dx.data_ptr(), db_data, &p,
                                  &options),
          "bias_act_backward");
  }
  return {dx, db};
}

// ------------------------------------------------------------ dispatcher handles
// Autograd kernels reach the CPU kernels through the dispatcher, below the
// autograd key, and backward passes call the public ops (with their own
// Autograd kernels) so that they are differentiable again.
// Each Call* looks its operator up once (a static per function).

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

using BiasActSignature = at::Tensor(const at::Tensor&, const c10::optional<at::Tensor>&, int64_t,
                                    c10::string_view, double, double, c10::optional<double>,
                                    double, int64_t, int64_t);
using BiasActDropoutSignature = std::tuple<at::Tensor, at::Tensor>(
    const at::Tensor&, const c10::optional<at::Tensor>&, int64_t, c10::string_view, double,
    double, c10::optional<double>, double, int64_t, int64_t);
using BiasActBackwardSignature = std::tuple<at::Tensor, at::Tensor>(
    const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&, int64_t,
    c10::string_view, double, double, c10::optional<double>, const c10::optional<at::Tensor>&,
    double);

// bias_act's arguments, as saved between forward and backward.
struct BiasActArguments {
  int64_t dim;
  std::string act;
  double alpha, gain;
  c10::optional<double> clamp;
  double dropout_p = 0.0;
  int64_t seed = 0, offset = 0;
  void Save(AutogradContext* ctx) const {
    ctx->saved_data["dim"] = dim;
    ctx->saved_data["act"] = act;
    ctx->saved_data["alpha"] = alpha;
    ctx->saved_data["gain"] = gain;
    ctx->saved_data["has_clamp"] = clamp.has_value();
    ctx->saved_data["clamp"] = clamp.value_or(0.0);
    ctx->saved_data["dropout_p"] = dropout_p;
  }
  static BiasActArguments Load(AutogradContext* ctx) {
    BiasActArguments a{ctx->saved_data["dim"].toInt(), ctx->saved_data["act"].toStringRef(),
                       ctx->saved_data["alpha"].toDouble(), ctx->saved_data["gain"].toDouble(),
                       c10::nullopt, ctx->saved_data["dropout_p"].toDouble()};
    if (ctx->saved_data["has_clamp"].toBool()) a.clamp = ctx->saved_data["clamp"].toDouble();
    return a;
  }
};

// y (and, with dropout, the mask), below the autograd key.
std::tuple<at::Tensor, at::Tensor> CallBiasAct(const at::Tensor& x,
                                               const c10::optional<at::Tensor>& b,
                                               const BiasActArguments& a) {
  CheckDropoutP(a.dropout_p, "bias_act");  // before the branch: a NaN p is no "no dropout"
  if (a.dropout_p > 0.0) {
    static const auto op = Find<BiasActDropoutSignature>("leaky::bias_act_dropout");
    return op.call(x, b, a.dim, a.act, a.alpha, a.gain, a.clamp, a.dropout_p, a.seed, a.offset);
  }
  static const auto op = Find<BiasActSignature>("leaky::bias_act");
  return {op.call(x, b, a.dim, a.act, a.alpha, a.gain, a.clamp, 0.0, 0, 0), at::Tensor()};
}
std::tuple<at::Tensor, at::Tensor> CallBiasActBackward(const at::Tensor& grad_output,
                                                       const at::Tensor& x,
                                                       const c10::optional<at::Tensor>& b,
                                                       const at::Tensor& mask,
                                                       const BiasActArguments& a) {
  static const auto op = Find<BiasActBackwardSignature>("leaky::bias_act_backward");
  const c10::optional<at::Tensor> m =
      mask.defined() ? c10::optional<at::Tensor>(mask) : c10::nullopt;
  return op.call(grad_output, x, b, a.dim, a.act, a.alpha, a.gain, a.clamp, m, a.dropout_p);
}

// ------------------------------------------------------------ autograd
// Forward functions save what backward needs; backward calls the ops above.
// In-place forms save the result (the input is gone) and mark it dirty, which
// bumps the version counter and rebases the history, as PyTorch's own do.

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

// gg_b broadcast along the channel axis of x's shape, added to gg_x.
at::Tensor WithBroadcastBias(const at::Tensor& gg_x, const at::Tensor& gg_b, const at::Tensor& x,
                             int64_t dim) {
  if (!gg_b.defined() || gg_b.numel() == 0) return gg_x;
  const int64_t axis = dim < 0 ? dim + x.dim() : dim;
  std::vector<int64_t> shape(static_cast<size_t>(x.dim()), 1);
  shape[static_cast<size_t>(axis)] = x.size(axis);
  const at::Tensor broadcast = gg_b.reshape(shape).expand(x.sizes());
  return gg_x.defined() ? gg_x + broadcast : broadcast.contiguous();
}

c10::optional<at::Tensor> Optional(const at::Tensor& t) {
  return t.defined() ? c10::optional<at::Tensor>(t) : c10::nullopt;
}

// Saves x, the bias (undefined if none) and the dropout mask (undefined if
// none; one bit per element, never differentiated).
class BiasActFunction : public torch::autograd::Function<BiasActFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x,
                            const c10::optional<at::Tensor>& b, int64_t dim, std::string act,
                            double alpha, double gain, c10::optional<double> clamp,
                            double dropout_p, int64_t seed, int64_t offset) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    const BiasActArguments a{dim, act, alpha, gain, clamp, dropout_p, seed, offset};
    auto [y, mask] = CallBiasAct(x, b, a);
    ctx->save_for_backward({x, b.has_value() ? *b : at::Tensor(), mask});
    a.Save(ctx);
    return y;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const BiasActArguments a = BiasActArguments::Load(ctx);
    const c10::optional<at::Tensor> bias = Optional(saved[1]);
    auto [dx, db] = CallBiasActBackward(grad_outputs[0], saved[0], bias, saved[2], a);
    if (!bias.has_value()) db = at::Tensor();
    return {dx,          db,          at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// (dx, db) are linear in grad_output with a factor that depends on x + b
// only through comparisons (zero derivative almost everywhere) and on the
// fixed dropout mask: the gradient flows to grad_output alone, through
// bias_act_backward itself.
class BiasActBackwardFunction : public torch::autograd::Function<BiasActBackwardFunction> {
 public:
  static variable_list forward(AutogradContext* ctx, const at::Tensor& grad_output,
                               const at::Tensor& x, const c10::optional<at::Tensor>& b,
                               int64_t dim, std::string act, double alpha, double gain,
                               c10::optional<double> clamp, const c10::optional<at::Tensor>& mask,
                               double dropout_p) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    const at::Tensor bits = mask.has_value() ? *mask : at::Tensor();
    ctx->save_for_backward({x, b.has_value() ? *b : at::Tensor(), bits});
    const BiasActArguments a{dim, act, alpha, gain, clamp, dropout_p};
    a.Save(ctx);
    auto [dx, db] = CallBiasActBackward(grad_output, x, b, bits, a);
    return {dx, db};
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const BiasActArguments a = BiasActArguments::Load(ctx);
    const at::Tensor g = WithBroadcastBias(grad_outputs[0], grad_outputs[1], saved[0], a.dim);
    at::Tensor d_grad_output;
    if (g.defined()) {
      d_grad_output = std::get<0>(CallBiasActBackward(g, saved[0], Optional(saved[1]), saved[2], a));
    }
    return {d_grad_output, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor(),  at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

at::Tensor BiasActAutograd(const at::Tensor& x, const c10::optional<at::Tensor>& b, int64_t dim,
                           c10::string_view act, double alpha, double gain,
                           c10::optional<double> clamp, double dropout_p, int64_t seed,
                           int64_t offset) {
  return ApplyOrCall<BiasActFunction>(
      {&x, b.has_value() ? &*b : &x},
      [&] {
        const BiasActArguments a{dim, std::string(act), alpha, gain, clamp, dropout_p, seed,
                                 offset};
        return std::get<0>(CallBiasAct(x, b, a));
      },
      x, b, dim, std::string(act), alpha, gain, clamp, dropout_p, seed, offset);
}

std::tuple<at::Tensor, at::Tensor> BiasActBackwardAutograd(
    const at::Tensor& grad_output, const at::Tensor& x, const c10::optional<at::Tensor>& b,
    int64_t dim, c10::string_view act, double alpha, double gain, c10::optional<double> clamp,
    const c10::optional<at::Tensor>& mask, double dropout_p) {
  auto outputs = BiasActBackwardFunction::apply(grad_output, x, b, dim, std::string(act), alpha,
                                                gain, clamp, mask, dropout_p);
  return {outputs[0], outputs[1]};
}

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

}  // namespace

void EmptyCache() { OutputCache::Get().Clear(); }

TORCH_LIBRARY(leaky, m) {
  m.def("leaky_relu(Tensor self, float negative_slope=0.01) -> Tensor");
  m.def("leaky_relu_(Tensor(a!) self, float negative_slope=0.01) -> Tensor(a!)");
  m.def("leaky_relu_backward(Tensor grad_output, Tensor self, float negative_slope, "
        "bool self_is_result) -> Tensor");
  // PyTorch's relu; the backward is threshold_backward at 0 on the result.
  m.def("relu(Tensor self) -> Tensor");
  m.def("relu_(Tensor(a!) self) -> Tensor(a!)");
  m.def("relu_backward(Tensor grad_output, Tensor result) -> Tensor");
  // PyTorch's elu / elu_ / elu_backward, with float for Scalar.
  m.def("elu(Tensor self, float alpha=1.0, float scale=1.0, float input_scale=1.0) -> Tensor");
  m.def("elu_(Tensor(a!) self, float alpha=1.0, float scale=1.0, float input_scale=1.0) "
        "-> Tensor(a!)");
  m.def("elu_backward(Tensor grad_output, float alpha, float scale, float input_scale, "
        "bool is_result, Tensor self_or_result) -> Tensor");
  m.def("bias_act(Tensor x, Tensor? b=None, int dim=1, str act=\"lrelu\", float alpha=0.2, "
        "float gain=1.4142135623730951, float? clamp=None, float dropout_p=0.0, int seed=0, "
        "int offset=0) -> Tensor");
  m.def("bias_act_backward(Tensor grad_output, Tensor x, Tensor? b, int dim, str act, "
        "float alpha, float gain, float? clamp, Tensor? mask=None, float dropout_p=0.0) "
        "-> (Tensor, Tensor)");
  // bias_act with dropout, also returning the keep mask (uint8, one bit per
  // element in memory order); no autograd of its own: bias_act is the
  // differentiable form, and saves this mask.
  m.def("bias_act_dropout(Tensor x, Tensor? b, int dim, str act, float alpha, float gain, "
        "float? clamp, float dropout_p, int seed, int offset) -> (Tensor, Tensor)");
  // Returns the idle blocks of the output cache (output_cache.h) to the system.
  m.def("empty_cache() -> ()", &EmptyCache);
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("leaky_relu", &LeakyReluCpu);
  m.impl("leaky_relu_", &LeakyReluInplaceCpu);
  m.impl("leaky_relu_backward", &LeakyReluBackwardCpu);
  m.impl("relu", &ReluCpu);
  m.impl("relu_", &ReluInplaceCpu);
  m.impl("relu_backward", &ReluBackwardCpu);
  m.impl("elu", &EluCpu);
  m.impl("elu_", &EluInplaceCpu);
  m.impl("elu_backward", &EluBackwardCpu);
  m.impl("bias_act", &BiasActCpu);
  m.impl("bias_act_backward", &BiasActBackwardCpu);
  m.impl("bias_act_dropout", &BiasActDropoutCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("leaky_relu", &LeakyReluAutograd);
  m.impl("leaky_relu_", &LeakyReluInplaceAutograd);
  m.impl("leaky_relu_backward", &LeakyReluBackwardAutograd);
  m.impl("relu", &ReluAutograd);
  m.impl("relu_", &ReluInplaceAutograd);
  m.impl("relu_backward", &ReluBackwardAutograd);
  m.impl("elu", &EluAutograd);
  m.impl("elu_", &EluInplaceAutograd);
  m.impl("elu_backward", &EluBackwardAutograd);
  m.impl("bias_act", &BiasActAutograd);
  m.impl("bias_act_backward", &BiasActBackwardAutograd);
}

}  // namespace leaky::torch_ops

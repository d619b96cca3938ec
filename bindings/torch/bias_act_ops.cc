// bias_act (StyleGAN's fused bias + activation + gain + clamp, with optional
// dropout whose keep mask is saved as one bit per element) as `leaky`
// PyTorch operators: bias_act, bias_act_dropout, bias_act_backward and
// bias_act_dropout_backward.
#include <ATen/ATen.h>
#include <torch/autograd.h>
#include <torch/csrc/autograd/VariableTypeUtils.h>
#include <torch/library.h>

#include <optional>
#include <stdexcept>
#include <string_view>

#include "../bias_act_names.h"
#include "common.h"
#include "leaky/leaky.h"

namespace leaky::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// StyleGAN's defaults per activation, for an alpha or gain not given:
// linear: gain 1; relu: gain sqrt(2); lrelu: alpha 0.2, gain sqrt(2).
struct ResolvedAct {
  double alpha, gain;
};
std::string_view Std(c10::string_view s) { return {s.data(), s.size()}; }

ResolvedAct ActDefaults(c10::string_view act, c10::optional<double> alpha,
                        c10::optional<double> gain) {
  return {alpha.value_or(leaky::bindings::DefaultAlpha(Std(act))),
          gain.value_or(leaky::bindings::DefaultGain(Std(act)))};
}

// The activation by name and the clamp (bindings/bias_act_names.h, the
// NumPy binding's rule too), its errors as PyTorch's.
leaky_bias_act_params BiasActParams(c10::string_view act, double alpha, double gain,
                                    c10::optional<double> clamp) {
  try {
    return leaky::bindings::BiasActParams(
        Std(act), alpha, gain, clamp.has_value() ? std::optional<double>(*clamp) : std::nullopt);
  } catch (const std::invalid_argument& e) {
    TORCH_CHECK(false, "leaky::bias_act: ", e.what());
  }
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
  at::Tensor y = at::empty_like(v.x);
  const leaky_options options = Options();
  const void* bias_data = bias.defined() ? bias.data_ptr() : nullptr;
  if (!with_dropout) {
    Check(leaky_bias_act_forward(dtype, v.outer, v.channels, v.inner, v.x.data_ptr(), bias_data,
                                 y.data_ptr(), &p, &options),
          "bias_act");
    return {y, at::Tensor()};
  }
  const auto n = static_cast<size_t>(v.x.numel());
  // Zeroed: the last byte's bits past n are the caller's (leaky.h), and
  // one call should give one set of mask bytes.
  at::Tensor mask = at::zeros({static_cast<int64_t>((n + 7) / 8)}, x.options().dtype(at::kByte));
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
                      c10::string_view act, c10::optional<double> alpha,
                      c10::optional<double> gain, c10::optional<double> clamp, double dropout_p,
                      int64_t seed, int64_t offset) {
  const ResolvedAct r = ActDefaults(act, alpha, gain);
  return std::get<0>(BiasActForwardCpu(x, b, dim, act, r.alpha, r.gain, clamp, dropout_p, seed,
                                       offset, dropout_p > 0.0));
}

std::tuple<at::Tensor, at::Tensor> BiasActDropoutCpu(
    const at::Tensor& x, const c10::optional<at::Tensor>& b, int64_t dim, c10::string_view act,
    c10::optional<double> alpha, c10::optional<double> gain, c10::optional<double> clamp,
    double dropout_p, int64_t seed, int64_t offset) {
  const ResolvedAct r = ActDefaults(act, alpha, gain);
  return BiasActForwardCpu(x, b, dim, act, r.alpha, r.gain, clamp, dropout_p, seed, offset, true);
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
  at::Tensor dx = at::empty_like(v.x);
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

// The family's bias_act_dropout backward (leaky/family.h): bias_act_backward
// given the forward's mask. Not differentiable itself.
std::tuple<at::Tensor, at::Tensor> BiasActDropoutBackwardCpu(
    const at::Tensor& grad_output, const at::Tensor& x, const c10::optional<at::Tensor>& b,
    int64_t dim, c10::string_view act, double alpha, double gain, c10::optional<double> clamp,
    const at::Tensor& mask, double dropout_p) {
  return BiasActBackwardCpu(grad_output, x, b, dim, act, alpha, gain, clamp, mask, dropout_p);
}

using BiasActSignature = at::Tensor(const at::Tensor&, const c10::optional<at::Tensor>&, int64_t,
                                    c10::string_view, c10::optional<double>,
                                    c10::optional<double>, c10::optional<double>, double, int64_t,
                                    int64_t);
using BiasActDropoutSignature = std::tuple<at::Tensor, at::Tensor>(
    const at::Tensor&, const c10::optional<at::Tensor>&, int64_t, c10::string_view,
    c10::optional<double>, c10::optional<double>, c10::optional<double>, double, int64_t, int64_t);
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
    return op.call(x, b, a.dim, a.act, a.alpha, a.gain, a.clamp, a.dropout_p, a.seed,
                   a.offset);
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
                           c10::string_view act, c10::optional<double> alpha_given,
                           c10::optional<double> gain_given, c10::optional<double> clamp,
                           double dropout_p, int64_t seed, int64_t offset) {
  const auto [alpha, gain] = ActDefaults(act, alpha_given, gain_given);
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

at::Tensor BiasActMeta(const at::Tensor& x, const c10::optional<at::Tensor>&, int64_t dim,
                       c10::string_view, c10::optional<double>, c10::optional<double>,
                       c10::optional<double>, double, int64_t, int64_t) {
  (void)at::maybe_wrap_dim(dim, x.dim());
  return UnaryMeta(x, "bias_act");
}
std::tuple<at::Tensor, at::Tensor> BiasActDropoutMeta(
    const at::Tensor& x, const c10::optional<at::Tensor>& b, int64_t dim, c10::string_view act,
    c10::optional<double> alpha, c10::optional<double> gain, c10::optional<double> clamp,
    double dropout_p, int64_t seed, int64_t offset) {
  at::Tensor y = BiasActMeta(x, b, dim, act, alpha, gain, clamp, dropout_p, seed, offset);
  return {y, at::empty({(x.numel() + 7) / 8}, x.options().dtype(at::kByte))};
}
std::tuple<at::Tensor, at::Tensor> BiasActBackwardMeta(
    const at::Tensor& grad_output, const at::Tensor& x, const c10::optional<at::Tensor>& b,
    int64_t dim, c10::string_view, double, double, c10::optional<double>,
    const c10::optional<at::Tensor>&, double) {
  const int64_t axis = at::maybe_wrap_dim(dim, x.dim());
  const bool with_bias = b.has_value() && b->defined();
  return {BinaryMeta(grad_output, x, "bias_act_backward"),
          at::empty({with_bias ? x.size(axis) : 0}, x.options())};
}

std::tuple<at::Tensor, at::Tensor> BiasActDropoutBackwardMeta(
    const at::Tensor& grad_output, const at::Tensor& x, const c10::optional<at::Tensor>& b,
    int64_t dim, c10::string_view act, double alpha, double gain, c10::optional<double> clamp,
    const at::Tensor& mask, double dropout_p) {
  return BiasActBackwardMeta(grad_output, x, b, dim, act, alpha, gain, clamp, mask, dropout_p);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  // alpha and gain default by activation, as StyleGAN's (ActDefaults).
  m.def("bias_act(Tensor x, Tensor? b=None, int dim=1, str act=\"lrelu\", float? alpha=None, "
        "float? gain=None, float? clamp=None, float dropout_p=0.0, int seed=0, "
        "int offset=0) -> Tensor");
  m.def("bias_act_backward(Tensor grad_output, Tensor x, Tensor? b, int dim, str act, "
        "float alpha, float gain, float? clamp, Tensor? mask=None, float dropout_p=0.0) "
        "-> (Tensor, Tensor)");
  // bias_act with dropout, also returning the keep mask (uint8, one bit per
  // element in memory order); no autograd of its own: bias_act is the
  // differentiable form, and saves this mask.
  m.def("bias_act_dropout(Tensor x, Tensor? b, int dim, str act, float? alpha, float? gain, "
        "float? clamp, float dropout_p, int seed, int offset) -> (Tensor, Tensor)");
  m.def("bias_act_dropout_backward(Tensor grad_output, Tensor x, Tensor? b, int dim, str act, "
        "float alpha, float gain, float? clamp, Tensor mask, float dropout_p) "
        "-> (Tensor, Tensor)");
}

TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("bias_act", &BiasActCpu);
  m.impl("bias_act_backward", &BiasActBackwardCpu);
  m.impl("bias_act_dropout", &BiasActDropoutCpu);
  m.impl("bias_act_dropout_backward", &BiasActDropoutBackwardCpu);
}

TORCH_LIBRARY_IMPL(leaky, Autograd, m) {
  m.impl("bias_act", &BiasActAutograd);
  m.impl("bias_act_backward", &BiasActBackwardAutograd);
}

TORCH_LIBRARY_IMPL(leaky, Meta, m) {
  m.impl("bias_act", &BiasActMeta);
  m.impl("bias_act_dropout", &BiasActDropoutMeta);
  m.impl("bias_act_backward", &BiasActBackwardMeta);
  m.impl("bias_act_dropout_backward", &BiasActDropoutBackwardMeta);
}

// bias_act_dropout has no autograd of its own: CPU tensors fall through to the CPU
// kernel (PyTorch's AutogradCPU fallthrough); meta tensors need it said.
TORCH_LIBRARY_IMPL(leaky, AutogradMeta, m) {
  m.impl("bias_act_dropout", torch::CppFunction::makeFallthrough());
  m.impl("bias_act_dropout_backward", torch::CppFunction::makeFallthrough());
}

}  // namespace leaky::torch_ops

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

#include "leaky/leaky.h"
#include "output_cache.h"

namespace leaky::torch_ops {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

leaky_dtype DtypeOf(const at::Tensor& t, const char* op) {
  switch (t.scalar_type()) {
    case at::kFloat: return LEAKY_F32;
    case at::kDouble: return LEAKY_F64;
    case at::kHalf: return LEAKY_F16;
    case at::kBFloat16: return LEAKY_BF16;
    default:
      TORCH_CHECK(false, "leaky::", op, ": dtype ", t.scalar_type(),
                  " is not supported (float32, float64, float16, bfloat16)");
  }
}

void CheckCpu(const at::Tensor& t, const char* op, const char* name) {
  TORCH_CHECK(t.device().is_cpu(), "leaky::", op, ": ", name, " is on ", t.device(),
              "; only CPU tensors are supported");
}

// The library's threads follow PyTorch's intra-op setting.
leaky_options Options() { return leaky_options{at::get_num_threads(), -1}; }

void Check(leaky_status status, const char* op) {
  TORCH_CHECK(status == LEAKY_OK, "leaky::", op, ": ", leaky_last_error());
}

// The tensor itself when its elements fill a dense block, else a packed copy.
at::Tensor Dense(const at::Tensor& t) {
  return t.is_non_overlapping_and_dense() ? t : t.contiguous();
}

void CheckSlope(double slope, const char* op) {
  TORCH_CHECK(std::isfinite(slope), "leaky::", op, ": negative_slope = ", slope,
              " is not finite");
}

at::Tensor LeakyReluCpu(const at::Tensor& self, double negative_slope) {
  CheckCpu(self, "leaky_relu", "self");
  const leaky_dtype dtype = DtypeOf(self, "leaky_relu");
  CheckSlope(negative_slope, "leaky_relu");
  const at::Tensor x = Dense(self);
  at::Tensor y = OutputCache::Get().EmptyLike(x);  // same strides as the dense x
  const leaky_options options = Options();
  Check(leaky_relu_forward(dtype, static_cast<size_t>(x.numel()), x.data_ptr(), y.data_ptr(),
                           negative_slope, &options),
        "leaky_relu");
  return y;
}

at::Tensor& LeakyReluInplaceCpu(at::Tensor& self, double negative_slope) {
  CheckCpu(self, "leaky_relu_", "self");
  const leaky_dtype dtype = DtypeOf(self, "leaky_relu_");
  CheckSlope(negative_slope, "leaky_relu_");
  at::assert_no_internal_overlap(self);
  const leaky_options options = Options();
  if (self.is_non_overlapping_and_dense()) {
    Check(leaky_relu_forward(dtype, static_cast<size_t>(self.numel()), self.data_ptr(),
                             self.data_ptr(), negative_slope, &options),
          "leaky_relu_");
  } else {
    self.copy_(LeakyReluCpu(self, negative_slope));
  }
  return self;
}

at::Tensor LeakyReluBackwardCpu(const at::Tensor& grad_output, const at::Tensor& self,
                                double negative_slope, bool self_is_result) {
  static constexpr char kOp[] = "leaky_relu_backward";
  CheckCpu(grad_output, kOp, "grad_output");
  CheckCpu(self, kOp, "self");
  TORCH_CHECK(grad_output.sizes() == self.sizes(), "leaky::", kOp, ": grad_output of shape ",
              grad_output.sizes(), " does not match self of shape ", self.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), "leaky::", kOp,
              ": grad_output is ", grad_output.scalar_type(), " but self is ",
              self.scalar_type());
  const leaky_dtype dtype = DtypeOf(self, kOp);
  CheckSlope(negative_slope, kOp);
  // PyTorch's message: the sign of the input cannot be recovered from the
  // result when the slope is negative.
  TORCH_CHECK(!self_is_result || negative_slope >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which "
              "is not supported. This is caused by calling in-place forward function with a "
              "negative slope, please call out-of-place version instead.");
  at::Tensor saved = Dense(self);
  at::Tensor dy = grad_output;
  if (!dy.is_non_overlapping_and_dense() || dy.strides() != saved.strides()) {
    saved = self.contiguous();
    dy = grad_output.contiguous();
  }
  at::Tensor dx = OutputCache::Get().EmptyLike(saved);
  const leaky_options options = Options();
  Check(leaky_relu_backward(dtype, static_cast<size_t>(saved.numel()), dy.data_ptr(),
                            saved.data_ptr(), self_is_result ? 1 : 0, dx.data_ptr(),
                            negative_slope, &options),
        kOp);
  return dx;
}

// ------------------------------------------------------------ dispatcher handles
// Autograd kernels reach the CPU kernels through the dispatcher, below the
// autograd key, and backward passes call the public ops (with their own
// Autograd kernels) so that they are differentiable again.
at::Tensor CallLeakyReluBackward(const at::Tensor& grad_output, const at::Tensor& self,
                                 double negative_slope, bool self_is_result) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("leaky::leaky_relu_backward", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double, bool)>();
  return op.call(grad_output, self, negative_slope, self_is_result);
}

at::Tensor CallLeakyRelu(const at::Tensor& self, double negative_slope) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("leaky::leaky_relu", "")
                             .typed<at::Tensor(const at::Tensor&, double)>();
  return op.call(self, negative_slope);
}

at::Tensor& CallLeakyReluInplace(at::Tensor& self, double negative_slope) {
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("leaky::leaky_relu_", "")
                             .typed<at::Tensor&(at::Tensor&, double)>();
  return op.call(self, negative_slope);
}

// ------------------------------------------------------------ autograd
class LeakyReluFunction : public torch::autograd::Function<LeakyReluFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& self, double negative_slope) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    ctx->saved_data["negative_slope"] = negative_slope;
    return CallLeakyRelu(self, negative_slope);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor self = ctx->get_saved_variables()[0];
    const double slope = ctx->saved_data["negative_slope"].toDouble();
    return {CallLeakyReluBackward(grad_outputs[0], self, slope, false), at::Tensor()};
  }
};

class LeakyReluInplaceFunction : public torch::autograd::Function<LeakyReluInplaceFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, at::Tensor self, double negative_slope) {
    {
      at::AutoDispatchBelowADInplaceOrView below_autograd;
      CallLeakyReluInplace(self, negative_slope);
    }
    // mark_dirty makes autograd bump the version counter (what
    // ADInplaceOrView does for built-in in-place ops) and rebase the history.
    ctx->mark_dirty({self});
    ctx->save_for_backward({self});  // the result: the input is gone
    ctx->saved_data["negative_slope"] = negative_slope;
    return self;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor result = ctx->get_saved_variables()[0];
    const double slope = ctx->saved_data["negative_slope"].toDouble();
    return {CallLeakyReluBackward(grad_outputs[0], result, slope, true), at::Tensor()};
  }
};

// d(dx)/d(dy) is the same masked scaling; d(dx)/d(self) is zero almost
// everywhere (the op is piecewise linear), returned as no gradient.
class LeakyReluBackwardFunction : public torch::autograd::Function<LeakyReluBackwardFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& grad_output,
                            const at::Tensor& self, double negative_slope, bool self_is_result) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    ctx->save_for_backward({self});
    ctx->saved_data["negative_slope"] = negative_slope;
    ctx->saved_data["self_is_result"] = self_is_result;
    return CallLeakyReluBackward(grad_output, self, negative_slope, self_is_result);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grad_outputs) {
    const at::Tensor self = ctx->get_saved_variables()[0];
    const double slope = ctx->saved_data["negative_slope"].toDouble();
    const bool is_result = ctx->saved_data["self_is_result"].toBool();
    return {CallLeakyReluBackward(grad_outputs[0], self, slope, is_result), at::Tensor(),
            at::Tensor(), at::Tensor()};
  }
};

at::Tensor LeakyReluAutograd(const at::Tensor& self, double negative_slope) {
  return LeakyReluFunction::apply(self, negative_slope);
}

at::Tensor& LeakyReluInplaceAutograd(at::Tensor& self, double negative_slope) {
  // PyTorch's checks for in-place ops, before any byte is written.
  torch::autograd::check_inplace(self, self.requires_grad());
  LeakyReluInplaceFunction::apply(self, negative_slope);
  return self;
}

at::Tensor LeakyReluBackwardAutograd(const at::Tensor& grad_output, const at::Tensor& self,
                                     double negative_slope, bool self_is_result) {
  return LeakyReluBackwardFunction::apply(grad_output, self, negative_slope, self_is_result);
}

}  // namespace

void EmptyCache() { OutputCache::Get().Clear(); }

TORCH_LIBRARY(leaky, m) {
  m.def("leaky_relu(Tensor self, float negative_slope=0.01) -> Tensor");
  m.def("leaky_relu_(Tensor(a!) self, float negative_slope=0.01) -> Tensor(a!)");
  m.def("leaky_relu_backward(Tensor grad_output, Tensor self, float negative_slope, "
        "bool self_is_result) -> Tensor");
  // Returns the idle blocks of the output cache (output_cache.h) to the system.
  m.def("empty_cache() -> ()", &EmptyCache);
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

}  // namespace leaky::torch_ops

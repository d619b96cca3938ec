// The 8-bit ops on PyTorch's quantized tensors (torch.quint8 -> qu8,
// torch.qint8 -> qs8, per-tensor affine): leaky::quantized_leaky_relu,
// quantized_relu and quantized_elu, correctly rounded (leaky/eight_bit.h)
// where PyTorch's own quantized leaky_relu rounds in float
// (docs/eight_bit.md compares them). The output's scale and zero point
// default to the input's, as torch.nn.quantized.functional.leaky_relu's.
// quantized_leaky_relu_ works in place. Forward only: quantized tensors
// carry no autograd.
#include <ATen/ATen.h>
#include <torch/library.h>

#include <cmath>
#include <limits>

#include "common.h"
#include "leaky/eight_bit.h"

namespace leaky::torch_ops {
namespace {

// The parameters of a per-tensor affine quint8/qint8 CPU tensor, as the
// input's and (until a caller says otherwise) the output's.
leaky_q8_params QuantizedParams(const at::Tensor& self, const char* op) {
  TORCH_CHECK(self.is_quantized() && self.qscheme() == at::kPerTensorAffine, "leaky::", op,
              ": expected a per-tensor affine quantized tensor");
  const auto type = self.scalar_type();
  TORCH_CHECK(type == at::kQUInt8 || type == at::kQInt8, "leaky::", op,
              ": expected torch.quint8 or torch.qint8, got ", type);
  CheckCpu(self, op, "self");
  leaky_q8_params q = leaky_q8_params_init(type == at::kQUInt8 ? LEAKY_QU8 : LEAKY_QS8);
  q.input = {self.q_scale(), static_cast<int32_t>(self.q_zero_point())};
  q.output = q.input;
  return q;
}

template <class Run>
at::Tensor QuantizedUnary(const at::Tensor& self, c10::optional<double> output_scale,
                          c10::optional<int64_t> output_zero_point, const char* op, Run run) {
  leaky_q8_params q = QuantizedParams(self, op);
  const double scale = output_scale.value_or(q.input.scale);
  const int64_t zero_point = output_zero_point.value_or(q.input.zero_point);
  // PyTorch keeps a quantized tensor's scale as a double but dequantizes in
  // float: a scale beyond float's normal range gave a tensor of NaN (1e300)
  // or of zeros (1e-300).
  TORCH_CHECK_VALUE(std::isfinite(scale) && scale >= std::numeric_limits<float>::min() &&
                        scale <= std::numeric_limits<float>::max(),
                    "leaky::", op, ": output_scale ", scale,
                    " is outside float32's normal range, in which PyTorch dequantizes");
  TORCH_CHECK_VALUE(zero_point >= std::numeric_limits<int32_t>::min() &&
                        zero_point <= std::numeric_limits<int32_t>::max(),
                    "leaky::", op, ": output_zero_point ", zero_point, " is not a 32-bit integer");
  q.output = {scale, static_cast<int32_t>(zero_point)};
  const at::Tensor x = self.contiguous();
  at::Tensor y = at::_empty_affine_quantized(x.sizes(), x.options(), q.output.scale,
                                             q.output.zero_point);
  const leaky_options options = Options();
  Check(run(&q, static_cast<size_t>(x.numel()), x.data_ptr(), y.data_ptr(), &options), op);
  return y;
}

at::Tensor QuantizedLeakyRelu(const at::Tensor& self, double negative_slope,
                              c10::optional<double> output_scale,
                              c10::optional<int64_t> output_zero_point) {
  return QuantizedUnary(self, output_scale, output_zero_point, "quantized_leaky_relu",
                        [&](const leaky_q8_params* q, size_t n, const void* x, void* y,
                            const leaky_options* o) {
                          return leaky_q8_leaky_relu_forward(q, n, x, y, negative_slope, o);
                        });
}

at::Tensor QuantizedRelu(const at::Tensor& self, c10::optional<double> output_scale,
                         c10::optional<int64_t> output_zero_point) {
  return QuantizedUnary(self, output_scale, output_zero_point, "quantized_relu",
                        [](const leaky_q8_params* q, size_t n, const void* x, void* y,
                           const leaky_options* o) {
                          return leaky_q8_plain_relu_forward(q, n, x, y, o);
                        });
}

at::Tensor QuantizedElu(const at::Tensor& self, double alpha, double scale, double input_scale,
                        c10::optional<double> output_scale,
                        c10::optional<int64_t> output_zero_point) {
  return QuantizedUnary(self, output_scale, output_zero_point, "quantized_elu",
                        [&](const leaky_q8_params* q, size_t n, const void* x, void* y,
                            const leaky_options* o) {
                          return leaky_q8_elu_forward(q, n, x, y, alpha, scale, input_scale, o);
                        });
}

// In place: the output keeps the input's scale and zero point (as
// PyTorch's quantized leaky_relu_); a byte lookup whose output may be its
// input. For timing the kernel without a fresh 64 MiB output's page faults
// (bench/torch_bench.py), and for callers that do not need the input.
at::Tensor& QuantizedLeakyRelu_(at::Tensor& self, double negative_slope) {
  const char* op = "quantized_leaky_relu_";
  const leaky_q8_params q = QuantizedParams(self, op);
  TORCH_CHECK(self.is_contiguous(), "leaky::", op, ": expected a contiguous tensor");
  const leaky_options options = Options();
  Check(leaky_q8_leaky_relu_forward(&q, static_cast<size_t>(self.numel()), self.data_ptr(),
                                    self.data_ptr(), negative_slope, &options),
        op);
  return self;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(leaky, m) {
  m.def("quantized_leaky_relu_(Tensor(a!) self, float negative_slope=0.01) -> Tensor(a!)");
  m.def("quantized_leaky_relu(Tensor self, float negative_slope=0.01, float? output_scale=None, "
        "int? output_zero_point=None) -> Tensor");
  m.def("quantized_relu(Tensor self, float? output_scale=None, int? output_zero_point=None) -> Tensor");
  m.def("quantized_elu(Tensor self, float alpha=1.0, float scale=1.0, float input_scale=1.0, "
        "float? output_scale=None, int? output_zero_point=None) -> Tensor");
}

TORCH_LIBRARY_IMPL(leaky, QuantizedCPU, m) {
  m.impl("quantized_leaky_relu", &QuantizedLeakyRelu);
  m.impl("quantized_leaky_relu_", &QuantizedLeakyRelu_);
  m.impl("quantized_relu", &QuantizedRelu);
  m.impl("quantized_elu", &QuantizedElu);
}

// A float tensor gets the ops' own one-line refusal, not the dispatcher's
// list of backends.
TORCH_LIBRARY_IMPL(leaky, CPU, m) {
  m.impl("quantized_leaky_relu", &QuantizedLeakyRelu);
  m.impl("quantized_leaky_relu_", &QuantizedLeakyRelu_);
  m.impl("quantized_relu", &QuantizedRelu);
  m.impl("quantized_elu", &QuantizedElu);
}

}  // namespace leaky::torch_ops

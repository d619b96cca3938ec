"""Functional forms, mirroring torch.nn.functional."""
from typing import Optional

from . import _library

_library.load_torch_ops()  # without PyTorch: the ImportError that names the interpreter
import torch  # noqa: E402

from . import _library

_ops = _library.load_torch_ops()


def leaky_relu(input: torch.Tensor, negative_slope: float = 0.01,
               inplace: bool = False) -> torch.Tensor:
    """y = x if x > 0 else x * negative_slope, like F.leaky_relu; exact for
    every dtype (half types computed in float32) and differentiable to any
    order."""
    if inplace:
        return _ops.leaky_relu_(input, negative_slope)
    return _ops.leaky_relu(input, negative_slope)


def leaky_relu_backward(grad_output: torch.Tensor, self: torch.Tensor, negative_slope: float,
                        self_is_result: bool = False) -> torch.Tensor:
    """dx = dy if saved > 0 else dy * negative_slope (saved: the input, or the
    result with self_is_result, which needs negative_slope >= 0)."""
    return _ops.leaky_relu_backward(grad_output, self, negative_slope, self_is_result)


def relu(input: torch.Tensor, inplace: bool = False) -> torch.Tensor:
    """torch.relu's semantics (y = x < 0 ? 0 : x; NaN propagates), exact."""
    if inplace:
        return _ops.relu_(input)
    return _ops.relu(input)


def elu(input: torch.Tensor, alpha: float = 1.0, inplace: bool = False, scale: float = 1.0,
        input_scale: float = 1.0) -> torch.Tensor:
    """F.elu: y = x <= 0 ? expm1(x * input_scale) * alpha * scale : x * scale
    (expm1 within the ulp bounds of leaky/reference.hpp)."""
    if inplace:
        return _ops.elu_(input, alpha, scale, input_scale)
    return _ops.elu(input, alpha, scale, input_scale)


def bias_act(x: torch.Tensor, b: Optional[torch.Tensor] = None, dim: int = 1,
             act: str = "lrelu", alpha: Optional[float] = None, gain: Optional[float] = None,
             clamp: Optional[float] = None, dropout_p: float = 0.0,
             seed: int = 0, offset: int = 0) -> torch.Tensor:
    """clamp(act(x + b) * gain, -clamp, clamp) in one pass, as StyleGAN's
    bias_act (act: "lrelu", "relu", "linear"; b along axis `dim`). alpha and
    gain not given take StyleGAN's defaults for the activation: linear gain 1;
    relu gain sqrt(2); lrelu alpha 0.2, gain sqrt(2). Equals the
    unfused PyTorch sequence bit for bit in float32/float64. With dropout_p >
    0, the result is also dropped out: kept elements scaled by 1 / (1 - p),
    the keep decisions drawn from the Philox stream (seed, offset) in memory
    order and saved for backward as one bit per element. The same (seed,
    offset) gives the same mask: advance offset by x.numel() per call
    (leaky.nn.BiasAct does)."""
    return _ops.bias_act(x, b, dim, act, alpha, gain, clamp, dropout_p, seed, offset)


def bias_act_dropout(x: torch.Tensor, b=None, dim: int = 1, act: str = "lrelu",
                     alpha=None, gain=None, clamp=None,
                     dropout_p: float = 0.5, seed: int = 0, offset: int = 0):
    """bias_act with dropout, returning (y, mask): mask is uint8 with one bit
    per element in memory order (bit i % 8 of byte i // 8 set when element i
    was kept). Not differentiable itself; bias_act is."""
    return _ops.bias_act_dropout(x, b, dim, act, alpha, gain, clamp, dropout_p, seed, offset)


def prelu(input: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """F.prelu: y = x if x > 0 else weight[c] * x, c along axis 1 (a
    one-element weight is shared); exact, differentiable to any order."""
    return _ops.prelu(input, weight)


def rrelu(input: torch.Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
          training: bool = False, seed: int = 0, offset: int = 0) -> torch.Tensor:
    """F.rrelu: in training each x <= 0 gets a slope drawn from U(lower,
    upper) by the Philox stream (seed, offset), in memory order, the same for
    any thread count; in evaluation the slope is (lower + upper) / 2.
    Backward draws the same slopes again. Advance offset by input.numel() per
    call for fresh slopes (leaky.nn.RReLU does)."""
    return _ops.rrelu(input, lower, upper, training, seed, offset)


def rrelu_with_noise(input: torch.Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                     training: bool = False, seed: int = 0, offset: int = 0):
    """rrelu returning (y, noise): noise holds each element's slope (1 where
    x > 0), as PyTorch's rrelu_with_noise. Not differentiable itself."""
    return _ops.rrelu_with_noise(input, lower, upper, training, seed, offset)


def quantized_leaky_relu(input: torch.Tensor, negative_slope: float = 0.01,
                         output_scale: Optional[float] = None,
                         output_zero_point: Optional[int] = None) -> torch.Tensor:
    """LeakyReLU on a torch.quint8 / torch.qint8 tensor (per-tensor affine),
    correctly rounded from the exact real value (leaky/eight_bit.h); the
    output's scale and zero point default to the input's, as
    torch.nn.quantized.functional.leaky_relu's."""
    return _ops.quantized_leaky_relu(input, negative_slope, output_scale, output_zero_point)


def quantized_relu(input: torch.Tensor, output_scale: Optional[float] = None,
                   output_zero_point: Optional[int] = None) -> torch.Tensor:
    """ReLU on a quantized tensor, as quantized_leaky_relu."""
    return _ops.quantized_relu(input, output_scale, output_zero_point)


def quantized_elu(input: torch.Tensor, alpha: float = 1.0, scale: float = 1.0,
                  input_scale: float = 1.0, output_scale: Optional[float] = None,
                  output_zero_point: Optional[int] = None) -> torch.Tensor:
    """ELU on a quantized tensor, as quantized_leaky_relu (expm1 in long
    double: exact but within about 2^-60 of a rounding tie)."""
    return _ops.quantized_elu(input, alpha, scale, input_scale, output_scale, output_zero_point)

"""Functional forms, mirroring torch.nn.functional."""
import torch

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


def bias_act(x: torch.Tensor, b=None, dim: int = 1, act: str = "lrelu", alpha: float = 0.2,
             gain: float = 1.4142135623730951, clamp=None, dropout_p: float = 0.0,
             seed: int = 0, offset: int = 0) -> torch.Tensor:
    """clamp(act(x + b) * gain, -clamp, clamp) in one pass, as StyleGAN's
    bias_act (act: "lrelu", "relu", "linear"; b along axis `dim`). Equals the
    unfused PyTorch sequence bit for bit in float32/float64."""
    return _ops.bias_act(x, b, dim, act, alpha, gain, clamp, dropout_p, seed, offset)

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

"""Modules, drop-in for their torch.nn namesakes."""
import torch

from . import functional


class LeakyReLU(torch.nn.Module):
    """torch.nn.LeakyReLU(negative_slope, inplace) computed by leaky."""
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class ReLU(torch.nn.Module):
    """torch.nn.ReLU(inplace) computed by leaky."""
    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ELU(torch.nn.Module):
    """torch.nn.ELU(alpha, inplace) computed by leaky."""
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class BiasAct(torch.nn.Module):
    """A learnable per-channel bias followed by an activation, a gain and an
    optional clamp, fused: StyleGAN's bias_act as a module."""

    def __init__(self, channels: int, act: str = "lrelu", alpha: float = 0.2,
                 gain: float = 1.4142135623730951, clamp=None, dim: int = 1,
                 bias: bool = True) -> None:
        super().__init__()
        self.act, self.alpha, self.gain, self.clamp, self.dim = act, alpha, gain, clamp, dim
        self.bias = torch.nn.Parameter(torch.zeros(channels)) if bias else None

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.bias_act(input, self.bias, self.dim, self.act, self.alpha, self.gain,
                                   self.clamp)

    def extra_repr(self) -> str:
        channels = self.bias.shape[0] if self.bias is not None else None
        return (f"channels={channels}, act={self.act!r}, alpha={self.alpha}, gain={self.gain}, "
                f"clamp={self.clamp}, dim={self.dim}")

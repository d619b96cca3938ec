"""Modules, drop-in for their torch.nn namesakes."""
from typing import Optional

from . import _library

_library.load_torch_ops()  # without PyTorch: the ImportError that names the interpreter
import torch  # noqa: E402

from . import functional


class _Module(torch.nn.Module):
    """A module of this library: its repr says so (leaky.LeakyReLU(...)), so a
    printed model shows which layers are torch.nn's and which are leaky's."""

    def _get_name(self) -> str:
        return "leaky." + type(self).__name__


class LeakyReLU(_Module):
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


class QuantizedLeakyReLU(_Module):
    """torch.nn.quantized.LeakyReLU(scale, zero_point, negative_slope) computed
    by leaky: correctly rounded (leaky/eight_bit.h); scale and zero_point are
    the output's (None: the input's)."""
    __constants__ = ["negative_slope"]

    def __init__(self, scale: Optional[float] = None, zero_point: Optional[int] = None,
                 negative_slope: float = 1e-2) -> None:
        super().__init__()
        self.scale = scale
        self.zero_point = zero_point
        self.negative_slope = negative_slope

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.quantized_leaky_relu(input, self.negative_slope, self.scale,
                                               self.zero_point)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, zero_point={self.zero_point}, negative_slope={self.negative_slope}"


class ReLU(_Module):
    """torch.nn.ReLU(inplace) computed by leaky."""
    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.relu(input, self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ELU(_Module):
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


class _RandomStream:
    """The (seed, offset) key of a module's Philox stream: the seed comes from
    torch's global generator at construction (so torch.manual_seed makes runs
    repeatable) unless given; each call takes the next input.numel()
    positions, so every call draws fresh numbers."""

    def _init_stream(self, seed) -> None:
        self.seed = int(torch.randint(0, 2**62, ()).item()) if seed is None else int(seed)
        self.offset = 0

    def _take(self, count: int) -> int:
        offset = self.offset
        self.offset += count
        return offset


class BiasAct(_Module, _RandomStream):
    """A learnable per-channel bias followed by an activation, a gain, an
    optional clamp and optional dropout (in training only), fused: StyleGAN's
    bias_act as a module."""
    # Declared for TorchScript: None-valued attributes are otherwise typed NoneType.
    alpha: Optional[float]
    gain: Optional[float]
    clamp: Optional[float]
    bias: Optional[torch.Tensor]

    def __init__(self, channels: int, act: str = "lrelu", alpha=None,
                 gain=None, clamp=None, dim: int = 1,
                 bias: bool = True, dropout_p: float = 0.0, seed=None) -> None:
        super().__init__()
        self.act, self.alpha, self.gain, self.clamp, self.dim = act, alpha, gain, clamp, dim
        self.dropout_p = dropout_p
        self.bias = torch.nn.Parameter(torch.zeros(channels)) if bias else None
        self._init_stream(seed)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        p = self.dropout_p if self.training else 0.0
        offset = self._take(input.numel()) if p > 0 else 0
        return functional.bias_act(input, self.bias, self.dim, self.act, self.alpha, self.gain,
                                   self.clamp, p, self.seed, offset)

    def extra_repr(self) -> str:
        channels = self.bias.shape[0] if self.bias is not None else None
        return (f"channels={channels}, act={self.act!r}, alpha={self.alpha}, gain={self.gain}, "
                f"clamp={self.clamp}, dim={self.dim}, dropout_p={self.dropout_p}")


class PReLU(_Module):
    """torch.nn.PReLU(num_parameters, init) computed by leaky."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = torch.nn.Parameter(torch.empty(num_parameters).fill_(init))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return functional.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(_Module, _RandomStream):
    """torch.nn.RReLU(lower, upper) computed by leaky, its slopes drawn from
    the module's Philox stream in training."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3, seed=None) -> None:
        super().__init__()
        self.lower, self.upper = lower, upper
        self._init_stream(seed)

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        offset = self._take(input.numel()) if self.training else 0
        return functional.rrelu(input, self.lower, self.upper, self.training, self.seed, offset)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}"

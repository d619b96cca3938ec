"""Shared helpers: bit-pattern comparison (any NaN equals any NaN) and the
exact reference for the half types (computed in float32, rounded once)."""
import numpy as np
import torch

SLOPES = [0.0, 0.01, 0.2, 1.0, 1.5, -0.5]
SIZES = [0, 1, 7, 16, 31, 1000, 4099, 65537]
TORCH_DTYPES = [torch.float32, torch.float64, torch.bfloat16, torch.float16]


def special_values(dtype):
    finfo = torch.finfo(dtype)
    values = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"),
              finfo.tiny, -finfo.tiny, finfo.max, -finfo.max, finfo.eps, -finfo.eps]
    # Subnormals: the smallest and the largest.
    values += [finfo.tiny * finfo.eps, -finfo.tiny * finfo.eps,
               finfo.tiny * (1 - finfo.eps), -finfo.tiny * (1 - finfo.eps)]
    return torch.tensor(values, dtype=dtype)


def random_tensor(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(shape, generator=g, dtype=torch.float64) * 4
    return x.to(dtype)


def bits(t):
    t = t.contiguous()
    view = {torch.float32: torch.int32, torch.float64: torch.int64,
            torch.float16: torch.int16, torch.bfloat16: torch.int16}[t.dtype]
    return t.view(view)


def assert_same_bits(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    nan_a, nan_e = torch.isnan(actual), torch.isnan(expected)
    assert torch.equal(nan_a, nan_e), "NaN positions differ"
    a, e = bits(actual)[~nan_a], bits(expected)[~nan_e]
    mismatch = (a != e).nonzero()
    assert mismatch.numel() == 0, (
        f"{mismatch.numel()} elements differ, first at {mismatch[0].item()}: "
        f"{actual[~nan_a][mismatch[0]].item()} vs {expected[~nan_e][mismatch[0]].item()}")


def reference_half_forward(x, slope):
    """Exact f16/bf16 LeakyReLU: widen to float32, multiply by the slope
    rounded once to float32, round the result once to the half type."""
    x32 = x.float()
    s = np.float32(slope).item()
    y32 = torch.where(x32 > 0, x32, x32 * s)
    return y32.to(x.dtype)


def reference_half_backward(dy, saved, slope):
    dy32 = dy.float()
    s = np.float32(slope).item()
    return torch.where(saved.float() > 0, dy32, dy32 * s).to(dy.dtype)

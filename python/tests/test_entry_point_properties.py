"""Property-based tests of the Python entry points (issue 41): whatever the
arguments - dtypes, shapes, strided and transposed views, bit patterns,
slopes, thread counts, `out` arrays that are read-only, overlapping, of
another shape or dtype, or the input itself; quantized tensors and their
parameters - a call either returns the reference result or raises one
Python exception whose message is one line, with `out` untouched.

Hypothesis draws the cases (derandomized: `make test` runs the same ones
every time; a failure prints the smallest case it shrank to)."""
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import leaky.numpy as lnp  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True, database=None)
DTYPES = [np.float32, np.float64, np.float16, np.uint16]  # uint16: bfloat16 bits
THREADS = [0, 1, 2, 3, 65536, 65537, -1, 2**31 - 1]
SLOPES = [0.2, 0.0, -0.0, -0.5, 1.0, 3.0, 1e-300, 1e300, 65504.0, float("nan"), float("inf"),
          -float("inf")]
ERRORS = (TypeError, ValueError, MemoryError)


def bf16_round(y32):
    bits = y32.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(y32), np.uint16(0x7FC0), rounded)


def reference(x, slope):
    shape = x.shape
    return _reference(np.ascontiguousarray(x).reshape(-1), slope).reshape(shape)


def _reference(x, slope):
    with np.errstate(all="ignore"):
        if x.dtype == np.float64:
            return np.where(x > 0, x, x * slope)
        if x.dtype == np.uint16:
            x32 = (x.astype(np.uint32) << 16).view(np.float32)
            return bf16_round(np.where(x32 > 0, x32, x32 * np.float32(slope)))
        x32 = x.astype(np.float32)
        return np.where(x32 > 0, x32, x32 * np.float32(slope)).astype(x.dtype)


def same(got, want):
    """Bit for bit, NaN for NaN (payloads are checked exhaustively elsewhere)."""
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    got, want = np.ascontiguousarray(got).reshape(-1), np.ascontiguousarray(want).reshape(-1)
    if got.dtype == np.uint16:  # bfloat16 bits
        g32 = (got.astype(np.uint32) << 16).view(np.float32)
        w32 = (want.astype(np.uint32) << 16).view(np.float32)
        both_nan = np.isnan(g32) & np.isnan(w32)
        return bool(np.all(both_nan | (got == want)))
    both_nan = np.isnan(got) & np.isnan(want)
    width = {2: np.uint16, 4: np.uint32, 8: np.uint64}[got.dtype.itemsize]
    return bool(np.all(both_nan | (got.view(width) == want.view(width))))


def one_line(error):
    message = str(error)
    assert message and "\n" not in message.strip(), repr(message)
    assert "incompatible function arguments" not in message, message


@st.composite
def arrays(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    shape = tuple(draw(st.lists(st.integers(0, 9), min_size=0, max_size=3)))
    size = int(np.prod(shape)) if shape else 1
    raw = draw(st.binary(min_size=size * dtype.itemsize, max_size=size * dtype.itemsize))
    x = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    view = draw(st.sampled_from(["plain", "transposed", "strided", "reversed"]))
    if view == "transposed" and x.ndim >= 2:
        x = x.T
    elif view == "strided" and x.ndim >= 1:
        x = x[::2]
    elif view == "reversed" and x.ndim >= 1:
        x = x[::-1]
    return x


@SETTINGS
@given(x=arrays(), slope=st.one_of(st.sampled_from(SLOPES), st.floats()),
       threads=st.sampled_from(THREADS),
       out_kind=st.sampled_from(["none", "fresh", "readonly", "in_place", "overlap", "shape",
                                 "dtype", "strided"]))
def test_numpy_leaky_relu_gives_the_reference_or_one_line(x, slope, threads, out_kind):
    out = None
    if out_kind == "fresh":
        out = np.full(x.shape, 7, dtype=x.dtype)
    elif out_kind == "readonly":
        out = np.zeros(x.shape, dtype=x.dtype)
        out.setflags(write=False)
    elif out_kind == "in_place" and x.flags.c_contiguous:
        out = x
    elif out_kind == "overlap" and x.size > 1:
        base = np.zeros(x.size + 1, dtype=x.dtype)
        x = base[:x.size].reshape(x.shape) if x.flags.c_contiguous else x
        out = base[1:].reshape(x.shape)
    elif out_kind == "shape":
        out = np.zeros(x.size + 1, dtype=x.dtype)
    elif out_kind == "dtype":
        out = np.zeros(x.shape, dtype=np.float64 if x.dtype != np.float64 else np.float32)
    elif out_kind == "strided" and x.size > 0:
        out = np.zeros((2,) + x.shape, dtype=x.dtype)[::2]
        out = out.reshape(out.shape[1:]) if out.flags.c_contiguous else out[0, ...][None][0]
    x_before = x.copy()
    out_before = None if out is None or out is x else out.copy()
    want = reference(x_before, slope)
    try:
        got = lnp.leaky_relu(x, slope, out=out, num_threads=threads)
    except ERRORS as error:
        one_line(error)
        if out_before is not None:
            assert same(out, out_before), "out was written despite the error"
        if out is not x:
            assert same(x, x_before), "the input was written"
        return
    # Accepted: only valid arguments, and the reference's bits.
    assert np.isfinite(slope) and 0 <= threads <= 65536, (slope, threads)
    assert same(got, want), (x_before, slope, got, want)


@SETTINGS
@given(dy=arrays(), slope=st.sampled_from(SLOPES), threads=st.sampled_from(THREADS),
       from_result=st.booleans())
def test_numpy_leaky_relu_backward_gives_the_reference_or_one_line(dy, slope, threads,
                                                                    from_result):
    saved = dy[::-1].copy() if dy.ndim else dy.copy()
    shape = dy.shape
    dy_flat, saved_flat = np.ascontiguousarray(dy).reshape(-1), saved.reshape(-1)
    with np.errstate(all="ignore"):
        if dy.dtype == np.uint16:
            s32 = (saved_flat.astype(np.uint32) << 16).view(np.float32)
            d32 = (dy_flat.astype(np.uint32) << 16).view(np.float32)
            want = bf16_round(np.where(s32 > 0, d32, d32 * np.float32(slope)))
        elif dy.dtype == np.float64:
            want = np.where(saved_flat > 0, dy_flat, dy_flat * slope)
        else:
            want = np.where(saved_flat.astype(np.float32) > 0, dy_flat.astype(np.float32),
                            dy_flat.astype(np.float32) * np.float32(slope)).astype(dy.dtype)
    want = want.reshape(shape)
    try:
        got = lnp.leaky_relu_backward(dy, saved, slope, saved_is_result=from_result,
                                      num_threads=threads)
    except ERRORS as error:
        one_line(error)
        return
    assert np.isfinite(slope) and 0 <= threads <= 65536, (slope, threads)
    assert not (from_result and slope < 0), "backward from the result with a negative slope"
    assert same(got, want)


torch = pytest.importorskip("torch")
import leaky  # noqa: E402,F401  (loads torch.ops.leaky)
import leaky.functional as lf  # noqa: E402

TORCH_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


@SETTINGS
@given(x=arrays(), dtype=st.sampled_from(TORCH_DTYPES), slope=st.sampled_from(SLOPES),
       view=st.sampled_from(["plain", "transposed", "expanded", "sliced"]))
def test_torch_leaky_relu_equals_pytorchs_or_one_line(x, dtype, slope, view):
    with np.errstate(all="ignore"):
        t = torch.from_numpy(x.astype(np.float64)).to(dtype)
    if view == "transposed" and t.dim() >= 2:
        t = t.transpose(0, t.dim() - 1)
    elif view == "expanded" and t.dim() >= 1 and t.numel() > 0:
        t = t[..., :1].expand(*t.shape[:-1], 3)
    elif view == "sliced" and t.dim() >= 1:
        t = t[::2]
    try:
        got = torch.ops.leaky.leaky_relu(t, slope)
    except (RuntimeError, ValueError, TypeError) as error:
        one_line(error)
        assert not np.isfinite(slope), ("a finite slope was refused", slope, str(error))
        return
    assert np.isfinite(slope)
    try:
        want = torch.nn.functional.leaky_relu(t, slope)
    except RuntimeError:  # PyTorch's own refuses a slope beyond the dtype (1e300 in f32)
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    both_nan = torch.isnan(got) & torch.isnan(want)
    assert bool((both_nan | (got == want) & (torch.signbit(got) == torch.signbit(want))).all())


@SETTINGS
@given(values=st.lists(st.floats(-50, 50), min_size=0, max_size=40),
       qtype=st.sampled_from(["quint8", "qint8"]),
       scale=st.one_of(st.sampled_from([0.1, 1e-300, 1e300, float("inf"), float("nan"), 0.0,
                                        -0.1, 1e-38, 3.4e38]), st.floats()),
       zero_point=st.one_of(st.integers(-200, 300), st.sampled_from([2**31, -2**31 - 1, 2**40])),
       slope=st.sampled_from(SLOPES))
def test_quantized_leaky_relu_parameters_give_a_result_or_one_line(values, qtype, scale,
                                                                   zero_point, slope):
    dtype = torch.quint8 if qtype == "quint8" else torch.qint8
    q = torch.quantize_per_tensor(torch.tensor(values, dtype=torch.float32), 0.25,
                                  10 if qtype == "quint8" else 0, dtype)
    try:
        y = lf.quantized_leaky_relu(q, slope, scale, zero_point)
    except (RuntimeError, ValueError, TypeError, OverflowError) as error:
        one_line(error)
        return
    # Accepted: a scale PyTorch can dequantize with and a finite result.
    assert 1.1754943508222875e-38 <= scale <= 3.4028234663852886e38, scale
    assert bool(torch.isfinite(y.dequantize()).all())

"""leaky.numpy's 8-bit entry points against a reference in Python's exact
fractions (the C++ suite eight_bit_test checks the library exhaustively;
this checks the binding: parameters reach the library, dtypes and errors)."""
from fractions import Fraction
import math

import numpy as np
import pytest

import leaky.numpy as ln


def round_half_even(q):
    below = math.floor(q)
    rest = q - below
    return below + (1 if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and below % 2) else 0)


@pytest.mark.parametrize("type,lo,hi,dtype", [("qu8", 0, 255, np.uint8), ("qs8", -128, 127, np.int8)])
def test_quantized_leaky_relu_matches_exact_fractions(type, lo, hi, dtype):
    x = np.arange(lo, hi + 1).astype(dtype)
    for s_in, z_in, s_out, z_out, slope in [(0.05, 3, 0.04, -7, 0.1), (1 / 3, 0, 0.25, 10, -0.5), (0.5, -20, 0.25, 0, 0.2)]:
        z_in, z_out = min(max(z_in, lo), hi), min(max(z_out, lo), hi)
        got = ln.q8_leaky_relu(x, slope, type=type, input_scale=s_in, input_zero_point=z_in,
                               output_scale=s_out, output_zero_point=z_out)
        for v, y in zip(x.tolist(), got.tolist()):
            k = v - z_in
            real = Fraction(s_in) * k * (1 if k > 0 else Fraction(slope))
            want = min(max(z_out + round_half_even(real / Fraction(s_out)), lo), hi)
            assert y == want, (type, s_in, z_in, s_out, z_out, slope, v)


def test_fp8_round_trip_and_leaky_relu():
    codes = np.arange(256, dtype=np.uint8)
    values = ln.fp8_to_f32(codes, "fp8_e4m3")
    finite = ~np.isnan(values)
    assert values[0x7E] == 448 and np.isnan(values[0x7F]) and values[0x01] == 2.0 ** -9
    back = ln.fp8_from_f32(values[finite], "fp8_e4m3")
    # +0 and -0 both decode to a zero that encodes back with its sign.
    assert back.tolist() == codes[finite].tolist()
    y = ln.q8_leaky_relu(codes, 0.5, type="fp8_e4m3")
    # Halving is exact for every normal E4M3 value above the smallest one.
    assert ln.fp8_to_f32(y[0x80 | 0x40:0x80 | 0x50], "fp8_e4m3").tolist() == \
        (values[0xC0:0xD0] * 0.5).tolist()


def test_fp8_backward_passes_dy_where_the_input_was_positive():
    dy = ln.fp8_from_f32(np.array([1.0, 2.0, -4.0], dtype=np.float32), "fp8_e5m2")
    saved = ln.fp8_from_f32(np.array([1.0, -1.0, -1.0], dtype=np.float32), "fp8_e5m2")
    dx = ln.q8_leaky_relu_backward(dy, saved, 0.25, type="fp8_e5m2")
    assert ln.fp8_to_f32(dx, "fp8_e5m2").tolist() == [1.0, 0.5, -1.0]


def test_bad_arguments_are_one_clear_line():
    x = np.zeros(4, dtype=np.uint8)
    with pytest.raises(ValueError, match="type must be one of"):
        ln.q8_relu(x, type="int8")
    with pytest.raises(TypeError, match="needs int8"):
        ln.q8_relu(x, type="qs8")
    with pytest.raises(ValueError, match="input scale must be finite and > 0"):
        ln.q8_relu(x, input_scale=0.0)
    with pytest.raises(ValueError, match="zero point 300 is outside 0..255"):
        ln.q8_relu(x, input_zero_point=300)
    with pytest.raises(ValueError, match="no backward"):
        ln.q8_leaky_relu_backward(x, x, 0.1, type="qu8")
    # Same size, other shape: refused like the float entry points' out.
    with pytest.raises(ValueError, match="out has a different shape"):
        ln.q8_relu(np.zeros((2, 3), dtype=np.uint8), out=np.zeros((3, 2), dtype=np.uint8))


def test_torch_quantized_ops_match_the_numpy_entry_points():
    torch = pytest.importorskip("torch")
    import leaky.functional as lf
    import leaky.nn
    for dtype, type in [(torch.quint8, "qu8"), (torch.qint8, "qs8")]:
        x = torch.quantize_per_tensor(torch.linspace(-6, 6, 301), 0.05, 3, dtype)
        y = lf.quantized_leaky_relu(x, 0.1, 0.04, 7)
        assert y.dtype == dtype and y.q_scale() == 0.04 and y.q_zero_point() == 7
        want = ln.q8_leaky_relu(x.int_repr().numpy(), 0.1, type=type, input_scale=0.05,
                                input_zero_point=3, output_scale=0.04, output_zero_point=7)
        assert y.int_repr().numpy().tolist() == want.tolist()
        module = leaky.nn.QuantizedLeakyReLU(0.04, 7, 0.1)
        assert module(x).int_repr().equal(y.int_repr())
        same = lf.quantized_relu(x)  # the output keeps the input's parameters
        assert same.q_scale() == x.q_scale() and same.q_zero_point() == x.q_zero_point()
        # In place: the input's parameters, the out-of-place op's bytes.
        copy = x.clone()
        assert torch.ops.leaky.quantized_leaky_relu_(copy, 0.1).data_ptr() == copy.data_ptr()
        assert copy.int_repr().equal(torch.ops.leaky.quantized_leaky_relu(x, 0.1).int_repr())
    with pytest.raises(RuntimeError, match="expected a contiguous tensor"):
        torch.ops.leaky.quantized_leaky_relu_(
            torch.quantize_per_tensor(torch.zeros(4, 4), 0.1, 0, torch.quint8).t(), 0.1)
    with pytest.raises(RuntimeError, match="expected a per-tensor affine quantized tensor"):
        lf.quantized_leaky_relu(torch.zeros(3), 0.1)


def test_quantized_parameters_pytorch_cannot_hold_and_quantized_inputs_to_float_ops():
    torch = pytest.importorskip("torch")
    import leaky.functional as lf
    q = torch.quantize_per_tensor(torch.tensor([-1.0, 0.5, 2.0]), 0.1, 10, torch.quint8)
    # Scales beyond float32's normal range dequantized to NaN or zeros.
    for scale in (1e300, 1e-300, float("inf"), float("nan"), 0.0, -0.1):
        with pytest.raises(ValueError, match="output_scale .* is outside float32's normal range"):
            lf.quantized_leaky_relu(q, 0.2, scale, 0)
    with pytest.raises(ValueError, match="output_zero_point 4294967301 is not a 32-bit integer"):
        lf.quantized_leaky_relu(q, 0.2, 0.1, 2**32 + 5)
    # A quantized tensor given to a float op: one line, not the dispatcher's dump.
    for call in (lambda: torch.ops.leaky.leaky_relu(q, 0.2), lambda: torch.ops.leaky.relu(q),
                 lambda: torch.ops.leaky.elu(q, 1.0, 1.0, 1.0)):
        with pytest.raises(RuntimeError) as error:
            call()
        message = str(error.value)
        assert "expected a float tensor, got a quantized one" in message, message
        assert len(message.strip().splitlines()) == 1, message


def test_cached_tables_tell_apart_every_parameter():
    # A thread keeps its last four tables; a call that differs in one bit
    # of one parameter (here the slope's sign of zero, which decides fp8's
    # -0 * slope) must not reuse another call's table.
    codes = np.arange(256, dtype=np.uint8)
    for _ in range(2):
        plus = ln.q8_leaky_relu(codes, 0.0, type="fp8_e4m3")
        minus = ln.q8_leaky_relu(codes, -0.0, type="fp8_e4m3")
        assert plus[0xC0] == 0x80 and minus[0xC0] == 0x00  # -2 * +0 = -0; -2 * -0 = +0
    fresh = [ln.q8_leaky_relu(codes, s, input_scale=0.1, output_scale=0.1 * (1 + k))
             for k, s in enumerate([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])]
    again = [ln.q8_leaky_relu(codes, s, input_scale=0.1, output_scale=0.1 * (1 + k))
             for k, s in enumerate([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])]
    assert all(a.tolist() == b.tolist() for a, b in zip(fresh, again))
    assert len({tuple(a.tolist()) for a in fresh}) == 6

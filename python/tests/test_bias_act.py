"""torch.ops.leaky.bias_act: bit-for-bit the unfused PyTorch sequence
clamp(act(x + b) * gain) in f32/f64 (forward and dx; db to rounding of the
sum order), layouts, autograd to second order (the R1 penalty), errors."""
import math

import pytest
import torch
import torch.nn.functional as F

import leaky
from conftest import assert_same_bits, random_tensor

ops = torch.ops.leaky


def unfused(x, b, dim, act, alpha, gain, clamp):
    if b is not None:
        shape = [1] * x.dim()
        shape[dim] = -1
        x = x + b.reshape(shape)
    if act == "lrelu":
        x = F.leaky_relu(x, alpha)
    elif act == "relu":
        x = torch.relu(x)
    x = x * gain
    if clamp is not None:
        x = torch.clamp(x, -clamp, clamp)
    return x


CASES = [((4, 6, 5, 7), 1), ((8, 16), 1), ((3, 5, 9), -1), ((2, 3, 4, 5), 2), ((1000,), 0)]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("act", ["lrelu", "relu", "linear"])
@pytest.mark.parametrize("clamp", [None, 0.7])
def test_matches_unfused_sequence(dtype, act, clamp):
    for shape, dim in CASES:
        for with_bias in (True, False):
            x = random_tensor(shape, dtype, seed=1).requires_grad_()
            b = random_tensor((shape[dim],), dtype, seed=2).requires_grad_() if with_bias else None
            gain = math.sqrt(2)
            y = ops.bias_act(x, b, dim, act, 0.2, gain, clamp)
            expected = unfused(x, b, dim, act, 0.2, gain, clamp)
            assert_same_bits(y.detach(), expected.detach())
            g = random_tensor(shape, dtype, seed=3)
            inputs = (x, b) if with_bias else (x,)
            ours = torch.autograd.grad(y, inputs, g)
            theirs = torch.autograd.grad(expected, inputs, g)
            assert_same_bits(ours[0], theirs[0])
            if with_bias:
                torch.testing.assert_close(ours[1], theirs[1], rtol=1e-5 if dtype == torch.float32
                                           else 1e-12, atol=1e-6 if dtype == torch.float32
                                           else 1e-12)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_types_round_once(dtype):
    x = random_tensor((4, 8, 3, 3), dtype)
    b = random_tensor((8,), dtype, seed=2)
    y = ops.bias_act(x, b, 1, "lrelu", 0.2, math.sqrt(2), 1.5)
    expected = unfused(x.float(), b.float(), 1, "lrelu", 0.2, math.sqrt(2), 1.5).to(dtype)
    assert_same_bits(y, expected)


def test_channels_last_keeps_layout():
    x = random_tensor((2, 8, 5, 5), torch.float32).contiguous(memory_format=torch.channels_last)
    b = random_tensor((8,), torch.float32, seed=2)
    y = ops.bias_act(x, b)
    assert y.is_contiguous(memory_format=torch.channels_last)
    assert_same_bits(y, unfused(x, b, 1, "lrelu", 0.2, math.sqrt(2), None))


def test_gradcheck_and_gradgradcheck():
    x = random_tensor((3, 4, 5), torch.float64).requires_grad_()
    b = random_tensor((4,), torch.float64, seed=2).requires_grad_()
    for act in ("lrelu", "relu", "linear"):
        fn = lambda x_, b_, a=act: ops.bias_act(x_, b_, 1, a, 0.2, 1.4, None)
        assert torch.autograd.gradcheck(fn, (x, b))
        assert torch.autograd.gradgradcheck(fn, (x, b))
    fn = lambda x_, b_: ops.bias_act(x_, b_, 1, "lrelu", 0.2, 1.4, 2.0)
    assert torch.autograd.gradcheck(fn, (x, b))


def test_r1_penalty_matches_unfused():
    torch.manual_seed(0)
    w = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    b = torch.randn(8, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, 5, dtype=torch.float64, requires_grad=True)

    def r1(layer):
        out = layer(x @ w.t()).sum()
        (gx,) = torch.autograd.grad(out, x, create_graph=True)
        return torch.autograd.grad(gx.pow(2).sum(), (w, b), allow_unused=True)

    ours = r1(lambda t: ops.bias_act(t, b, 1, "lrelu", 0.2, math.sqrt(2), None))
    theirs = r1(lambda t: unfused(t, b, 1, "lrelu", 0.2, math.sqrt(2), None))
    torch.testing.assert_close(ours[0], theirs[0], rtol=1e-12, atol=1e-12)


def test_errors():
    x = torch.randn(2, 3)
    with pytest.raises(RuntimeError, match=r"dropout_p = 1.5 is not in \[0, 1\)"):
        ops.bias_act(x, None, 1, "lrelu", 0.2, 1.0, None, 1.5)
    # A NaN p is refused, also with autograd recording (that path picks the
    # dropout or plain op by p > 0, which NaN fails).
    for needs_grad in (False, True):
        with pytest.raises(RuntimeError, match=r"dropout_p = nan is not in \[0, 1\)"):
            ops.bias_act(x.clone().requires_grad_(needs_grad), None, 1, "lrelu", 0.2, 1.0, None,
                         float("nan"))
    with pytest.raises(RuntimeError, match="act 'tanh'"):
        ops.bias_act(x, None, 1, "tanh")
    with pytest.raises(RuntimeError, match=r"b must have shape \[3\]"):
        ops.bias_act(x, torch.randn(4))
    with pytest.raises(RuntimeError, match="out of range"):
        ops.bias_act(x, None, 2)
    with pytest.raises(RuntimeError, match="clamp"):
        ops.bias_act(x, None, 1, "lrelu", 0.2, 1.0, -1.0)


def test_backward_with_mixed_layouts():
    # x channels-last, the incoming gradient contiguous: both are packed.
    x = random_tensor((2, 4, 3, 3), torch.float64).contiguous(
        memory_format=torch.channels_last).requires_grad_()
    b = random_tensor((4,), torch.float64, seed=2).requires_grad_()
    g = random_tensor((2, 4, 3, 3), torch.float64, seed=3)
    ours = torch.autograd.grad(ops.bias_act(x, b), (x, b), g)
    theirs = torch.autograd.grad(unfused(x, b, 1, "lrelu", 0.2, math.sqrt(2), None), (x, b), g)
    assert_same_bits(ours[0].contiguous(), theirs[0].contiguous())
    torch.testing.assert_close(ours[1], theirs[1], rtol=1e-12, atol=1e-12)


def test_every_module_scripts_and_bias_act_keeps_its_defaults():
    """Documented as scriptable: every leaky.nn module scripts, and a scripted
    BiasAct (alpha, gain and clamp left None) gives the eager module's result,
    StyleGAN's defaults included (lrelu: alpha 0.2, gain sqrt(2))."""
    torch.manual_seed(0)
    x = torch.randn(4, 3, 5)
    for module in (leaky.nn.LeakyReLU(0.2), leaky.nn.ReLU(), leaky.nn.ELU(), leaky.nn.PReLU(3),
                   leaky.nn.RReLU(seed=1), leaky.nn.BiasAct(3),
                   leaky.nn.BiasAct(3, act="relu", alpha=0.1, gain=2.0, clamp=1.0)):
        module.eval()
        scripted = torch.jit.script(module)
        assert torch.equal(scripted(x), module(x)), module
    eager = leaky.nn.BiasAct(3)(x)
    expected = torch.nn.functional.leaky_relu(x, 0.2) * (2 ** 0.5)
    assert torch.allclose(eager, expected, rtol=0, atol=1e-6)

"""torch.ops.leaky: bit-for-bit parity with PyTorch's own LeakyReLU, autograd
to second order, in-place semantics, layouts and errors."""
import pytest
import torch
import torch.nn.functional as F

import leaky
from conftest import (SIZES, SLOPES, assert_same_bits, random_tensor, reference_half_backward,
                      reference_half_forward, special_values)

ops = torch.ops.leaky
PARITY_DTYPES = [torch.float32, torch.float64, torch.bfloat16]


def expected_forward(x, slope):
    if x.dtype == torch.float16:  # PyTorch 1.13 has no CPU f16 LeakyReLU
        return reference_half_forward(x, slope)
    return F.leaky_relu(x, slope)


def expected_backward(dy, saved, slope, is_result):
    if dy.dtype == torch.float16:
        return reference_half_backward(dy, saved, slope)
    return torch.ops.aten.leaky_relu_backward(dy, saved, slope, is_result)


@pytest.mark.parametrize("dtype", PARITY_DTYPES + [torch.float16])
@pytest.mark.parametrize("slope", SLOPES)
def test_forward_bit_exact_random_and_special(dtype, slope):
    for n in SIZES:
        x = random_tensor((n,), dtype, seed=n)
        assert_same_bits(ops.leaky_relu(x, slope), expected_forward(x, slope))
    x = special_values(dtype)
    assert_same_bits(ops.leaky_relu(x, slope), expected_forward(x, slope))


def test_half_negative_side_underflow_is_exact():
    # Every f16 bit pattern: products below f16's smallest subnormal round to
    # zero only where exact rounding says so (no f16 multiply, no FTZ).
    x = torch.arange(-32768, 32768, dtype=torch.int32).to(torch.int16).view(torch.float16)
    for slope in (0.01, 0.2):
        assert_same_bits(ops.leaky_relu(x, slope), reference_half_forward(x, slope))
    torch.set_flush_denormal(True)
    try:
        assert_same_bits(ops.leaky_relu(x, 0.01), reference_half_forward(x, 0.01).cpu())
    finally:
        torch.set_flush_denormal(False)


@pytest.mark.parametrize("dtype", PARITY_DTYPES + [torch.float16])
@pytest.mark.parametrize("slope", [0.0, 0.2, -0.5])
def test_backward_bit_exact(dtype, slope):
    for n in SIZES:
        dy = random_tensor((n,), dtype, seed=2 * n + 1)
        x = random_tensor((n,), dtype, seed=2 * n)
        assert_same_bits(ops.leaky_relu_backward(dy, x, slope, False),
                         expected_backward(dy, x, slope, False))
        if slope >= 0:
            y = ops.leaky_relu(x, slope)
            assert_same_bits(ops.leaky_relu_backward(dy, y, slope, True),
                             expected_backward(dy, y, slope, True))
    x = special_values(dtype)
    dy = special_values(dtype).flip(0)
    assert_same_bits(ops.leaky_relu_backward(dy, x, slope, False),
                     expected_backward(dy, x, slope, False))


@pytest.mark.parametrize("dtype", PARITY_DTYPES)
def test_layouts(dtype):
    x = random_tensor((4, 6, 5, 7), dtype)
    cases = {
        "channels_last": x.contiguous(memory_format=torch.channels_last),
        "transposed": x.transpose(1, 3),
        "strided slice": x[:, ::2, :, 1:],
        "expanded": random_tensor((1, 6, 1, 7), dtype).expand(4, 6, 5, 7),
        "scalar": torch.tensor(-3.0, dtype=dtype),
    }
    for name, t in cases.items():
        y = ops.leaky_relu(t, 0.2)
        assert_same_bits(y, F.leaky_relu(t, 0.2))
        if t.is_contiguous(memory_format=torch.channels_last) and t.dim() == 4:
            assert y.stride() == t.stride(), name  # layout kept, no copy
        dy = random_tensor(t.shape, dtype, seed=5).transpose(0, 1).contiguous().transpose(0, 1) \
            if t.dim() == 4 else random_tensor(t.shape, dtype, seed=5)
        assert_same_bits(ops.leaky_relu_backward(dy, t, 0.2, False),
                         torch.ops.aten.leaky_relu_backward(dy, t, 0.2, False))


@pytest.mark.parametrize("dtype", PARITY_DTYPES + [torch.float16])
def test_in_place(dtype):
    x = random_tensor((1000,), dtype)
    expected = expected_forward(x, 0.2)
    y = x.clone()
    out = ops.leaky_relu_(y, 0.2)
    assert out.data_ptr() == y.data_ptr()
    assert y._version == 1
    assert_same_bits(y, expected)
    # Non-dense in-place: a strided view of a larger tensor, the rest untouched.
    base = random_tensor((10, 10), dtype)
    before = base.clone()
    view = base[:, ::3]
    ops.leaky_relu_(view, 0.2)
    assert_same_bits(base[:, ::3], expected_forward(before[:, ::3], 0.2))
    mask = torch.ones(10, 10, dtype=torch.bool)
    mask[:, ::3] = False
    assert_same_bits(base[mask], before[mask])


def test_in_place_errors_like_pytorch():
    leaf = torch.randn(5, requires_grad=True)
    before = leaf.detach().clone()
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        ops.leaky_relu_(leaf, 0.2)
    assert torch.equal(leaf.detach(), before)  # untouched
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        ops.leaky_relu_(leaf[1:], 0.2)
    with torch.no_grad():  # allowed without grad mode, as in PyTorch
        ops.leaky_relu_(leaf, 0.2)
    # Negative slope in place: backward cannot recover the input's sign.
    y = torch.randn(5, requires_grad=True) * 1
    ops.leaky_relu_(y, -0.5)
    with pytest.raises(RuntimeError, match="negative slope"):
        y.sum().backward()
    # The saved result changed again in place: caught in backward.
    z = torch.randn(5, requires_grad=True) * 1
    ops.leaky_relu_(z, 0.2)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_in_place_gradient_matches_pytorch():
    x = torch.randn(100, dtype=torch.float64, requires_grad=True)
    g = torch.randn(100, dtype=torch.float64)
    ours = ops.leaky_relu_(x * 1, 0.2)
    (grad_ours,) = torch.autograd.grad(ours, x, g)
    theirs = F.leaky_relu_(x * 1, 0.2)
    (grad_theirs,) = torch.autograd.grad(theirs, x, g)
    assert_same_bits(grad_ours, grad_theirs)


def test_gradcheck_and_gradgradcheck():
    # Keep inputs away from 0, where the op has a kink that finite
    # differences cannot see past.
    x = torch.randn(30, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()
    for slope in (0.2, -0.5, 0.0):
        fn = lambda t, s=slope: ops.leaky_relu(t, s)
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
        fn_inplace = lambda t, s=slope: ops.leaky_relu_(t * 1, s)
        if slope >= 0:
            assert torch.autograd.gradcheck(fn_inplace, (x,))
            assert torch.autograd.gradgradcheck(fn_inplace, (x,))
    dy = torch.randn(30, dtype=torch.float64, requires_grad=True)
    fn = lambda g, t: ops.leaky_relu_backward(g, t, 0.2, False)
    assert torch.autograd.gradcheck(fn, (dy, x))
    assert torch.autograd.gradgradcheck(fn, (dy, x))


def test_r1_penalty_double_backward_matches_pytorch():
    # The GAN use: gradient of the gradient norm with respect to weights.
    torch.manual_seed(0)
    w = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, 5, dtype=torch.float64, requires_grad=True)

    def r1(act):
        out = act(x @ w.t()).sum()
        (gx,) = torch.autograd.grad(out, x, create_graph=True)
        (gw,) = torch.autograd.grad(gx.pow(2).sum(), w)
        return gw

    assert_same_bits(r1(lambda t: ops.leaky_relu(t, 0.2)), r1(lambda t: F.leaky_relu(t, 0.2)))


def test_errors_leave_outputs_untouched():
    with pytest.raises(RuntimeError, match="dtype"):
        ops.leaky_relu(torch.arange(4), 0.2)
    with pytest.raises(RuntimeError, match="not finite"):
        ops.leaky_relu(torch.randn(4), float("nan"))
    x = torch.randn(4)
    before = x.clone()
    with pytest.raises(RuntimeError, match="not finite"):
        ops.leaky_relu_(x, float("inf"))
    assert torch.equal(x, before)
    with pytest.raises(RuntimeError, match="does not match"):
        ops.leaky_relu_backward(torch.randn(3), torch.randn(4), 0.2, False)
    with pytest.raises(RuntimeError, match="float32 but self is|Float but self is"):
        ops.leaky_relu_backward(torch.randn(4), torch.randn(4, dtype=torch.float64), 0.2, False)
    with pytest.raises(RuntimeError, match="negative slope"):
        ops.leaky_relu_backward(torch.randn(4), torch.randn(4), -0.1, True)
    overlapping = torch.randn(1).expand(4)
    with pytest.raises(RuntimeError, match="more than one element"):
        ops.leaky_relu_(overlapping, 0.2)


def test_thread_count_does_not_change_results():
    x = random_tensor((1 << 20,), torch.float32)
    saved = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = ops.leaky_relu(x, 0.2)
        torch.set_num_threads(2)
        two = ops.leaky_relu(x, 0.2)
    finally:
        torch.set_num_threads(saved)
    assert_same_bits(one, two)


def test_functional_and_module_api():
    x = random_tensor((3, 4), torch.float32)
    assert_same_bits(leaky.functional.leaky_relu(x, 0.3), F.leaky_relu(x, 0.3))
    m = leaky.nn.LeakyReLU(0.3)
    assert_same_bits(m(x), torch.nn.LeakyReLU(0.3)(x))
    assert repr(m) == "leaky.LeakyReLU(negative_slope=0.3)"
    y = x.clone()
    assert leaky.nn.LeakyReLU(0.3, inplace=True)(y) is y
    assert_same_bits(y, F.leaky_relu(x, 0.3))
    # Scripting works: the op is visible to TorchScript through the dispatcher.
    scripted = torch.jit.script(leaky.nn.LeakyReLU(0.3))
    assert_same_bits(scripted(x), F.leaky_relu(x, 0.3))

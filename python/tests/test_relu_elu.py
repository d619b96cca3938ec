"""torch.ops.leaky.relu (bit-exact with torch.relu) and torch.ops.leaky.elu
(within the measured ulp bounds of leaky/reference.hpp), autograd to second
order, in-place rules, and the output cache."""
import pytest
import torch
import torch.nn.functional as F

import leaky
from conftest import SIZES, assert_same_bits, bits, random_tensor, special_values

ops = torch.ops.leaky


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.float16])
def test_relu_bit_exact(dtype):
    for n in SIZES:
        x = random_tensor((n,), dtype, seed=n)
        x = torch.cat([x, special_values(dtype)])
        expected = torch.relu(x.float()).to(dtype) if dtype == torch.float16 else torch.relu(x)
        y = ops.relu(x)
        assert_same_bits(y, expected)
        dy = random_tensor(x.shape, dtype, seed=n + 1)
        expected_dx = torch.where(y.float() <= 0, torch.zeros_like(dy.float()), dy.float()).to(dtype) \
            if dtype == torch.float16 else torch.ops.aten.threshold_backward(dy, y, 0)
        assert_same_bits(ops.relu_backward(dy, y), expected_dx)
    z = random_tensor((100,), dtype)
    expected = torch.relu(z.float()).to(dtype) if dtype == torch.float16 else torch.relu(z)
    ops.relu_(z)
    assert z._version == 1
    assert_same_bits(z, expected)


def ulp_distance(a, b):
    """Per-element distance in ulps of a's dtype, NaN == NaN."""
    ia, ib = bits(a).long(), bits(b).long()
    width = {torch.float32: 31, torch.float64: 63, torch.float16: 15, torch.bfloat16: 15}[a.dtype]
    sign = 1 << width
    ra = torch.where(ia < 0, -(ia & (sign - 1)), ia) if width != 63 else torch.where(
        ia < 0, -(ia & 0x7FFFFFFFFFFFFFFF), ia)
    rb = torch.where(ib < 0, -(ib & (sign - 1)), ib) if width != 63 else torch.where(
        ib < 0, -(ib & 0x7FFFFFFFFFFFFFFF), ib)
    d = (ra - rb).abs()
    both_nan = torch.isnan(a) & torch.isnan(b)
    return torch.where(both_nan, torch.zeros_like(d), d)


@pytest.mark.parametrize("dtype,bound", [(torch.float32, 3), (torch.float64, 3),
                                         (torch.bfloat16, 1), (torch.float16, 1)])
@pytest.mark.parametrize("alpha,scale,input_scale", [(1.0, 1.0, 1.0), (1.6732632423543772,
                                                                       1.0507009873554805, 0.75)])
def test_elu_close_to_exact(dtype, bound, alpha, scale, input_scale):
    # The exact value (expm1 in double, rounded once to the dtype). PyTorch
    # 1.13's own elu computes exp(x) - 1, which loses every digit near 0
    # (elu(-1e-38) = 0), so it is no reference for accuracy.
    x = torch.cat([random_tensor((65537,), dtype), special_values(dtype)])
    xd = x.double()
    c = torch.tensor(alpha, dtype=torch.float64) * scale
    exact = torch.where(xd <= 0, torch.expm1(xd * input_scale) * c, xd * scale)
    expected = exact.to(dtype)
    y = ops.elu(x, alpha, scale, input_scale)
    assert int(ulp_distance(y, expected).max()) <= bound


def test_elu_specials():
    x = torch.tensor([float("inf"), float("-inf"), float("nan"), -200.0, 2.0])
    assert_same_bits(ops.elu(x, 1.0), torch.tensor([float("inf"), -1.0, float("nan"), -1.0, 2.0]))


def test_gradcheck_and_gradgradcheck_relu_elu():
    x = torch.randn(30, dtype=torch.float64)
    x = (x + 0.1 * x.sign()).requires_grad_()
    dy = torch.randn(30, dtype=torch.float64, requires_grad=True)
    for fn in (lambda t: ops.relu(t), lambda t: ops.relu_(t * 1),
               lambda t: ops.elu(t, 1.3, 1.05, 0.7), lambda t: ops.elu_(t * 1, 1.3, 1.05, 0.7)):
        assert torch.autograd.gradcheck(fn, (x,))
        assert torch.autograd.gradgradcheck(fn, (x,))
    for is_result in (False, True):
        saved = ops.elu(x, 1.3, 1.05, 0.7).detach().requires_grad_() if is_result else x
        fn = lambda g, s, r=is_result: ops.elu_backward(g, 1.3, 1.05, 0.7, r, s)
        assert torch.autograd.gradcheck(fn, (dy, saved))
        assert torch.autograd.gradgradcheck(fn, (dy, saved))
    fn = lambda g, s: ops.relu_backward(g, s)
    assert torch.autograd.gradcheck(fn, (dy, x))  # saved away from the kink at 0


def test_elu_r1_penalty_close_to_pytorch():
    torch.manual_seed(0)
    w = torch.randn(8, 5, dtype=torch.float64, requires_grad=True)
    x = torch.randn(16, 5, dtype=torch.float64, requires_grad=True)

    def r1(act):
        (gx,) = torch.autograd.grad(act(x @ w.t()).sum(), x, create_graph=True)
        (gw,) = torch.autograd.grad(gx.pow(2).sum(), w)
        return gw

    torch.testing.assert_close(r1(lambda t: ops.elu(t, 1.0)), r1(lambda t: F.elu(t, 1.0)),
                               rtol=1e-13, atol=0)


def test_in_place_rules():
    leaf = torch.randn(4, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ops.relu_(leaf)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        ops.elu_(leaf)
    y = torch.randn(5, requires_grad=True) * 1
    ops.elu_(y, -0.5)
    with pytest.raises(RuntimeError, match="negative slope"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="finite"):
        ops.elu(torch.randn(3), float("nan"))


def test_modules_swap_for_torch_nn():
    x = random_tensor((3, 5), torch.float32)
    assert_same_bits(leaky.nn.ReLU()(x), torch.nn.ReLU()(x))
    assert int(ulp_distance(leaky.nn.ELU(0.5)(x), torch.nn.ELU(0.5)(x)).max()) <= 3
    assert repr(leaky.nn.ELU(0.5, inplace=True)) == "leaky.ELU(alpha=0.5, inplace=True)"


def test_modules_script():
    m = torch.jit.script(torch.nn.Sequential(leaky.nn.ELU(0.5), leaky.nn.ReLU()))
    x = torch.tensor([-1.0, 2.0])
    assert_same_bits(m(x), torch.relu(ops.elu(x, 0.5)))

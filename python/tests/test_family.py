"""torch.ops.leaky.prelu / rrelu and bias_act's fused dropout: bit-for-bit
PyTorch's ops where PyTorch defines the result (prelu; rrelu in evaluation;
dropout given the mask), reproducible random streams for any thread count
and layout, autograd to second order, modules, errors."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import leaky
from conftest import assert_same_bits, random_tensor

ops = torch.ops.leaky


def unpack_mask(mask, n):
    return torch.from_numpy(np.unpackbits(mask.numpy(), bitorder="little")[:n].astype(bool))


# ------------------------------------------------------------------ PReLU
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("shape,channels", [((4, 6, 5, 7), 6), ((8, 16), 16), ((1000,), 1),
                                            ((2, 3, 9), 1)])
def test_prelu_matches_pytorch(dtype, shape, channels):
    x = random_tensor(shape, dtype, seed=1)
    x.view(-1)[::7] = 0.0
    w = (torch.rand(channels, dtype=torch.float64) - 0.3).to(dtype)
    assert_same_bits(ops.prelu(x, w), F.prelu(x, w))
    xr, wr = x.clone().requires_grad_(), w.clone().requires_grad_()
    F.prelu(xr, wr).backward(random_tensor(shape, dtype, seed=2))
    dy = random_tensor(shape, dtype, seed=2)
    dx, dw = ops.prelu_backward(dy, x, w)
    assert_same_bits(dx, xr.grad)
    # dweight: the same terms, summed in a fixed order (double) here.
    tol = 1e-5 if dtype == torch.float32 else 1e-12 if dtype == torch.float64 else 2e-2
    torch.testing.assert_close(dw.double(), wr.grad.double(), rtol=tol, atol=tol)


def test_prelu_channels_last_and_thread_count():
    x = random_tensor((4, 8, 5, 6), torch.float32, seed=3).to(memory_format=torch.channels_last)
    w = torch.rand(8) * 0.5
    assert_same_bits(ops.prelu(x, w), F.prelu(x.contiguous(), w))
    dy = random_tensor((4, 8, 5, 6), torch.float32, seed=4)
    threads = torch.get_num_threads()
    try:
        results = []
        for n in (1, 2):
            torch.set_num_threads(n)
            results.append(ops.prelu_backward(dy, x, w))
    finally:
        torch.set_num_threads(threads)
    assert_same_bits(results[0][0], results[1][0])
    assert_same_bits(results[0][1], results[1][1])  # deterministic dweight


@pytest.mark.parametrize("channels", [1, 3])
def test_prelu_gradcheck_and_gradgradcheck(channels):
    x = (random_tensor((2, 3, 4), torch.float64, seed=5) + 0.05).requires_grad_()
    w = torch.tensor([0.25, -0.5, 1.5][:channels], dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(ops.prelu, (x, w))
    assert torch.autograd.gradgradcheck(ops.prelu, (x, w))


def test_prelu_module_is_a_drop_in():
    torch.manual_seed(0)
    ours, theirs = leaky.nn.PReLU(3), torch.nn.PReLU(3)
    x = random_tensor((5, 3, 4), torch.float32, seed=6)
    assert_same_bits(ours(x), theirs(x))


def test_prelu_errors():
    with pytest.raises(RuntimeError, match="weight must have 1 or 6"):
        ops.prelu(torch.zeros(2, 6, 3), torch.zeros(4))
    with pytest.raises(RuntimeError, match="no channel axis"):
        ops.prelu(torch.zeros(5), torch.zeros(2))


# ------------------------------------------------------------------ RReLU
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_rrelu_evaluation_matches_pytorch(dtype):
    x = random_tensor((1000,), dtype, seed=7)
    assert_same_bits(ops.rrelu(x, 0.1, 0.3, False), F.rrelu(x, 0.1, 0.3, training=False))


def test_rrelu_training_uses_its_noise_and_is_reproducible():
    x = random_tensor((64, 1000), torch.float32, seed=8)
    y, noise = ops.rrelu_with_noise(x, 0.1, 0.3, True, 42, 7)
    assert_same_bits(y, torch.where(x <= 0, x * noise, x))
    negative = noise[x <= 0]
    assert negative.min() >= 0.1 and negative.max() <= 0.3
    assert abs(negative.double().mean().item() - 0.2) < 0.002
    assert torch.all(noise[x > 0] == 1)
    assert_same_bits(ops.rrelu(x, 0.1, 0.3, True, 42, 7), y)
    assert not torch.equal(ops.rrelu(x, 0.1, 0.3, True, 43, 7), y)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = ops.rrelu(x, 0.1, 0.3, True, 42, 7)
    finally:
        torch.set_num_threads(threads)
    assert_same_bits(one, y)
    # The stream continues: the second half drawn with offset + first half.
    half = x.numel() // 2
    flat = x.reshape(-1)
    parts = torch.cat([ops.rrelu(flat[:half], 0.1, 0.3, True, 42, 7),
                       ops.rrelu(flat[half:], 0.1, 0.3, True, 42, 7 + half)])
    assert_same_bits(parts, y.reshape(-1))


def test_rrelu_gradients():
    x = (random_tensor((3, 50), torch.float64, seed=9) + 0.01).requires_grad_()
    f = lambda t: ops.rrelu(t, 0.1, 0.3, True, 5, 0)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x,))
    assert torch.autograd.gradgradcheck(f, (x,))
    y, noise = ops.rrelu_with_noise(x.detach(), 0.1, 0.3, True, 5, 0)
    f(x).backward(torch.ones_like(x))
    assert_same_bits(x.grad, noise)


def test_rrelu_module_draws_fresh_slopes_each_call():
    m = leaky.nn.RReLU(0.1, 0.3, seed=1)
    x = -torch.ones(1000)
    first, second = m(x), m(x)
    assert not torch.equal(first, second)
    m.eval()
    assert_same_bits(m(x), F.rrelu(x, 0.1, 0.3, training=False))


def test_rrelu_errors():
    with pytest.raises(RuntimeError, match="lower <= upper"):
        ops.rrelu(torch.zeros(3), 0.5, 0.1, True)


# ------------------------------------------------------------------ dropout
def unfused(x, b, gain, alpha=0.2):
    shape = [1] * x.dim()
    shape[1] = -1
    return F.leaky_relu(x + b.reshape(shape), alpha) * gain


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bias_act_dropout_matches_unfused_given_the_mask(dtype):
    x = random_tensor((8, 16, 9, 9), dtype, seed=10)
    b = random_tensor((16,), dtype, seed=11)
    p, gain = 0.3, 2 ** 0.5
    y, mask = ops.bias_act_dropout(x, b, 1, "lrelu", 0.2, gain, None, p, 123, 0)
    kept = unpack_mask(mask, x.numel()).reshape(x.shape)
    # PyTorch's dropout: x * (mask / (1 - p)), the scale computed in the dtype.
    noise = kept.to(dtype) / (1 - p)
    assert_same_bits(y, unfused(x, b, gain) * noise)
    assert_same_bits(ops.bias_act(x, b, 1, "lrelu", 0.2, gain, None, p, 123, 0), y)
    assert abs(kept.double().mean().item() - 0.7) < 0.01
    # Backward: autograd of the unfused sequence with the same mask.
    xr, br = x.clone().requires_grad_(), b.clone().requires_grad_()
    dy = random_tensor(x.shape, dtype, seed=12)
    (unfused(xr, br, gain) * noise).backward(dy)
    xo, bo = x.clone().requires_grad_(), b.clone().requires_grad_()
    ops.bias_act(xo, bo, 1, "lrelu", 0.2, gain, None, p, 123, 0).backward(dy)
    assert_same_bits(xo.grad, xr.grad)
    torch.testing.assert_close(bo.grad, br.grad)


def test_bias_act_dropout_channels_last_pairs_mask_and_gradient():
    x = random_tensor((4, 8, 5, 5), torch.float32, seed=13).to(memory_format=torch.channels_last)
    b = random_tensor((8,), torch.float32, seed=14)
    y, mask = ops.bias_act_dropout(x, b, 1, "lrelu", 0.2, 1.0, None, 0.5, 9, 0)
    # The mask follows memory order (channels-last): element (n, c, h, w) is
    # bit number ((n * H + h) * W + w) * C + c.
    kept = unpack_mask(mask, x.numel()).reshape(4, 5, 5, 8).permute(0, 3, 1, 2)
    assert_same_bits(y.contiguous(), (unfused(x, b, 1.0) * kept.float() / 0.5).contiguous())
    xo = x.clone().requires_grad_()
    ops.bias_act(xo, b, 1, "lrelu", 0.2, 1.0, None, 0.5, 9, 0).backward(torch.ones(4, 8, 5, 5))
    expected = torch.where(x + b.reshape(1, -1, 1, 1) > 0, 1.0, 0.2) * kept.float() / 0.5
    assert_same_bits(xo.grad.contiguous(), expected.contiguous())


def test_bias_act_dropout_second_order():
    x = (random_tensor((2, 3, 4), torch.float64, seed=15) + 0.01).requires_grad_()
    b = random_tensor((3,), torch.float64, seed=16).requires_grad_()
    f = lambda t, c: ops.bias_act(t, c, 1, "lrelu", 0.2, 1.4, None, 0.25, 77, 3)  # noqa: E731
    assert torch.autograd.gradcheck(f, (x, b))
    assert torch.autograd.gradgradcheck(f, (x, b))


def test_bias_act_module_dropout_only_in_training():
    torch.manual_seed(1)
    m = leaky.nn.BiasAct(4, dropout_p=0.5)
    x = torch.ones(2, 4, 10)
    a, b = m(x), m(x)
    assert not torch.equal(a, b)  # fresh masks: the offset advances
    assert m.offset == 2 * x.numel()
    m.eval()
    assert_same_bits(m(x), ops.bias_act(x, m.bias, 1, "lrelu", 0.2, 2 ** 0.5))


def test_bias_act_dropout_errors():
    with pytest.raises(RuntimeError, match=r"not in \[0, 1\)"):
        ops.bias_act(torch.zeros(2, 3), None, 1, "lrelu", 0.2, 1.0, None, 1.0)
    with pytest.raises(RuntimeError, match="needs the forward's mask"):
        ops.bias_act_backward(torch.zeros(2, 3), torch.zeros(2, 3), None, 1, "lrelu", 0.2, 1.0,
                              None, None, 0.5)

"""leaky.numpy for the whole family (leaky/family.h), every dtype: bit for bit
PyTorch's own operators where PyTorch defines the result (relu, prelu, rrelu
in evaluation, the unfused bias_act sequence; half types computed in float32
and rounded once), torch.ops.leaky where the result is the library's own
(ELU's expm1, RReLU's and dropout's Philox stream), plus out=, in place,
thread counts, and errors that leave `out` untouched."""
import numpy as np
import pytest
import torch
import torch.nn.functional as F

import leaky  # noqa: F401  (loads torch.ops.leaky)
import leaky.functional  # noqa: F401
import leaky.numpy as lnp
from conftest import assert_same_bits, random_tensor

ops = torch.ops.leaky
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]


def to_np(t):
    """A torch tensor as leaky.numpy's array: bfloat16 as uint16 bits."""
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16).copy()
    return t.numpy().copy()


def to_torch(a):
    if a.dtype == np.uint16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(np.ascontiguousarray(a).copy())


def same(numpy_result, expected):
    assert_same_bits(to_torch(numpy_result), expected)


def compute(dtype):
    return torch.float64 if dtype == torch.float64 else torch.float32


def sample(shape, dtype, seed):
    x = random_tensor(shape, dtype, seed=seed)
    x.view(-1)[::5] = 0.0
    x.view(-1)[1::11] = -0.0
    return x


@pytest.mark.parametrize("dtype", DTYPES)
def test_relu_and_its_backward(dtype):
    x, dy = sample((3, 1001), dtype, 1), sample((3, 1001), dtype, 2)
    y = torch.relu(x.to(compute(dtype))).to(dtype)  # PyTorch 1.13 has no CPU half relu
    same(lnp.relu(to_np(x)), y)
    for saved in (x, y):  # the input or the result: the same answer
        same(lnp.relu_backward(to_np(dy), to_np(saved)),
             torch.where(saved <= 0, torch.zeros_like(dy), dy))


@pytest.mark.parametrize("dtype", DTYPES)
def test_elu_equals_the_torch_binding_and_is_near_pytorch(dtype):
    x, dy = sample((4099,), dtype, 3), sample((4099,), dtype, 4)
    k = dict(alpha=1.6732632423543772, scale=1.0507009873554805, input_scale=0.75)
    y = lnp.elu(to_np(x), **k)
    same(y, ops.elu(x, k["alpha"], k["scale"], k["input_scale"]))
    x64 = x.to(torch.float64)
    near = torch.where(x64 <= 0, torch.expm1(x64 * k["input_scale"]) * k["alpha"] * k["scale"],
                       x64 * k["scale"])
    tol = {torch.float32: 1e-6, torch.float64: 1e-14, torch.float16: 1e-3, torch.bfloat16: 8e-3}
    torch.testing.assert_close(to_torch(y).to(torch.float64), near, rtol=tol[dtype], atol=1e-30)
    for is_result, saved in ((False, x), (True, to_torch(y))):
        same(lnp.elu_backward(to_np(dy), to_np(saved), saved_is_result=is_result, **k),
             ops.elu_backward(dy, k["alpha"], k["scale"], k["input_scale"], is_result, saved))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,axis,channels", [((4, 6, 5, 7), 1, 6), ((8, 16), -1, 16),
                                                 ((1000,), 0, 1), ((2, 3, 9), 1, 1)])
def test_prelu_and_its_weight_gradient(dtype, shape, axis, channels):
    x, dy = sample(shape, dtype, 5), sample(shape, dtype, 6)
    w = (torch.rand(channels, dtype=torch.float64) - 0.3).to(dtype)
    c = compute(dtype)
    view = [1] * len(shape)
    if channels > 1:
        view[axis] = channels
    wv = w.to(c).reshape(view)
    same(lnp.prelu(to_np(x), to_np(w), axis=axis),
         torch.where(x > 0, x.to(c), wv * x.to(c)).to(dtype))
    dx, dw = lnp.prelu_backward(to_np(dy), to_np(x), to_np(w), axis=axis)
    same(dx, torch.where(x > 0, dy.to(c), wv * dy.to(c)).to(dtype))
    # dweight: per channel, the products in the compute type summed in
    # double in memory order, rounded once (half types: to float first).
    prod = torch.where(x > 0, torch.zeros_like(x, dtype=c), x.to(c) * dy.to(c)).numpy()
    a = axis % len(shape) if channels > 1 else None
    per = np.moveaxis(prod, a, 0).reshape(channels, -1) if a is not None else prod.reshape(1, -1)
    sums = np.array([np.cumsum(row.astype(np.float64))[-1] for row in per])
    expect = torch.from_numpy(sums)
    expect = expect if dtype == torch.float64 else expect.to(torch.float32).to(dtype)
    same(dw, expect)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rrelu_evaluation_is_leaky_relu_with_the_mean_slope(dtype):
    x = sample((7, 513), dtype, 7)
    lower, upper = 0.1, 0.3
    expect = F.leaky_relu(x.to(compute(dtype)), (lower + upper) / 2).to(dtype)
    same(lnp.rrelu(to_np(x), lower, upper), expect)
    y, noise = lnp.rrelu_with_noise(to_np(x), lower, upper)
    same(y, expect)
    mean = torch.tensor((lower + upper) / 2, dtype=compute(dtype)).to(dtype)
    same(noise, torch.where(x <= 0, mean.expand_as(x), torch.ones_like(x)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_rrelu_training_draws_the_torch_bindings_stream(dtype):
    x, dy = sample((3, 4097), dtype, 8), sample((3, 4097), dtype, 9)
    args = (0.125, 1 / 3, True, 1234, 99)
    y, noise = lnp.rrelu_with_noise(to_np(x), *args)
    ty, tnoise = ops.rrelu_with_noise(x, *args)
    same(y, ty)
    same(noise, tnoise)
    slopes = to_torch(noise).to(torch.float64)[x <= 0]
    bounds = torch.tensor([0.125, 1 / 3], dtype=torch.float64).to(dtype).to(torch.float64)
    assert bounds[0] <= slopes.min() and slopes.max() <= bounds[1]
    assert slopes.unique().numel() > (20 if dtype == torch.bfloat16 else 100)
    same(lnp.rrelu(to_np(x), *args, num_threads=1), ty)
    same(lnp.rrelu_backward(to_np(dy), to_np(x), *args), ops.rrelu_backward(dy, x, *args))
    # Another offset: other slopes.
    _, other = lnp.rrelu_with_noise(to_np(x), 0.125, 1 / 3, True, 1234, 100)
    assert not np.array_equal(other, noise)


def unfused(x, b, axis, act, alpha, gain, clamp, dtype):
    c = compute(dtype)
    view = [1] * x.dim()
    view[axis] = -1
    v = x.to(c) + b.to(c).reshape(view) if b is not None else x.to(c)
    if act == "lrelu":
        v = F.leaky_relu(v, alpha)
    elif act == "relu":
        v = torch.relu(v)
    v = v * gain
    if clamp is not None:
        v = v.clamp(-clamp, clamp)
    return v.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("act,alpha,gain,clamp", [("lrelu", 0.2, 2 ** 0.5, None),
                                                  ("relu", 0.0, 2 ** 0.5, 1.5),
                                                  ("linear", 0.0, 1.0, None),
                                                  ("lrelu", 0.1, 3.0, 2.0)])
def test_bias_act_equals_the_unfused_sequence(dtype, act, alpha, gain, clamp):
    x = sample((2, 5, 3, 7), dtype, 10)
    b = random_tensor((5,), dtype, seed=11)
    got = lnp.bias_act(to_np(x), to_np(b), 1, act, alpha, gain, clamp)
    same(got, unfused(x, b, 1, act, alpha, gain, clamp, dtype))
    dy = sample((2, 5, 3, 7), dtype, 12)
    dx, db = lnp.bias_act_backward(to_np(dy), to_np(x), to_np(b), 1, act, alpha, gain, clamp)
    tdx, tdb = ops.bias_act_backward(dy, x, b, 1, act, alpha, gain, clamp)
    same(dx, tdx)
    same(db, tdb)


def test_bias_act_defaults_and_no_bias():
    x = sample((4, 3, 10), torch.float32, 13)
    same(lnp.bias_act(to_np(x)), unfused(x, None, 1, "lrelu", 0.2, 2 ** 0.5, None, torch.float32))
    same(lnp.bias_act(to_np(x), act="relu"),
         unfused(x, None, 1, "relu", 0.0, 2 ** 0.5, None, torch.float32))
    b = random_tensor((10,), torch.float32, seed=14)
    same(lnp.bias_act(to_np(x), to_np(b), axis=-1, act="linear"),
         unfused(x, b, 2, "linear", 0.0, 1.0, None, torch.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_bias_act_dropout_and_its_backward(dtype):
    x, dy = sample((3, 4, 333), dtype, 15), sample((3, 4, 333), dtype, 16)
    b = random_tensor((4,), dtype, seed=17)
    y, mask = lnp.bias_act_dropout(to_np(x), to_np(b), 1, "lrelu", dropout_p=0.3, seed=5,
                                   offset=7)
    ty, tmask = ops.bias_act_dropout(x, b, 1, "lrelu", None, None, None, 0.3, 5, 7)
    same(y, ty)
    assert np.array_equal(mask, tmask.numpy())
    assert mask[-1] >> (x.numel() % 8) == 0  # the bits past n: zero, not the allocation's
    kept = torch.from_numpy(np.unpackbits(mask, bitorder="little")[:x.numel()].astype(bool))
    assert 0.6 < kept.float().mean() < 0.8
    # Given the mask, the unfused sequence: u * (kept ? 1 / (1 - p) : 0) in
    # the compute type, rounded once.
    c = compute(dtype)
    u = unfused(x, b, 1, "lrelu", 0.2, 2 ** 0.5, None, c).reshape(-1)
    scale = 1 / torch.tensor(1 - 0.3, dtype=c)
    same(y, torch.where(kept, u * scale, u * 0).to(dtype).reshape(x.shape))
    same(lnp.bias_act(to_np(x), to_np(b), dropout_p=0.3, seed=5, offset=7), ty)
    dx, db = lnp.bias_act_dropout_backward(to_np(dy), to_np(x), mask, to_np(b), dropout_p=0.3)
    tdx, tdb = ops.bias_act_backward(dy, x, b, 1, "lrelu", 0.2, 2 ** 0.5, None, tmask, 0.3)
    same(dx, tdx)
    same(db, tdb)
    fdx, fdb = ops.bias_act_dropout_backward(dy, x, b, 1, "lrelu", 0.2, 2 ** 0.5, None, tmask, 0.3)
    assert_same_bits(fdx, tdx)
    assert_same_bits(fdb, tdb)


FORWARDS = {
    "leaky_relu": lambda x, **k: lnp.leaky_relu(x, 0.2, **k),
    "relu": lambda x, **k: lnp.relu(x, **k),
    "elu": lambda x, **k: lnp.elu(x, **k),
    "prelu": lambda x, **k: lnp.prelu(x, np.full(6, 0.25, x.dtype), **k),
    "rrelu": lambda x, **k: lnp.rrelu(x, training=True, seed=3, **k),
    "bias_act": lambda x, **k: lnp.bias_act(x, np.ones(6, x.dtype), **k),
    "bias_act_dropout": lambda x, **k: lnp.bias_act_dropout(x, **k)[0],
}


@pytest.mark.parametrize("op", sorted(FORWARDS))
def test_out_in_place_threads_and_layouts(op):
    f = FORWARDS[op]
    x = to_np(sample((5, 6, 41), torch.float32, 18))
    expect = f(x)
    for threads in (1, 2, 3):
        assert np.array_equal(f(x, num_threads=threads), expect)
    out = np.empty_like(x)
    assert f(x, out=out) is out and np.array_equal(out, expect)
    inplace = x.copy()
    f(inplace, out=inplace)
    assert np.array_equal(inplace, expect)
    fortran = np.asfortranarray(x)  # copied to C order first: the same values
    assert np.array_equal(f(fortran), expect)


@pytest.mark.parametrize("call,error,words", [
    (lambda x, o: lnp.prelu(x, np.ones(5, np.float32), out=o), ValueError, "weight must be 1-D"),
    (lambda x, o: lnp.prelu(x, np.ones(6, np.float64), out=o), TypeError, "weight has dtype"),
    (lambda x, o: lnp.prelu(x, np.ones(6, np.float32), axis=3, out=o), ValueError, "axis 3"),
    (lambda x, o: lnp.bias_act(x, act="gelu", out=o), ValueError, "act 'gelu'"),
    (lambda x, o: lnp.bias_act(x, clamp=float("nan"), out=o), ValueError, "clamp"),
    (lambda x, o: lnp.bias_act_dropout(x, dropout_p=1.0, out=o), ValueError, "[0, 1)"),
    (lambda x, o: lnp.rrelu(x, 0.5, 0.25, out=o), ValueError, "greater than upper"),
    (lambda x, o: lnp.elu(x, alpha=float("inf"), out=o), ValueError, "alpha"),
    (lambda x, o: lnp.relu(x, out=o, num_threads=-1), ValueError, "num_threads"),
    (lambda x, o: lnp.relu(x, out=o.astype(np.float64)), TypeError, "out has dtype"),
    (lambda x, o: lnp.relu_backward(x, x[:, :2], out=o), ValueError, "different shape"),
    (lambda x, o: lnp.bias_act_dropout_backward(x, x, np.zeros(3, np.uint8), out=o), ValueError,
     "mask must be"),
])
def test_errors_name_the_argument_and_leave_out_untouched(call, error, words):
    x = to_np(sample((5, 6, 4), torch.float32, 19))
    out = np.full_like(x, 7.0)
    with pytest.raises(error) as raised:
        call(x, out)
    message = str(raised.value)
    assert words in message and "leaky_" not in message, message
    assert np.all(out == 7.0)

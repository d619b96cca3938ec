"""leaky.testing.check_op for every op of leaky/family.h: the library's own
kernels pass in every direction and dtype; kernels with the faults each op
invites fail, and the diagnosis names a place only where it has one (a
region never written) and otherwise says it cannot explain the values,
never a LeakyReLU cause (a slope) for another op's values."""
import numpy as np
import pytest

import leaky.numpy as lnp
import leaky.testing as lt

CORRECT = {
    ("relu", "forward"): lambda x: lnp.relu(x),
    ("relu", "backward"): lambda dy, saved: lnp.relu_backward(dy, saved),
    ("elu", "forward"): lambda x, **k: lnp.elu(x, **k),
    ("elu", "backward"): lambda dy, saved, **k: lnp.elu_backward(dy, saved, **k),
    ("prelu", "forward"): lambda x, weight: lnp.prelu(x, weight),
    ("prelu", "backward"): lambda dy, x, weight: lnp.prelu_backward(dy, x, weight),
    ("rrelu", "forward"): lambda x, **k: lnp.rrelu_with_noise(x, **k),
    ("rrelu", "backward"): lambda dy, x, **k: lnp.rrelu_backward(dy, x, **k),
    ("bias_act", "forward"): lambda x, bias, **k: lnp.bias_act(x, bias, **k),
    ("bias_act", "backward"): lambda dy, x, bias, **k: lnp.bias_act_backward(dy, x, bias, **k),
    ("bias_act_dropout", "forward"): lambda x, bias, **k: lnp.bias_act_dropout(x, bias, **k),
    ("bias_act_dropout", "backward"):
        lambda dy, x, bias, mask, **k: lnp.bias_act_dropout_backward(dy, x, mask, bias, **k),
}
PLAN = dict(split="even", cores=4, tile_elems=512)


@pytest.mark.parametrize("op,direction", sorted(CORRECT))
@pytest.mark.parametrize("dtype", ["f32", "f64", "f16", "bf16"])
def test_the_librarys_own_kernels_pass(op, direction, dtype):
    d = lt.check_op(CORRECT[(op, direction)], dtype=dtype, elems=4096, op=op,
                    direction=direction, **PLAN)
    assert d.passed and not d.findings, str(d)


def test_leaky_relu_by_its_family_name_is_the_old_check():
    d = lt.check_op(lambda x, slope: lnp.leaky_relu(x, slope), dtype="f16", elems=4096,
                    op="leaky_relu", params={"negative_slope": 0.1}, **PLAN)
    assert d.passed
    d = lt.check_op(lambda x, slope: lnp.leaky_relu(x, 0.2), dtype="f32", elems=4096,
                    op="leaky_relu", params={"negative_slope": 0.1}, **PLAN)
    assert not d.passed and "slope_mismatch" in d.kinds()


def relu_tail_never_stored(x):
    """The remainder loop forgotten: the last 100 elements keep the output
    buffer's zeros."""
    y = np.zeros_like(x)
    y[:-100] = lnp.relu(x[:-100])
    return y


def prelu_weight0_broadcast(x, weight):
    """weight[0] for every channel (the shared-weight path taken always)."""
    return lnp.prelu(x, weight[:1])


def prelu_weight_grad_in_half(dy, x, weight):
    """dweight accumulated in the storage type."""
    dx, dw = lnp.prelu_backward(dy, x, weight)
    return dx, dw.astype(np.float16).astype(dw.dtype)


def rrelu_each_core_restarts(x, **k):
    """Each of two cores draws from the stream's start (offset 0) again."""
    flat = x.reshape(-1)
    half = flat.size // 2
    return np.concatenate([lnp.rrelu(flat[:half], **k), lnp.rrelu(flat[half:], **k)]).reshape(
        x.shape)


def bias_act_gain_before_clamp_missing(x, bias, **k):
    """The clamp forgotten."""
    k = dict(k, clamp=None)
    return lnp.bias_act(x, bias, **k)


def dropout_mask_msb_first(x, bias, **k):
    """The keep bits packed most significant first."""
    y, mask = lnp.bias_act_dropout(x, bias, **k)
    return y, np.packbits(np.unpackbits(mask, bitorder="little"), bitorder="big")


FAULTS = [
    (relu_tail_never_stored, "relu", "forward", {}, ["not_written"]),
    (prelu_weight0_broadcast, "prelu", "forward", {}, ["mismatch"]),
    (prelu_weight_grad_in_half, "prelu", "backward", {}, ["mismatch"]),
    (rrelu_each_core_restarts, "rrelu", "forward", {}, ["mismatch"]),
    (bias_act_gain_before_clamp_missing, "bias_act", "forward", {"clamp": 1.0}, ["mismatch"]),
    (dropout_mask_msb_first, "bias_act_dropout", "forward", {}, ["mismatch"]),
]


@pytest.mark.parametrize("fn,op,direction,params,kinds", FAULTS,
                         ids=[f[0].__name__ for f in FAULTS])
def test_faults_fail_with_no_leaky_relu_cause(fn, op, direction, params, kinds):
    d = lt.check_op(fn, dtype="f32", elems=4096, op=op, direction=direction, params=params,
                    **PLAN)
    assert not d.passed
    assert d.kinds() == kinds, str(d)
    assert "slope" not in str(d), str(d)


def test_the_places_of_a_region_never_written():
    d = lt.check_op(relu_tail_never_stored, dtype="f32", elems=4096, op="relu", **PLAN)
    assert "from index 3996 to the end" in d.findings[0].message, str(d)


def test_side_outputs_are_named():
    d = lt.check_op(dropout_mask_msb_first, dtype="f32", elems=4096, op="bias_act_dropout",
                    **PLAN)
    assert d.findings[0].details["output"] == "mask" and "bytes differ" in d.findings[0].message


@pytest.mark.parametrize("call,error,words", [
    (lambda: lt.check_op(lambda x: x, op="gelu"), ValueError, "op must be one of"),
    (lambda: lt.check_op(lambda x: x, op="relu", direction="sideways"), ValueError, "direction"),
    (lambda: lt.check_op(lambda x: x, op="elu", params={"slope": 1}), ValueError,
     "elu forward takes alpha, scale, input_scale, not slope"),
    (lambda: lt.check_op(lambda x, weight: x, op="prelu", elems=4, channels=4), ValueError,
     "elems must be at least 2 * channels"),
    (lambda: lt.check_op(lambda x, bias, **k: x, op="bias_act_dropout"), ValueError,
     "returned 1 array"),
])
def test_bad_arguments_say_what_is_wrong(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert words in str(raised.value)

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
    """dweight accumulated in f16, element by element."""
    dx, dw = lnp.prelu_backward(dy, x, weight)
    terms = np.where(x > 0, 0, x * dy).astype(np.float16)  # [outer, channels, inner]
    acc = np.zeros(x.shape[1], np.float16)
    for o in range(x.shape[0]):
        for i in range(x.shape[2]):
            acc = (acc + terms[o, :, i]).astype(np.float16)
    return dx, acc.astype(dw.dtype)


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


def elu_negative_side_as_relu(x, **k):
    """The activation's negative side dropped: not a fault of the list."""
    return np.maximum(lnp.elu(x, **k), np.float32(0)).astype(x.dtype)


FAULTS = [
    (relu_tail_never_stored, "relu", "forward", {}, ["not_written"]),
    (prelu_weight0_broadcast, "prelu", "forward", {}, ["weight_broadcast"]),
    (prelu_weight_grad_in_half, "prelu", "backward", {}, ["weight_grad_half"]),
    # Two halves restart where the plan's 4 cores do not: found from the
    # output, not from the plan.
    (rrelu_each_core_restarts, "rrelu", "forward", {"training": True}, ["stream_restart"]),
    (bias_act_gain_before_clamp_missing, "bias_act", "forward", {"clamp": 1.0}, ["clamp_missing"]),
    (dropout_mask_msb_first, "bias_act_dropout", "forward", {}, ["mask_bit_order"]),
    (elu_negative_side_as_relu, "elu", "forward", {}, ["mismatch"]),
]


@pytest.mark.parametrize("fn,op,direction,params,kinds", FAULTS,
                         ids=[f[0].__name__ for f in FAULTS])
def test_faults_name_the_op_s_cause(fn, op, direction, params, kinds):
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
    assert d.findings[0].details["output"] == "mask" and "mask 493 of 512" in d.findings[0].message, \
        str(d)


def mask_with_a_stray_byte(x, bias, **k):
    """One mask byte overwritten: no model of the op explains it."""
    y, mask = lnp.bias_act_dropout(x, bias, **k)
    mask[3] ^= 0x5A
    return y, mask


def test_a_side_output_no_model_explains_is_a_named_mismatch():
    d = lt.check_op(mask_with_a_stray_byte, dtype="f32", elems=4096, op="bias_act_dropout",
                    **PLAN)
    assert d.kinds() == ["mismatch"], str(d)
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
    # A side output of a dtype the toolkit has no name for is refused, not
    # read as the golden's dtype (its mismatch named values, not the dtype).
    (lambda: lt.check_op(
        lambda dy, x, weight: (lnp.prelu_backward(dy, x, weight)[0],
                               lnp.prelu_backward(dy, x, weight)[1].astype(np.int32)),
        op="prelu", direction="backward", dtype="f32", elems=4096), ValueError,
     "dweight must have dtype f32, not int32"),
])
def test_bad_arguments_say_what_is_wrong(call, error, words):
    with pytest.raises(error) as raised:
        call()
    assert words in str(raised.value)

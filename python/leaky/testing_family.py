"""Golden data and checks for every op of leaky/family.h besides LeakyReLU
(leaky.testing.check_op's own): ReLU, ELU, PReLU, RReLU, bias_act and
bias_act with dropout, forward and backward.

    d = leaky.testing.check_op(my_prelu, op="prelu", dtype="f32", elems=4096,
                               split="even", cores=8, tile_elems=512)

The inputs are drawn as `leaky golden` draws them (dist, seed); the golden
outputs are the library's (leaky.numpy), which is bit-exact against
PyTorch's own operators and the unfused sequences where the op is exact,
and within ELU's measured ulp bound (leaky/reference.hpp) where it is not:
ELU is checked with that bound. `fn` gets the row's inputs positionally, in
leaky/family.h's order, and the op's scalars as keywords:

    relu      fn(x)                     backward fn(dy, x)
    elu       fn(x, alpha, scale, input_scale)   backward fn(dy, x, ...)
    prelu     fn(x, weight)             backward fn(dy, x, weight) -> (dx, dweight)
    rrelu     fn(x, lower, upper, training, seed, offset) -> y or (y, noise)
              backward fn(dy, x, ...)
    bias_act  fn(x, bias, act, alpha, gain, clamp)   backward fn(dy, x, bias, ...) -> (dx, db)
    bias_act_dropout  fn(x, bias, ..., dropout_p, seed, offset) -> (y, mask)
              backward fn(dy, x, bias, mask, ..., dropout_p) -> (dx, db)

PReLU's and bias_act's x is [outer, channels, inner] with the channels on
axis 1 (NCHW's view; elems is rounded down to a multiple of 2 * channels).
The first output is diagnosed as `leaky check` diagnoses LeakyReLU's, by
place (what was never written, what landed at another index, NaNs, zero
signs); other outputs (dweight, db, noise, the mask) must match bit for
bit. Wrong values are then tried against the faults each op invites
(leaky.testing_family_models); where none explains them, a difference is
a `mismatch` naming the output, how many elements differ and the first."""
import numpy as _np

from . import numpy as _lnp

_ROWS = {(r["op"], r["direction"]): r for r in _lnp.family()}
OPS = tuple(sorted({op for op, _ in _ROWS}))

# Each op's scalars and their defaults: PyTorch's where it has them; RReLU
# in training, and dropout at p = 0.5, so that the random stream is checked.
DEFAULTS = {
    "relu": {},
    "elu": {"alpha": 1.0, "scale": 1.0, "input_scale": 1.0},
    "prelu": {},
    "rrelu": {"lower": 1 / 8, "upper": 1 / 3, "training": True, "seed": 0, "offset": 0},
    "bias_act": {"act": "lrelu", "alpha": 0.2, "gain": 2 ** 0.5, "clamp": None},
    "bias_act_dropout": {"act": "lrelu", "alpha": 0.2, "gain": 2 ** 0.5, "clamp": None,
                         "dropout_p": 0.5, "seed": 0, "offset": 0},
}
_CHANNEL_OPS = ("prelu", "bias_act", "bias_act_dropout")


def default_dist(op, direction):
    """"hard" (every special value), or "normal" for the ops whose second
    output sums over elements: one NaN would make every channel's NaN."""
    return "normal" if direction == "backward" and op in ("prelu", "bias_act",
                                                            "bias_act_dropout") else "hard"


def names(text):
    """An operand list of leaky/family.h ("dy, x, weight[channels]") as names."""
    return [part.strip().split("[")[0].rstrip("?") for part in text.split(",") if part.strip()]


def params_of(op, direction, params):
    """The op's scalars: its defaults, updated by `params` (unknown names are
    an error); the backward of dropout takes no seed or offset (the mask
    carries the draws)."""
    defaults = dict(DEFAULTS[op])
    if op == "bias_act_dropout" and direction == "backward":
        defaults.pop("seed")
        defaults.pop("offset")
    unknown = sorted(set(params or {}) - set(defaults))
    if unknown:
        raise ValueError("%s %s takes %s, not %s" % (
            op, direction, ", ".join(defaults) or "no scalars", ", ".join(unknown)))
    defaults.update(params or {})
    return defaults


def shape_of(op, elems, channels):
    if op not in _CHANNEL_OPS:
        return (elems,)
    inner = elems // (2 * channels)
    if inner == 0:
        raise ValueError("elems must be at least 2 * channels (%d) for %s" % (2 * channels, op))
    return (2, channels, inner)


def golden(golden_data, op, direction, dtype, elems, dist, seed, channels, params):
    """(inputs, outputs, scalars): dicts of NumPy arrays by leaky/family.h's
    operand names, and the scalars fn gets. golden_data is leaky.testing's
    golden() (the inputs as `leaky golden` draws them)."""
    row = _ROWS[(op, direction)]
    scalars = params_of(op, direction, params)
    shape = shape_of(op, elems, channels)
    n = int(_np.prod(shape))
    x, dy, _ = golden_data(dtype, n, 0.2, dist, seed, "backward")
    x, dy = x.reshape(shape), dy.reshape(shape)
    # Per-channel operands: moderate values of both signs (a weight or a
    # bias of NaN tells a kernel nothing about its indexing).
    side = golden_data(dtype, channels, 0.2, "uniform:-0.5,1.5", seed + 1, "forward")[0]
    inputs = {"x": x, "dy": dy, "saved": x, "weight": side, "bias": side}
    k = scalars
    fwd = direction == "forward"
    if op == "relu":
        outs = [_lnp.relu(x) if fwd else _lnp.relu_backward(dy, x)]
    elif op == "elu":
        outs = [_lnp.elu(x, **k) if fwd else _lnp.elu_backward(dy, x, **k)]
    elif op == "prelu":
        outs = [_lnp.prelu(x, side)] if fwd else list(_lnp.prelu_backward(dy, x, side))
    elif op == "rrelu":
        outs = list(_lnp.rrelu_with_noise(x, **k)) if fwd else [_lnp.rrelu_backward(dy, x, **k)]
    elif op == "bias_act":
        outs = [_lnp.bias_act(x, side, **k)] if fwd else list(_lnp.bias_act_backward(dy, x, side,
                                                                                     **k))
    elif op == "bias_act_dropout":
        # The backward's mask: the forward's draws with the same scalars.
        y, mask = _lnp.bias_act_dropout(x, side, **(k if fwd else params_of(op, "forward", params)))
        inputs["mask"] = mask
        outs = [y, mask] if fwd else list(_lnp.bias_act_dropout_backward(dy, x, mask, side, **k))
    else:
        raise ValueError("op must be one of %s, not %r" % (", ".join(OPS), op))
    return ({name: inputs[name] for name in names(row["inputs"])},
            dict(zip(names(row["outputs"]), outs)), scalars)


def max_ulp(op, direction, dtype, scalars):
    """0 where the op is exact; ELU's measured bound (leaky/reference.hpp)."""
    if op != "elu":
        return 0
    return _lnp._native.elu_max_ulp(dtype, direction == "backward",
                                    scalars["input_scale"] < 0)


def compare_side(name, expected, got):
    """A side output's differences as (count, message) - (0, None) if none."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return expected.size, "%s has shape %s and dtype %s; expected %s and %s" % (
            name, got.shape, got.dtype, expected.shape, expected.dtype)
    a = expected.reshape(-1).view(_np.dtype("u%d" % expected.itemsize))
    b = got.reshape(-1).view(_np.dtype("u%d" % got.itemsize))
    bad = _np.nonzero(a != b)[0]
    if bad.size == 0:
        return 0, None
    i = int(bad[0])
    what = "bytes" if name == "mask" else "elements"
    return int(bad.size), "%s: %d of %d %s differ, the first at %d (0x%x where 0x%x is " \
        "right); not diagnosed further" % (name, bad.size, a.size, what, i, int(b[i]), int(a[i]))

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
(the toolkit's family models, toolkit/family_models.cc: the same check as
`leaky check --op`); where none explains them, a difference is a
`mismatch` naming the output, how many elements differ and the first."""
import json as _json

import numpy as _np

from . import numpy as _lnp

_native = _lnp._native
_ROWS = {(r["op"], r["direction"]): r for r in _lnp.family()}
OPS = tuple(sorted({op for op, _ in _ROWS}))
_DTYPES = {"f16": _np.float16, "f32": _np.float32, "f64": _np.float64, "bf16": _np.uint16}


def defaults(op, direction):
    """The op's scalars and their defaults (the toolkit's, as `leaky golden
    --op` takes them): PyTorch's where it has them; RReLU in training, and
    dropout at p = 0.5, so that the random stream is checked."""
    return _json.loads(_native.toolkit_family_defaults(op, direction))


def default_dist(op, direction):
    """"hard" (every special value), or "normal" for the ops whose second
    output sums over elements: one NaN would make every channel's NaN."""
    return "normal" if direction == "backward" and op in ("prelu", "bias_act",
                                                            "bias_act_dropout") else "hard"


def params_json(params):
    """The scalars as the native calls take them (unknown names and bad
    values are refused there, in one line)."""
    def plain(v):
        if isinstance(v, (_np.floating, _np.integer, _np.bool_)):
            return v.item()
        raise ValueError("a scalar must be a number, a bool, a string or None, not %r" % (v,))
    return _json.dumps(dict(params or {}), default=plain)


def golden(op, direction, dtype, elems, dist, seed, channels, params):
    """(inputs, outputs, scalars): dicts of NumPy arrays by leaky/family.h's
    operand names, and the scalars fn gets - the toolkit's problem, as
    `leaky golden --op` writes it."""
    inputs, outputs, scalars, view = _native.toolkit_family_golden(
        op, direction, dtype, elems, channels, dist, seed, params_json(params))
    shape = tuple(view) if view[1] > 1 or op in ("prelu", "bias_act", "bias_act_dropout") else (
        view[2],)

    def array(name, data):
        if name == "mask":
            return _np.frombuffer(data, _np.uint8).copy()
        a = _np.frombuffer(data, _DTYPES[dtype]).copy()
        return a if name in ("weight", "bias", "dweight", "db") else a.reshape(shape)
    return ({n: array(n, d) for n, d in inputs}, {n: array(n, d) for n, d in outputs},
            _json.loads(scalars))


def type_name(a, dtype):
    """A result's dtype as the native check names it."""
    kind = _np.dtype(a.dtype)
    names = {_np.dtype(_np.float16): "f16", _np.dtype(_np.float32): "f32",
             _np.dtype(_np.float64): "f64", _np.dtype(_np.uint8): "u8"}
    if kind == _np.uint16 and dtype == "bf16":
        return "bf16"
    return names.get(kind, str(kind))

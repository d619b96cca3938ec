"""leaky.testing on 8-bit data (leaky/eight_bit.h): check a LeakyReLU
kernel on qu8, qs8, fp8_e4m3 or fp8_e5m2 bytes against the library's exact
golden, byte for byte, and diagnose it as `leaky check` does.

    import leaky.testing
    d = leaky.testing.check_q8_op(my_kernel, dtype="qu8", slope=0.2,
                                  input_scale=0.09375, input_zero_point=128,
                                  output_scale=0.0625, output_zero_point=40)
    print(d)   # PASS/FAIL and one line per finding (rounding_rule, clamp_missing, ...)

`fn` gets the input bytes as a NumPy array (uint8 for qu8 and both fp8
formats, int8 for qs8) and the slope - backward (fp8 only): fn(dy, x,
slope) - and returns an array of the same shape and dtype. The input is
every byte value, each run of 256 shuffled by `seed`. Quantization keywords
left as None take `leaky golden`'s defaults (golden_q8_defaults).
"""
import importlib

import numpy as _np

# leaky.testing's helpers (argument checks, the plan, Diagnosis), looked up
# when called: leaky.testing imports this module at its end, and under
# `python -m leaky.testing` it is __main__, so importing it here, at the
# top, would load it a second time half-way through this one.
_t = None


def _testing():
    global _t
    if _t is None:
        _t = importlib.import_module("leaky.testing")
    return _t


def _native():
    return _testing()._native
TYPES = ("qu8", "qs8", "fp8_e4m3", "fp8_e5m2")
_NUMPY = {"qu8": _np.uint8, "qs8": _np.int8, "fp8_e4m3": _np.uint8, "fp8_e5m2": _np.uint8}
_QUANTIZATION = ("input_scale", "input_zero_point", "output_scale", "output_zero_point",
                 "output_min", "output_max")


def golden_q8_defaults(dtype):
    """The parameters `leaky golden --dtype DTYPE` takes unless told."""
    _testing()._one_of("dtype", dtype, TYPES)
    return dict(_native().toolkit_defaults_q8(dtype))


def _q8_args(dtype, op, saturate, given):
    """The native call's parameters: defaults, then the keywords given,
    each checked here (a type) or natively (a range), in one line."""
    _testing()._one_of("dtype", dtype, TYPES)
    _t._one_of("op", op, ["forward", "backward"])
    params = golden_q8_defaults(dtype)
    quantized = dtype in ("qu8", "qs8")
    for name in _QUANTIZATION:
        value = given[name]
        if value is None:
            continue
        if not quantized:
            raise ValueError("%s applies to qu8/qs8 data, not %s" % (name, dtype))
        if name.endswith("scale"):
            params[name] = _t._finite(name, value)
        else:
            params[name] = _t._whole(name, value, (-2 ** 31, 2 ** 31 - 1))
    if saturate is not None:
        if quantized:
            raise ValueError("saturate applies to fp8 data, not %s" % dtype)
        if not isinstance(saturate, (bool, _np.bool_)):
            raise ValueError("saturate must be True or False, not %r" % (saturate,))
        params["saturate"] = bool(saturate)
    return params


def _order(params):
    return [params[k] for k in _QUANTIZATION] + [params["saturate"]]


def golden_q8(dtype="qu8", elems=10007, slope=0.2, seed=1, op="forward", input_scale=None,
              input_zero_point=None, output_scale=None, output_zero_point=None, output_min=None,
              output_max=None, saturate=None):
    """(x, dy, golden) as NumPy arrays of the type's bytes, as `leaky golden`
    writes them (dy is None forward)."""
    given = dict(input_scale=input_scale, input_zero_point=input_zero_point,
                 output_scale=output_scale, output_zero_point=output_zero_point,
                 output_min=output_min, output_max=output_max)
    params = _q8_args(dtype, op, saturate, given)
    return _golden(dtype, _t._whole("elems", elems), _t._finite("slope", slope),
                   _t._whole("seed", seed), op, params)


def _golden(dtype, elems, slope, seed, op, params):
    x, dy, g = _native().toolkit_golden_q8(dtype, elems, slope, seed, op, *_order(params))
    to = lambda b: _np.frombuffer(b, dtype=_NUMPY[dtype]).copy()  # noqa: E731
    return to(x), (to(dy) if op == "backward" else None), to(g)


def check_q8_op(fn, dtype="qu8", elems=10007, slope=0.2, op="forward", input_scale=None,
                input_zero_point=None, output_scale=None, output_zero_point=None,
                output_min=None, output_max=None, saturate=None, split="even", cores=8,
                tile_elems=4096, buffers=2, preset="npu", buffer_bytes=None, align=None, seed=1):
    """Makes 8-bit golden data through the library, calls `fn`, and returns
    the Diagnosis (0 tolerance: bytes compare exactly). split=None checks
    without mapping to cores and tiles."""
    _testing()
    if not callable(fn):
        raise TypeError("fn must be callable, not %r" % (fn,))
    # Every argument is checked before fn is called.
    given = dict(input_scale=input_scale, input_zero_point=input_zero_point,
                 output_scale=output_scale, output_zero_point=output_zero_point,
                 output_min=output_min, output_max=output_max)
    params = _q8_args(dtype, op, saturate, given)
    elems, slope, seed = _t._whole("elems", elems), _t._finite("slope", slope), _t._whole("seed", seed)
    plan = _t._plan_json(split, cores, tile_elems, buffers, preset, buffer_bytes, align)
    if plan:
        _native().toolkit_check_plan_q8(elems, op, plan)
    x, dy, g = _golden(dtype, elems, slope, seed, op, params)
    out = _t._call(fn, x, dy, slope)
    return _t._diagnosis(_native().toolkit_check_q8(
        dtype, slope, op, *_order(params), x.tobytes(), b"" if dy is None else dy.tobytes(),
        g.tobytes(), out.tobytes(), plan))


# ------------------------------------------- python3 -m leaky.testing's flags


_WORDS = {"input_scale": "input's scale", "input_zero_point": "input's zero point",
          "output_scale": "output's scale", "output_zero_point": "output's zero point",
          "output_min": "output's clamp minimum, in quantized units",
          "output_max": "output's clamp maximum, in quantized units"}


def add_arguments(parser, typed, finite_problem, whole_problem):
    """The quantization flags of `python3 -m leaky.testing --dtype qu8 ...`,
    as `leaky golden` spells them."""
    for name in _QUANTIZATION:
        check = finite_problem if name.endswith("scale") else (
            lambda value, name=name: whole_problem(name, value, (-2 ** 31, 2 ** 31 - 1)))
        parser.add_argument("--" + name.replace("_", "-"), default=None,
                            type=typed(float if name.endswith("scale") else int, check),
                            help="qu8/qs8: the %s (default: leaky golden's)" % _WORDS[name])
    parser.add_argument("--saturate", type=int, choices=[0, 1], default=None,
                        help="fp8: 1 stores out-of-range results as the largest finite value, "
                             "0 as infinity or NaN (default: 1)")


def arguments_given(args):
    """The quantization flags given, by keyword."""
    given = {name: getattr(args, name) for name in _QUANTIZATION + ("saturate",)}
    return {name: value for name, value in given.items() if value is not None}


def check_from_arguments(fn, args, quantization, plan):
    """check_q8_op with main()'s arguments; the float-only flags refused."""
    if args.dist is not None:
        raise ValueError("--dist does not apply to %s data: its input is every byte value"
                         % args.dtype)
    for flag, given in (("--max-ulp", args.max_ulp is not None),
                        ("--strict-zero-sign", args.strict_zero_sign),
                        ("--allow-rounding", args.allow_rounding)):
        if given:
            raise ValueError("%s does not apply to %s data: its bytes compare exactly"
                             % (flag, args.dtype))
    if "saturate" in quantization:
        quantization["saturate"] = bool(quantization["saturate"])
    return check_q8_op(fn, args.dtype, args.elems, args.slope, args.op, seed=args.seed,
                       **quantization, **plan)

"""Check any kernel of the LeakyReLU family against the library's exact golden
data, and diagnose it as `leaky check` does - in your split and tiles. NumPy
only.

    import leaky.testing
    d = leaky.testing.check_op(my_kernel, dtype="f16", elems=10007, slope=0.2,
                               dist="hard", split="even", cores=8, tile_elems=4096)
    print(d)               # PASS/FAIL, counts, one line per finding
    d.passed, d.findings   # Finding(kind, message, first, last, core, tile, details)

The other ops of leaky/family.h (ReLU, ELU, PReLU, RReLU, bias_act, with
dropout): check_op(fn, op="prelu", direction="backward", params={...}) and
golden_op; leaky.testing_family says what fn gets and how it is checked.

8-bit data (qu8, qs8, fp8_e4m3, fp8_e5m2): check_q8_op and golden_q8
(leaky.testing_eight_bit), byte-exact; from the shell `--dtype qu8
--input-scale ...` as `leaky golden` takes them.

`fn` is any callable: LeakyReLU's forward fn(x, slope) -> y, backward
fn(dy, x, slope) -> dx, given NumPy arrays (float16/float32/float64;
bfloat16 as a uint16 view of its bits) and returning something
numpy.asarray accepts (a NumPy array, a CPU tensor; a GPU tensor is brought
back with .cpu()). From the
shell, with `leaky check`'s exit codes (0 pass, 1 mismatch, 2 unusable):

    /usr/bin/python3 -m leaky.testing MODULE:FUNCTION --dtype f16 --split even ...
"""
import argparse
import dataclasses
import importlib
import json
import math
import numbers
import sys

import numpy as _np

from . import _library
from . import testing_family as _family

_native = _library.load_native()

_DTYPES = {"f16": _np.float16, "f32": _np.float32, "f64": _np.float64, "bf16": _np.uint16}
# Every kind a finding can have, in the documented order (the toolkit's
# one list, toolkit/finding_kinds.inc; the family's value kinds last).
FINDING_KINDS = tuple(_native.toolkit_finding_kinds)
# The ops of leaky/family.h that golden_op and check_op know, in both
# directions: LeakyReLU here, the rest in leaky.testing_family.
OPS = ("leaky_relu",) + tuple(op for op in _family.OPS if op != "leaky_relu")
_SPLITS = ("granule", "even", "balanced")


@dataclasses.dataclass
class Finding:
    kind: str          # e.g. select_missing, misplaced, not_written (leaky check's kinds)
    message: str       # what it looks like, where, and the usual cause
    first: int = None  # first element it concerns, where it has one
    last: int = None
    core: int = None   # core and tile of `first` under the plan
    tile: int = None
    details: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Diagnosis:
    passed: bool
    elements: int
    mismatches: int
    max_ulp: int
    tolerance_ulp: int
    findings: list

    def kinds(self):
        return [f.kind for f in self.findings]

    def __str__(self):
        lines = ["%s: %d of %d elements outside %d ulp" % (
            "PASS" if self.passed else "FAIL", self.mismatches, self.elements, self.tolerance_ulp)]
        lines += ["- %s: %s" % (f.kind, f.message) for f in self.findings]
        return "\n".join(lines)


def _finding(raw):
    d = raw.get("details", {})
    # Where it starts: the first extent or tile of its region, else the
    # details' own first element, core and tile.
    region = d.get("region") if isinstance(d.get("region"), dict) else d
    blocks = region.get("extents") or d.get("tiles")
    first_of = blocks[0] if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict) else d
    first = first_of.get("first", d.get("index"))
    return Finding(raw["kind"], raw["message"], first, first_of.get("last"),
                   first_of.get("core", d.get("core")), first_of.get("tile", d.get("tile")), d)


# The integer arguments' ranges, as `leaky golden` and `leaky check` take them.
# tile_elems and buffer_bytes go up to 2^64 - 1: the planner then names the
# product that overflows.
_RANGES = {"elems": (1, 2 ** 32), "seed": (0, 2 ** 64 - 1), "max_ulp": (0, 2 ** 62),
           "cores": (1, 65536), "tile_elems": (1, 2 ** 64 - 1), "buffers": (1, 8),
           "buffer_bytes": (1, 2 ** 64 - 1), "align": (1, 65536)}


def _whole_problem(name, value, limits=None):
    """What is wrong with `value` for the integer argument `name` (within
    `limits`, else _RANGES[name]), or None. Checked here, so a bad value is
    one sentence rather than pybind11's dump of every argument of the native
    call."""
    low, high = limits or _RANGES[name]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        return "must be a whole number, not %r" % (value,)
    if value < low:
        return "must be at least %d, not %d" % (low, value)
    if value > high:
        return "must be at most %d, not %d" % (high, value)
    return None


def _whole(name, value, limits=None):
    problem = _whole_problem(name, value, limits)
    if problem:
        raise ValueError("%s %s" % (name, problem))
    return int(value)


def _finite(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError("%s must be a finite number, not %r" % (name, value))
    return float(value)


def _one_of(name, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise ValueError("%s must be one of %s, not %r" % (name, ", ".join(choices), value))
    return value


def _golden_args(dtype, elems, slope, dist, seed, op):
    """golden()'s arguments, checked and converted, in the native call's order."""
    if dtype in ("qu8", "qs8", "fp8_e4m3", "fp8_e5m2"):
        raise ValueError("dtype %r is 8-bit: use check_q8_op / golden_q8, which take its "
                         "quantization (leaky.testing_eight_bit)" % dtype)
    _one_of("dtype", dtype, list(_DTYPES))
    if not isinstance(dist, str):
        raise ValueError("dist must be a string such as 'hard' or 'normal:0,1', not %r" % (dist,))
    return (dtype, _whole("elems", elems), _finite("slope", slope), dist, _whole("seed", seed),
            _one_of("op", op, ["forward", "backward"]))


def _plan_json(split, cores, tile_elems, buffers, preset, buffer_bytes, align):
    if split is None:
        return ""
    _one_of("split", split, _SPLITS)
    _one_of("preset", preset, ["npu", "cpu"])
    plan = {"preset": preset, "split": split}
    for name, key, value in (("cores", "cores", cores), ("tile_elems", "tile_elems", tile_elems),
                             ("buffers", "buffers", buffers),
                             ("buffer_bytes", "buffer_bytes", buffer_bytes),
                             ("align", "align_bytes", align)):
        if value is not None:
            plan[key] = _whole(name, value)
    return json.dumps(plan)


def _as_array(result, like, what):
    if hasattr(result, "detach"):  # a torch tensor, on any device
        result = result.detach().cpu().numpy()
    out = _np.asarray(result)
    if out.shape != like.shape:
        raise ValueError("%s returned shape %s for inputs of shape %s" % (what, out.shape, like.shape))
    if out.dtype != like.dtype:
        raise TypeError("%s returned dtype %s for inputs of dtype %s" % (what, out.dtype, like.dtype))
    return _np.ascontiguousarray(out)


def golden(dtype="f16", elems=10007, slope=0.2, dist="hard", seed=1, op="forward"):
    """(x, dy, golden) as NumPy arrays, as `leaky golden` writes them (dy is
    None forward)."""
    args = _golden_args(dtype, elems, slope, dist, seed, op)
    x, dy, g = _native.toolkit_golden(*args)
    to = lambda b: _np.frombuffer(b, dtype=_DTYPES[dtype]).copy()  # noqa: E731
    return to(x), (to(dy) if op == "backward" else None), to(g)


def golden_op(op, direction="forward", dtype="f32", elems=10007, dist=None, seed=1,
              channels=4, params=None):
    """Any op of leaky/family.h: (inputs, outputs, scalars), dicts of NumPy
    arrays by the list's operand names and the scalars `fn` gets
    (leaky.testing_family). dist None: "hard", or "normal" where an output
    sums over elements (PReLU's dweight, bias_act's db), which one NaN or
    infinity of "hard" would make NaN in every channel."""
    _one_of("op", op, list(OPS))
    _one_of("direction", direction, ["forward", "backward"])
    if dist is None:
        dist = _family.default_dist(op, direction)
    if op == "leaky_relu":
        slope = _finite("negative_slope", (params or {}).get("negative_slope", 0.2))
        x, dy, g = golden(dtype, elems, slope, dist, seed, direction)
        inputs = {"x": x} if direction == "forward" else {"dy": dy, "saved": x}
        return inputs, {"y" if direction == "forward" else "dx": g}, {"negative_slope": slope}
    _golden_args(dtype, elems, 0.2, dist, seed, direction)
    return _family.golden(op, direction, dtype, elems, dist, seed,
                          _whole("channels", channels, (1, 2 ** 20)), params)


def check_op(fn, dtype="f16", elems=10007, slope=0.2, dist=None, op="forward",
             split="even", cores=8, tile_elems=4096, buffers=2, preset="npu",
             buffer_bytes=None, align=None, seed=1, max_ulp=0, strict_zero_sign=False,
             allow_rounding=False, direction="forward", params=None, channels=4):
    """Makes golden data through the library, calls `fn`, and returns the
    Diagnosis. split=None checks without mapping to cores and tiles. For a
    device kernel (opencl_leaky_relu), align and buffer_bytes default to
    the device's own (its plan request's), so the check's plan is the
    launch's. op is LeakyReLU's direction ("forward", "backward"), or an
    op of leaky/family.h with `direction` and its scalars in `params`
    (leaky.testing_family says what fn gets and how it is checked)."""
    if not callable(fn):
        raise TypeError("fn must be callable, not %r" % (fn,))
    if op == "leaky_relu":
        _one_of("direction", direction, ["forward", "backward"])
        op, slope = direction, (params or {}).get("negative_slope", slope)
    if op in ("forward", "backward"):
        dist = "hard" if dist is None else dist
    else:
        return _check_family_op(fn, op, direction, dtype, elems, dist, seed, channels, params,
                                split, cores, tile_elems, buffers, preset, buffer_bytes, align,
                                max_ulp, strict_zero_sign)
    # Every argument is checked before fn is called.
    _golden_args(dtype, elems, slope, dist, seed, op)
    max_ulp = _whole("max_ulp", max_ulp)
    _flag("strict_zero_sign", strict_zero_sign)
    _flag("allow_rounding", allow_rounding)
    plan = _plan_of(fn, dtype, split, cores, tile_elems, buffers, preset, buffer_bytes, align)
    if plan:
        _native.toolkit_check_plan(dtype, elems, op, plan)
    x, dy, g = golden(dtype, elems, slope, dist, seed, op)
    out = _call(fn, x, dy, slope)
    return _diagnosis(_native.toolkit_check(
        dtype, float(slope), op, x.tobytes(), b"" if dy is None else dy.tobytes(), g.tobytes(),
        out.tobytes(), max_ulp, bool(strict_zero_sign), bool(allow_rounding), plan))


def _flag(name, value):
    if not isinstance(value, (bool, _np.bool_)):
        raise ValueError("%s must be True or False, not %r" % (name, value))


def _plan_of(fn, dtype, split, cores, tile_elems, buffers, preset, buffer_bytes, align):
    """The check's plan as JSON ("" without a split). A device kernel
    (opencl_leaky_relu) plans on its device's alignment and local memory:
    the check maps the output on the same plan."""
    facts = getattr(fn, "plan_facts", None)
    if split is not None and callable(facts):
        facts = facts(dtype)
        align = facts["align_bytes"] if align is None else align
        buffer_bytes = facts["buffer_bytes"] if buffer_bytes is None else buffer_bytes
    return _plan_json(split, cores, tile_elems, buffers, preset, buffer_bytes, align)


def _check_family_op(fn, op, direction, dtype, elems, dist, seed, channels, params, split, cores,
                     tile_elems, buffers, preset, buffer_bytes, align, max_ulp,
                     strict_zero_sign):
    """check_op for an op of leaky/family.h other than LeakyReLU: the
    toolkit's family check (toolkit/family_check.h, `leaky check --op`'s),
    on what fn returns for the golden's inputs."""
    _one_of("op", op, list(OPS) + ["forward", "backward"])
    if dist is None:
        dist = _family.default_dist(op, direction)
    inputs, outputs, scalars = golden_op(op, direction, dtype, elems, dist, seed, channels, params)
    max_ulp = _whole("max_ulp", max_ulp)
    _flag("strict_zero_sign", strict_zero_sign)
    first = next(iter(outputs.values()))
    plan = _plan_of(fn, dtype, split, cores, tile_elems, buffers, preset, buffer_bytes, align)
    if plan:
        _native.toolkit_check_plan(dtype, first.size, direction, plan)
    name = getattr(fn, "__name__", "fn")
    try:
        result = fn(*[a.copy() for a in inputs.values()], **scalars)
    except Exception as e:
        raise RuntimeError("fn (%s) raised %s: %s" % (name, type(e).__name__, e)) from e
    results = list(result) if isinstance(result, (tuple, list)) else [result]
    if not 1 <= len(results) <= len(outputs):
        raise ValueError("fn (%s) returned %d arrays; %s %s returns %s" % (
            name, len(results), op, direction, ", ".join(outputs)))
    required = 2 if op == "bias_act_dropout" and direction == "forward" else 1
    if len(results) < required:
        raise ValueError("fn (%s) returned %d array; bias_act_dropout returns y and its mask" %
                         (name, len(results)))
    out = _as_array(results[0], first, "fn (%s)" % name)
    sent = [(_family.type_name(out, dtype), out.reshape(-1).tobytes())]
    for got in results[1:]:
        got = _np.ascontiguousarray(got.detach().cpu().numpy() if hasattr(got, "detach") else got)
        sent.append((_family.type_name(got, dtype), got.reshape(-1).tobytes()))
    return _diagnosis(_native.toolkit_family_check(
        op, direction, dtype, elems, channels, dist, seed, _family.params_json(params), sent,
        max_ulp, bool(strict_zero_sign), plan))


def _call(fn, x, dy, slope):
    """fn's output on copies of the golden's inputs (forward fn(x, slope),
    backward fn(dy, x, slope)), checked to be an array like x."""
    name = getattr(fn, "__name__", "fn")
    try:
        result = fn(x.copy(), slope) if dy is None else fn(dy.copy(), x.copy(), slope)
    except Exception as e:
        raise RuntimeError("fn (%s) raised %s: %s" % (name, type(e).__name__, e)) from e
    return _as_array(result, x, "fn (%s)" % name)


def _diagnosis(verdict):
    raw = json.loads(verdict)
    return Diagnosis(raw["pass"], raw["elements"], raw["mismatches"], raw["max_ulp"],
                     raw["tolerance_ulp"], [_finding(f) for f in raw["findings"]])


_FAULTS = ("none", "compute-before-wait", "remainder-dropped", "slope-layout", "half-flush",
           "single-buffer", "select-missing", "core-offset")


def opencl_leaky_relu(cores=8, split="even", tile_elems=4096, buffers=2, device=None,
                      fault="none", source=None, build_options=None, op="forward"):
    """The OpenCL device kernel (leaky/opencl.h) as a callable for check_op,
    optionally with one of the article's faults planted (`leaky device run
    --fault`'s names). device=None picks a GPU if any, else the first
    device. The library's planner plans the launch from the device's own
    request (leaky_cl_plan_request) with these cores, split (granule, even
    or balanced), tile and buffers.

    source: the OpenCL C text of a kernel of your own to run in the
    library's place (leaky_cl_options.source: leaky_relu_tiles with the
    library kernel's arguments, built with the same -D LEAKY_DTYPE,
    LEAKY_BACKWARD and LEAKY_FAULT), so a port is checked on the same host,
    plan and tiling data; build_options: extra compiler options, e.g.
    "-cl-denorms-are-zero". op="backward" returns fn(dy, x, slope) -> dx,
    as check_op calls it. Raises RuntimeError where the build has no
    OpenCL or no device is found; a kernel that does not build raises
    RuntimeError with the build log when the callable is first called."""
    _one_of("fault", fault, _FAULTS)
    _one_of("split", split, _SPLITS)
    _one_of("op", op, ("forward", "backward"))
    # As `leaky device run` takes them.
    cores = _whole("cores", cores)
    tile_elems = _whole("tile_elems", tile_elems, (1, 2 ** 24))
    buffers = _whole("buffers", buffers, (1, 2))
    device = -1 if device is None else _whole("device", device, (0, 2 ** 20))  # -1: any
    # The native call takes "" for none: an empty source is refused here
    # rather than silently running the library's kernel.
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise ValueError("source must be the kernel's OpenCL C text, not %r"
                         % (source if not isinstance(source, str) else "an empty string",))
    if build_options is not None and not isinstance(build_options, str):
        raise ValueError("build_options must be a string such as '-cl-denorms-are-zero', not %r"
                         % (build_options,))
    if not hasattr(_native, "device_leaky_relu"):
        raise RuntimeError("this build of leaky has no OpenCL backend")
    code = _FAULTS.index(fault)
    opened = dict(device=device, fault=code, source=source or "", build_options=build_options or "")
    kernel = dict(cores=cores, split=split, tile_elems=tile_elems, buffers=buffers, **opened)

    if op == "backward":
        def device_leaky_relu_backward(dy, x, slope):
            return _native.device_leaky_relu_backward(dy, x, slope, **kernel)
        fn = device_leaky_relu_backward
    else:
        def device_leaky_relu(x, slope):
            return _native.device_leaky_relu(x, slope, **kernel)
        fn = device_leaky_relu
    # check_op plans with the device's alignment and local memory.
    fn.plan_facts = lambda dtype: _native.device_plan_facts(dtype, **opened)
    return fn


def _opencl_family(op):
    """opencl_<op> for an op of leaky/family.h besides LeakyReLU."""
    def make(direction="forward", cores=8, split="even", tile_elems=4096, buffers=2, device=None):
        _one_of("direction", direction, ["forward", "backward"])
        _one_of("split", split, _SPLITS)
        cores = _whole("cores", cores)
        tile_elems = _whole("tile_elems", tile_elems, (1, 2 ** 24))
        buffers = _whole("buffers", buffers, (1, 2))
        device = -1 if device is None else _whole("device", device, (0, 2 ** 20))
        if not hasattr(_native, "device_family"):
            raise RuntimeError("this build of leaky has no OpenCL backend")
        kernel = dict(cores=cores, split=split, tile_elems=tile_elems, buffers=buffers,
                      device=device)

        def fn(*arrays, **scalars):
            out = _native.device_family(op, direction, list(arrays), scalars, **kernel)
            return out[0] if len(out) == 1 else tuple(out)
        fn.__name__ = "device_" + op + ("_backward" if direction == "backward" else "")
        fn.plan_facts = lambda dtype: _native.device_plan_facts(dtype, device=device)
        return fn
    make.__name__ = make.__qualname__ = "opencl_" + op
    make.__doc__ = (
        "The OpenCL device's %s (leaky/opencl.h, leaky_cl_*) as a callable for check_op with "
        "op=%r and the same direction: the arguments and results of leaky.testing_family's "
        "table, on the library's planner with these cores, split (granule, even or balanced), "
        "tile and buffers. The device equals the CPU library bit for bit (ELU within its "
        "bound). Raises RuntimeError where the build has no OpenCL or no device is found."
        % (op, op))
    return make


for _op in OPS:
    if _op != "leaky_relu":
        globals()["opencl_" + _op] = _opencl_family(_op)
del _op


class _DefaultsShown(argparse.HelpFormatter):
    """--help with each default: added where the help does not already say
    it, and not for flags or for defaults that mean "as the dtype says"."""

    def _get_help_string(self, action):
        text = action.help or ""
        if "default" in text or action.default in (None, False) or action.nargs == 0:
            return text
        return text + " (default: %(default)s)"


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise _UsageError(message)


def _typed(convert, check):
    """An argparse type: `convert` the text, then `check` the value (a
    problem in words, or None)."""
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            value = text
        problem = check(value)
        if problem:
            raise argparse.ArgumentTypeError(problem)
        return value
    return parse


def _whole_arg(name):
    return _typed(int, lambda value: _whole_problem(name, value))


def _finite_problem(value):
    if isinstance(value, float) and math.isfinite(value):
        return None
    return "must be a finite number, not %r" % (value,)


def _params(pairs):
    """--param NAME=VALUE pairs: numbers, true/false, none, else the text."""
    params = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise ValueError("--param takes NAME=VALUE, not %r" % pair)
        lowered = text.strip().lower()
        if lowered in ("true", "false"):
            value = lowered == "true"
        elif lowered == "none":
            value = None
        else:
            try:
                value = int(text)
            except ValueError:
                try:
                    value = float(text)
                except ValueError:
                    value = text
        params[name.strip()] = value
    return params


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = _Parser(
        prog="python3 -m leaky.testing",
        formatter_class=_DefaultsShown,
        description="Check a Python LeakyReLU kernel against exact golden data "
                    "(exit 0 pass, 1 mismatch, 2 unusable). The plan defaults model a "
                    "device port - the article's even split over 8 cores of the npu "
                    "preset, 4096-element tiles, double buffering - where `leaky golden` "
                    "and `leaky check --plan` default to the library's own plan (granule "
                    "split, this CPU): give --split granule --preset cpu for that.")
    parser.add_argument("function", help="MODULE:FUNCTION, e.g. my_kernels:leaky_relu")
    parser.add_argument("--dtype", default="f16", choices=sorted(_DTYPES) + list(_q8.TYPES),
                        help="the data type (8-bit: the quantization flags below)")
    parser.add_argument("--elems", type=_whole_arg("elems"), default=10007,
                        help="elements (10007: a prime, so every split leaves a remainder)")
    parser.add_argument("--slope", type=_typed(float, _finite_problem), default=0.2,
                        help="negative_slope")
    parser.add_argument("--dist", default=None,
                        help="input distribution of float dtypes: hard (boundary values, "
                             "subnormals, NaN, infinities), normal or normal:MEAN,STD "
                             "(default: hard)")
    parser.add_argument("--op", default="forward",
                        choices=["forward", "backward"] + [op for op in OPS],
                        help="LeakyReLU's forward fn(x, slope) -> y or backward fn(dy, x, "
                             "slope) -> dx; or an op of leaky/family.h with --direction "
                             "(fn's arguments: python3 -m pydoc leaky.testing_family)")
    parser.add_argument("--direction", default="forward", choices=["forward", "backward"],
                        help="the direction of a family --op")
    parser.add_argument("--param", action="append", default=None, metavar="NAME=VALUE",
                        help="a scalar of a family --op, e.g. alpha=1.5, act=relu, "
                             "training=false, clamp=none (repeat for more)")
    parser.add_argument("--channels", type=_whole_arg("channels"), default=4,
                        help="channels of PReLU and bias_act (x is [2, channels, rest])")
    parser.add_argument("--split", default="even", choices=list(_SPLITS) + ["none"],
                        help="how the kernel splits the tensor over cores (none: no plan, "
                             "findings by index only)")
    parser.add_argument("--cores", type=_whole_arg("cores"), default=8, help="cores the kernel uses")
    parser.add_argument("--tile-elems", type=_whole_arg("tile_elems"), default=4096,
                        help="elements per tile")
    parser.add_argument("--buffers", type=_whole_arg("buffers"), default=2,
                        help="1 = single, 2 = double buffering")
    parser.add_argument("--preset", default="npu", choices=["npu", "cpu"],
                        help="the target's alignment and buffer (npu: an accelerator-style "
                             "example; cpu: this machine as the library plans it)")
    parser.add_argument("--seed", type=_whole_arg("seed"), default=1, help="the golden data's seed")
    parser.add_argument("--max-ulp", type=_whole_arg("max_ulp"), default=None,
                        help="tolerance of float dtypes in ulp (default: 0, the golden is exact)")
    parser.add_argument("--strict-zero-sign", action="store_true",
                        help="count -0 against +0 as a mismatch")
    parser.add_argument("--allow-rounding", action="store_true",
                        help="accept a systematic rounding mode within --max-ulp")
    parser.add_argument("--json", action="store_true", help="print the diagnosis as JSON")
    _q8.add_arguments(parser, _typed, _finite_problem, _whole_problem)

    def unusable(message):  # one line, as `leaky check`; with --json, JSON on stdout too
        message = " ".join(str(message).split())
        print("leaky.testing: %s" % message, file=sys.stderr)
        if "--json" in argv:
            print(json.dumps({"error": message}, indent=2))
        return 2

    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help
        return 0 if e.code in (0, None) else 2
    except _UsageError as e:
        return unusable(e)
    try:
        module_name, _, function_name = args.function.partition(":")
        if not function_name:
            raise ValueError("expected MODULE:FUNCTION, got %r" % args.function)
        plan = dict(split=None if args.split == "none" else args.split, cores=args.cores,
                    tile_elems=args.tile_elems, buffers=args.buffers, preset=args.preset)
        quantization = _q8.arguments_given(args)
        fn = getattr(importlib.import_module(module_name), function_name)
        if args.dtype in _q8.TYPES:
            d = _q8.check_from_arguments(fn, args, quantization, plan)
        elif quantization:
            name = next(iter(quantization))
            raise ValueError("--%s applies to %s data, not %s" % (
                name.replace("_", "-"), "fp8" if name == "saturate" else "qu8/qs8", args.dtype))
        elif args.op not in ("forward", "backward"):
            d = check_op(fn, args.dtype, args.elems, dist=args.dist, op=args.op,
                         direction=args.direction, params=_params(args.param or []),
                         channels=args.channels, seed=args.seed, max_ulp=args.max_ulp or 0,
                         strict_zero_sign=args.strict_zero_sign, **plan)
        else:
            d = check_op(fn, args.dtype, args.elems, args.slope, args.dist or "hard", args.op,
                         seed=args.seed, max_ulp=args.max_ulp or 0,
                         strict_zero_sign=args.strict_zero_sign,
                         allow_rounding=args.allow_rounding, **plan)
    except Exception as e:
        return unusable(e)
    if args.json:
        print(json.dumps(dataclasses.asdict(d), indent=2))
    else:
        print(d)
    return 0 if d.passed else 1


# 8-bit data: its own entry points (their keywords are the quantization's).
from . import testing_eight_bit as _q8  # noqa: E402
from .testing_eight_bit import check_q8_op, golden_q8, golden_q8_defaults  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(main())

"""Check any LeakyReLU kernel against the library's exact golden data, and
diagnose it as `leaky check` does - in your split and tiles. NumPy only.

    import leaky.testing
    d = leaky.testing.check_op(my_kernel, dtype="f16", elems=10007, slope=0.2,
                               dist="hard", split="even", cores=8, tile_elems=4096)
    print(d)               # PASS/FAIL, counts, one line per finding
    d.passed, d.findings   # Finding(kind, message, first, last, core, tile, details)

`fn` is any callable: forward fn(x, slope) -> y, backward fn(dy, x, slope)
-> dx, given NumPy arrays (float16/float32/float64; bfloat16 as a uint16
view of its bits) and returning something numpy.asarray accepts (a NumPy
array, a CPU tensor; a GPU tensor is brought back with .cpu()). From the
shell, with `leaky check`'s exit codes (0 pass, 1 mismatch, 2 unusable):

    /usr/bin/python3 -m leaky.testing MODULE:FUNCTION --dtype f16 --split even ...
"""
import argparse
import dataclasses
import importlib
import json
import sys

import numpy as _np

from . import _library

_native = _library.load_native()

_DTYPES = {"f16": _np.float16, "f32": _np.float32, "f64": _np.float64, "bf16": _np.uint16}
_SPLITS = ("granule", "even", "balanced")


@dataclasses.dataclass
class Finding:
    kind: str          # e.g. select_missing, core_edge, zero_block (leaky check's kinds)
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
    blocks = d.get("blocks") or d.get("cores") or d.get("tiles")
    first_of = blocks[0] if isinstance(blocks, list) and blocks and isinstance(blocks[0], dict) else d
    first = first_of.get("first", d.get("index"))
    return Finding(raw["kind"], raw["message"], first, first_of.get("last"),
                   first_of.get("core", d.get("core")), first_of.get("tile", d.get("tile")), d)


def _plan_json(split, cores, tile_elems, buffers, preset, buffer_bytes, align):
    if split is None:
        return ""
    if split not in _SPLITS:
        raise ValueError("split must be one of %s, not %r" % (", ".join(_SPLITS), split))
    for name, value, low in (("cores", cores, 1), ("tile_elems", tile_elems, 1),
                             ("buffers", buffers, 1), ("buffer_bytes", buffer_bytes, 1),
                             ("align", align, 1)):
        if value is not None and (not isinstance(value, int) or value < low):
            raise ValueError("%s must be an integer >= %d, not %r" % (name, low, value))
    if cores is not None and cores > 65536:
        raise ValueError("cores must be <= 65536, not %r" % (cores,))
    plan = {"preset": preset, "split": split}
    for key, value in (("cores", cores), ("tile_elems", tile_elems), ("buffers", buffers),
                       ("buffer_bytes", buffer_bytes), ("align_bytes", align)):
        if value is not None:
            plan[key] = value
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
    if dtype not in _DTYPES:
        raise ValueError("dtype must be one of %s, not %r" % (", ".join(_DTYPES), dtype))
    x, dy, g = _native.toolkit_golden(dtype, elems, float(slope), dist, seed, op)
    to = lambda b: _np.frombuffer(b, dtype=_DTYPES[dtype]).copy()  # noqa: E731
    return to(x), (to(dy) if op == "backward" else None), to(g)


def check_op(fn, dtype="f16", elems=10007, slope=0.2, dist="hard", op="forward",
             split="even", cores=8, tile_elems=4096, buffers=2, preset="npu",
             buffer_bytes=None, align=None, seed=1, max_ulp=0, strict_zero_sign=False):
    """Makes golden data through the library, calls `fn`, and returns the
    Diagnosis. split=None checks without mapping to cores and tiles."""
    if not callable(fn):
        raise TypeError("fn must be callable, not %r" % (fn,))
    plan = _plan_json(split, cores, tile_elems, buffers, preset, buffer_bytes, align)
    x, dy, g = golden(dtype, elems, slope, dist, seed, op)
    name = getattr(fn, "__name__", "fn")
    try:
        result = fn(x.copy(), slope) if op == "forward" else fn(dy.copy(), x.copy(), slope)
    except Exception as e:
        raise RuntimeError("fn (%s) raised %s: %s" % (name, type(e).__name__, e)) from e
    out = _as_array(result, x, "fn (%s)" % name)
    raw = json.loads(_native.toolkit_check(
        dtype, float(slope), op, x.tobytes(), b"" if dy is None else dy.tobytes(), g.tobytes(),
        out.tobytes(), max_ulp, strict_zero_sign, plan))
    return Diagnosis(raw["pass"], raw["elements"], raw["mismatches"], raw["max_ulp"],
                     raw["tolerance_ulp"], [_finding(f) for f in raw["findings"]])


_FAULTS = ("none", "compute-before-wait", "remainder-dropped", "slope-layout", "half-flush",
           "single-buffer", "select-missing", "core-offset")


def opencl_leaky_relu(cores=8, split="even", tile_elems=4096, buffers=2, device=-1, fault="none"):
    """The OpenCL device kernel (leaky/opencl.h) as a callable for check_op,
    optionally with one of the article's faults planted (`leaky device run
    --fault`'s names). Raises RuntimeError where the build has no OpenCL or
    no device is found."""
    if fault not in _FAULTS:
        raise ValueError("fault must be one of %s, not %r" % (", ".join(_FAULTS), fault))
    if not hasattr(_native, "device_leaky_relu"):
        raise RuntimeError("this build of leaky has no OpenCL backend")
    code = _FAULTS.index(fault)

    def device_leaky_relu(x, slope):
        return _native.device_leaky_relu(x, slope, cores, split, tile_elems, buffers, device, code)
    return device_leaky_relu


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m leaky.testing",
        description="Check a Python LeakyReLU kernel against exact golden data "
                    "(exit 0 pass, 1 mismatch, 2 unusable)")
    parser.add_argument("function", help="MODULE:FUNCTION, e.g. my_kernels:leaky_relu")
    parser.add_argument("--dtype", default="f16", choices=sorted(_DTYPES))
    parser.add_argument("--elems", type=int, default=10007)
    parser.add_argument("--slope", type=float, default=0.2)
    parser.add_argument("--dist", default="hard")
    parser.add_argument("--op", default="forward", choices=["forward", "backward"])
    parser.add_argument("--split", default="even", choices=list(_SPLITS) + ["none"])
    parser.add_argument("--cores", type=int, default=8)
    parser.add_argument("--tile-elems", type=int, default=4096)
    parser.add_argument("--buffers", type=int, default=2)
    parser.add_argument("--preset", default="npu", choices=["npu", "cpu"])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-ulp", type=int, default=0)
    parser.add_argument("--strict-zero-sign", action="store_true")
    parser.add_argument("--json", action="store_true")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        module_name, _, function_name = args.function.partition(":")
        if not function_name:
            raise ValueError("expected MODULE:FUNCTION, got %r" % args.function)
        fn = getattr(importlib.import_module(module_name), function_name)
        d = check_op(fn, args.dtype, args.elems, args.slope, args.dist, args.op,
                     None if args.split == "none" else args.split, args.cores, args.tile_elems,
                     args.buffers, args.preset, seed=args.seed, max_ulp=args.max_ulp,
                     strict_zero_sign=args.strict_zero_sign)
    except Exception as e:  # one line, as `leaky check`
        print("leaky.testing: %s" % e, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(dataclasses.asdict(d), indent=2))
    else:
        print(d)
    return 0 if d.passed else 1


if __name__ == "__main__":
    sys.exit(main())

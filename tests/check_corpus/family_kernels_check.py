"""Checks the family corpus itself (family_cases.py + family_cases.json), not
any diagnosis: every case's kernel runs on inputs drawn here and is compared
with leaky.numpy - every correct kernel (expect ["pass"]) must match it, and
every planted fault must change the output. Bit for bit, except ELU, which
is compared within leaky's own ulp bound (leaky.numpy._native.elu_max_ulp:
the library's bound against a correctly rounded reference; the correct ELU
kernels are correctly rounded up to their f32 products).

Also checked: each case's fields and kinds, the function's plan against the
case's (@plan), a docstring on every kernel and a `# FAULT` line exactly on
the faulty ones.

    PYTHONPATH=python LEAKY_LIB_DIR=<dir of _native> /usr/bin/python3 \\
        tests/check_corpus/family_kernels_check.py [--case NAME]

Prints a line per case and exits non-zero on any violation.
"""
import argparse
import collections
import inspect
import json
import os
import sys
import zlib

import numpy as np

import leaky.numpy as ln

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import family_cases  # noqa: E402

DTYPES = {"f32": np.float32, "f16": np.float16, "f64": np.float64}
CHANNEL_OPS = {"prelu", "bias_act", "bias_act_dropout"}
PLACE_KINDS = {"pass", "not_written", "misplaced", "stale_tile", "input_copied", "mismatch",
               "ambiguous"}
OP_KINDS = {
    "prelu": {"weight_axis", "weight_broadcast", "weight_grad_not_reduced",
              "weight_grad_wrong_axis", "weight_grad_half"},
    "elu": {"expm1_missing", "alpha_scale_swapped", "input_scale_missing"},
    "rrelu": {"stream_restart", "eval_slope_in_training"},
    "bias_act": {"bias_axis", "gain_before_clamp", "clamp_missing"},
    "bias_act_dropout": {"bias_axis", "gain_before_clamp", "clamp_missing",
                         "dropout_scale_missing", "mask_bit_order", "mask_offset_per_core"},
}
# the scalars each op's kernel receives as keywords (defaults: leaky.numpy's)
SCALARS = {
    ("elu", "forward"): ("elu", ["alpha", "scale", "input_scale"]),
    ("elu", "backward"): ("elu_backward", ["alpha", "scale", "input_scale"]),
    ("prelu", "forward"): ("prelu", []),
    ("prelu", "backward"): ("prelu_backward", []),
    ("rrelu", "forward"): ("rrelu", ["lower", "upper", "training", "seed", "offset"]),
    ("rrelu", "backward"): ("rrelu_backward", ["lower", "upper", "training", "seed", "offset"]),
    ("bias_act", "forward"): ("bias_act", ["act", "alpha", "gain", "clamp"]),
    ("bias_act", "backward"): ("bias_act_backward", ["act", "alpha", "gain", "clamp"]),
    ("bias_act_dropout", "forward"): (
        "bias_act_dropout", ["act", "alpha", "gain", "clamp", "dropout_p", "seed", "offset"]),
    ("bias_act_dropout", "backward"): (
        "bias_act_dropout_backward", ["act", "alpha", "gain", "clamp", "dropout_p"]),
}
FIELDS = ["name", "kind", "function", "op", "direction", "dtype", "elems", "params", "plan", "bug",
          "expect", "max_findings"]
MASK_SEED, MASK_OFFSET = 20240601, 0  # the forward mask a dropout backward case reads


def scalars_of(case):
    fn_name, names = SCALARS[(case["op"], case["direction"])]
    signature = inspect.signature(getattr(ln, fn_name))
    unknown = set(case["params"]) - set(names)
    if unknown:
        raise ValueError(f"params {sorted(unknown)} are not scalars of {fn_name}")
    return {n: case["params"].get(n, signature.parameters[n].default) for n in names}


def draw_inputs(case):
    """x (normal, a few exact zeros of both signs; ELU also values near 0),
    dy, and the per-channel operand for channel ops."""
    rng = np.random.default_rng(zlib.crc32(case["name"].encode()))
    dtype = DTYPES[case["dtype"]]
    n = case["elems"]
    x = rng.standard_normal(n)
    if case["op"] == "elu":
        near = rng.random(n)
        x = np.where(near < 0.25, x * 1e-3, x)
        x = np.where(near > 0.93, x * 1e-6, x)
    zeros = rng.random(n) < 0.03
    x[zeros] = np.where(rng.random(zeros.sum()) < 0.5, 0.0, -0.0)
    dy = rng.standard_normal(n)
    if case["op"] in CHANNEL_OPS:
        channels = case["channels"]
        shape = (2, channels, n // (2 * channels))
        per_channel = (rng.standard_normal(channels) * (0.3 if case["op"] == "prelu" else 1.0))
        per_channel = per_channel.astype(dtype)
    else:
        shape, per_channel = (n,), None
    return x.astype(dtype).reshape(shape), dy.astype(dtype).reshape(shape), per_channel


def run(case, fn):
    """(kernel outputs, leaky.numpy outputs), both as tuples."""
    op, direction = case["op"], case["direction"]
    kw = scalars_of(case)
    x, dy, pc = draw_inputs(case)
    if op == "elu":
        if direction == "forward":
            return fn(x, **kw), ln.elu(x, **kw)
        return fn(dy, x, **kw), ln.elu_backward(dy, x, **kw)
    if op == "prelu":
        if direction == "forward":
            return fn(x, pc), ln.prelu(x, pc)
        return fn(dy, x, pc), ln.prelu_backward(dy, x, pc)
    if op == "rrelu":
        if direction == "forward":
            got = fn(x, **kw)
            want = ln.rrelu_with_noise(x, **kw) if isinstance(got, tuple) else ln.rrelu(x, **kw)
            return got, want
        return fn(dy, x, **kw), ln.rrelu_backward(dy, x, **kw)
    if op == "bias_act":
        if direction == "forward":
            return fn(x, pc, **kw), ln.bias_act(x, pc, **kw)
        return fn(dy, x, pc, **kw), ln.bias_act_backward(dy, x, pc, **kw)
    if op == "bias_act_dropout":
        if direction == "forward":
            return fn(x, pc, **kw), ln.bias_act_dropout(x, pc, **kw)
        _, mask = ln.bias_act_dropout(x, pc, seed=MASK_SEED, offset=MASK_OFFSET, **kw)
        return fn(dy, x, pc, mask, **kw), ln.bias_act_dropout_backward(dy, x, mask, pc, **kw)
    raise ValueError(op)


def ordered(a):
    """IEEE bit patterns as integers ordered like the values."""
    itype = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    i = a.view(itype).astype(np.int64)
    return np.where(i < 0, np.int64(np.iinfo(itype).min) - i, i)


def compare(case, got, want):
    """Per output: (name, elements off, total, worst ulp or None)."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    names = {("prelu", "backward"): ["dx", "dweight"], ("bias_act", "backward"): ["dx", "db"],
             ("bias_act_dropout", "forward"): ["y", "mask"],
             ("bias_act_dropout", "backward"): ["dx", "db"],
             ("rrelu", "forward"): ["y", "noise"]}.get((case["op"], case["direction"]),
                                                       ["dx" if case["direction"] == "backward"
                                                        else "y"])
    if len(got) != len(want):
        return [("outputs", len(want), len(want), f"kernel gave {len(got)} outputs")]
    report = []
    for name, g, w in zip(names, got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.dtype != w.dtype or g.shape != w.shape:
            report.append((name, w.size, w.size, f"{g.dtype}{g.shape} for {w.dtype}{w.shape}"))
            continue
        if case["op"] == "elu":
            bound = ln._native.elu_max_ulp(case["dtype"], case["direction"] == "backward",
                                           scalars_of(case)["input_scale"] < 0)
            ulps = np.abs(ordered(g) - ordered(w))
            ulps[np.isnan(g) & np.isnan(w)] = 0
            report.append((name, int((ulps > bound).sum()), w.size,
                           f"worst {int(ulps.max())} ulp, bound {bound}"))
        else:
            off = g.view(np.uint8).reshape(w.size, -1) != w.view(np.uint8).reshape(w.size, -1)
            report.append((name, int(off.any(axis=1).sum()), w.size, None))
    return report


def validate(case, fn):
    """Problems with the case or its function, as strings."""
    problems = []
    missing = [f for f in FIELDS if f not in case]
    if missing:
        problems.append(f"missing fields {missing}")
        return problems
    op = case["op"]
    if case["kind"] != "numpy_family":
        problems.append(f"kind {case['kind']!r}")
    if case["dtype"] not in DTYPES:
        problems.append(f"dtype {case['dtype']!r}")
    if op in CHANNEL_OPS and case.get("channels", 0) <= 0:
        problems.append("a channel op without channels")
    if op in CHANNEL_OPS and case["elems"] % (2 * case["channels"]):
        problems.append("elems not a multiple of 2 * channels")
    bad = [k for k in case["expect"] if k not in PLACE_KINDS | OP_KINDS[op]]
    if bad or not case["expect"]:
        problems.append(f"expect {case['expect']} not kinds of {op}")
    correct = case["expect"] == ["pass"]
    if "pass" in case["expect"] and not correct:
        problems.append("pass listed with other kinds")
    if case["max_findings"] != (0 if correct else 1):
        problems.append(f"max_findings {case['max_findings']}")
    if getattr(fn, "plan", None) != case["plan"]:
        problems.append(f"plan {case['plan']} but the function walks {getattr(fn, 'plan', None)}")
    if not (fn.__doc__ or "").strip():
        problems.append("no docstring")
    faults = inspect.getsource(fn).count("# FAULT")
    if correct and faults:
        problems.append("a correct kernel with a # FAULT line")
    if not correct and faults != 1:
        problems.append(f"{faults} # FAULT lines (one expected)")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="run only these cases")
    args = parser.parse_args()
    with open(os.path.join(HERE, "family_cases.json")) as f:
        cases = json.load(f)
    names = [c["name"] for c in cases]
    violations = []
    if len(set(names)) != len(names):
        violations.append("duplicate case names")
    if args.case:
        cases = [c for c in cases if c["name"] in args.case]
    kinds = collections.Counter()
    for case in cases:
        fn = getattr(family_cases, case["function"], None)
        if fn is None:
            print(f"FAIL {case['name']}: no function {case['function']}")
            violations.append(case["name"])
            continue
        problems = validate(case, fn)
        kinds.update(case["expect"][:1])
        try:
            got, want = run(case, fn)
            report = compare(case, got, want)
        except Exception as error:  # a kernel that cannot run is a corpus bug
            report = None
            problems.append(f"{type(error).__name__}: {error}")
        correct = case["expect"] == ["pass"]
        if report is not None:
            differs = any(off for _, off, _, _ in report)
            if correct and differs:
                problems.append("a correct kernel differs from leaky.numpy")
            if not correct and not differs:
                problems.append("the planted fault is invisible (matches leaky.numpy)")
            detail = "; ".join(f"{name} {off}/{total}" + (f" ({note})" if note else "")
                               for name, off, total, note in report)
        else:
            detail = "did not run"
        verdict = "FAIL" if problems else "ok  "
        print(f"{verdict} {case['name']:42s} {case['op']}/{case['direction']}/{case['dtype']}"
              f" expect {','.join(case['expect'])}: {detail}"
              + (f"  <- {'; '.join(problems)}" if problems else ""))
        if problems:
            violations.append(case["name"])
    if not args.case:
        named = {k for c in cases for k in c["expect"]}
        uncovered = sorted(k for k in set().union(*OP_KINDS.values()) | PLACE_KINDS
                           if k not in named and k != "ambiguous")
        if uncovered:
            violations.append(f"kinds without a case: {uncovered}")
            print(f"FAIL kinds without a case: {uncovered}")
    print(f"{len(cases)} cases, first expected kinds: "
          + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    if violations:
        print(f"{len(violations)} violation(s): {', '.join(violations)}")
        return 1
    print("corpus ok: every correct kernel matches leaky.numpy, every planted fault shows")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Checks the sealed set itself (not a diagnosis): every case's kernel is run
on inputs drawn here and compared with leaky.numpy, bit for bit (ELU within
the ulp bound the library exposes, leaky.numpy._native.elu_max_ulp).

- `pass` cases must match, on the case's own size and shape, on "hard" data
  (NaN, infinities, subnormals, signed zeros) and on the degenerate channel
  layouts outer = 1 and inner = 1; the f16 ELU table is also run on all
  65536 f16 inputs.
- faulty cases must differ, and differ where their fault says (a mask fault
  leaves y exact, a dweight/db fault leaves dx exact, ...).
- the shared helpers (geometry-free reference assembled from the same
  per-tile functions the kernels use) must equal the library exactly for
  every op and dtype, so a faulty kernel's difference is its fault.
- every case's plan must equal its kernel's @plan, correct kernels carry no
  `# FAULT` and faulty ones do.

Exit status 1 on any violation.

    PYTHONPATH=/work/main/python LEAKY_LIB_DIR=/tmp/helperlib /usr/bin/python3 \\
        /work/sealed-family/check_kernels.py [--case NAME] [--quiet]
"""
import argparse
import inspect
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import family_cases as S  # noqa: E402
import leaky.numpy as ln  # noqa: E402

DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
CHANNEL_OPS = ("prelu", "bias_act", "bias_act_dropout")

# Which outputs a fault must change ("!") and which it must leave exact
# ("="); unlisted faulty cases: every output may differ, one must.
LOCAL = {
    "prelu_bwd_partials_stored_f32": "=!",
    "prelu_bwd_workspace_reshape_f64": "=!",
    "prelu_bwd_half_accumulator_f16": "=!",
    "rrelu_tile_stream_restart_f32": "!!",
    "bias_act_bwd_db_before_act_f32": "=!",
    "dropout_packbits_msb_f16": "=!",
    "dropout_core_mask_bytes_f32": "=!",
    "dropout_halves_swapped_f32": "!!",
    "dropout_bwd_unscaled_f32": "!!",
}


# ---------------------------------------------------------------- data

def channel_shapes(elems, channels):
    """(primary, extras): the primary layout has outer > 1 and inner > 1."""
    rest = elems // channels
    assert rest * channels == elems, f"elems {elems} not a multiple of channels {channels}"
    outer = next((d for d in (2, 3, 5, 7, 4, 6, 10, 11, 13) if rest % d == 0 and rest // d > 1), 1)
    return (outer, channels, rest // outer), [(1, channels, rest), (rest, channels, 1)]


def draw(rng, shape, dtype, hard=False):
    """Mostly normal values over several magnitudes, with exact zeros of
    both signs, values near 0 and subnormals; hard data adds NaN and
    infinities."""
    n = int(np.prod(shape))
    v = rng.standard_normal(n) * np.exp(rng.uniform(-3.0, 1.5, n))
    kind = rng.integers(0, 24, n)
    v[kind == 0] = 0.0
    v[kind == 1] = -0.0
    near = kind == 2
    v[near] = rng.uniform(-1e-4, 1e-4, near.sum())
    sub = kind == 3
    v[sub] = rng.uniform(-1.0, 1.0, sub.sum()) * float(np.finfo(dtype).tiny)
    if hard:
        v[kind == 4] = np.nan
        inf = kind == 5
        v[inf] = np.where(rng.random(inf.sum()) < 0.5, -np.inf, np.inf)
        big = kind == 6
        v[big] = rng.standard_normal(big.sum()) * float(np.finfo(dtype).max) / 4
    return v.astype(dtype).reshape(shape)


def inputs_for(case, shape, rng, hard):
    dt = DTYPES[case["dtype"]]
    x = draw(rng, shape, dt, hard)
    dy = draw(rng, shape, dt, hard=False)
    channels = shape[1] if len(shape) == 3 else 1
    weight = rng.uniform(-1.0, 2.0, channels).astype(dt)
    bias = (rng.standard_normal(channels) * 0.5).astype(dt)
    return x, dy, weight, bias


# ---------------------------------------------------------------- library and kernel calls

def split_params(case):
    p = dict(case["params"])
    return p


def golden(case, x, dy, weight, bias):
    op, direction, p = case["op"], case["direction"], split_params(case)
    if op == "prelu":
        return (ln.prelu(x, weight),) if direction == "forward" else ln.prelu_backward(dy, x, weight)
    if op == "elu":
        return (ln.elu(x, **p),) if direction == "forward" else (ln.elu_backward(dy, x, **p),)
    if op == "rrelu":
        if direction == "backward":
            return (ln.rrelu_backward(dy, x, **p),)
        return ln.rrelu_with_noise(x, **p) if p.get("training") else (ln.rrelu(x, **p),)
    if op == "bias_act":
        if direction == "forward":
            return (ln.bias_act(x, bias, **p),)
        return ln.bias_act_backward(dy, x, bias, **p)
    if op == "bias_act_dropout":
        if direction == "forward":
            return ln.bias_act_dropout(x, bias, **p)
        _, mask = ln.bias_act_dropout(x, bias, **p)
        q = {k: v for k, v in p.items() if k not in ("seed", "offset")}
        return ln.bias_act_dropout_backward(dy, x, mask, bias, **q)
    raise ValueError(op)


def run_kernel(case, fn, x, dy, weight, bias):
    """Calls the kernel as the brief's convention does: inputs positionally
    in family.h's order, scalars as keywords. The dropout backward is also
    called in leaky.numpy's (mask, b) order and must give the same bits."""
    op, direction, p = case["op"], case["direction"], split_params(case)
    if op == "prelu":
        out = fn(x, weight) if direction == "forward" else fn(dy, x, weight)
    elif op in ("elu", "rrelu"):
        out = fn(x, **p) if direction == "forward" else fn(dy, x, **p)
    elif op == "bias_act":
        out = fn(x, bias, **p) if direction == "forward" else fn(dy, x, bias, **p)
    else:
        if direction == "forward":
            out = fn(x, bias, **p)
        else:
            _, mask = ln.bias_act_dropout(x, bias, **p)
            q = {k: v for k, v in p.items() if k not in ("seed", "offset")}
            out = fn(dy, x, bias, mask, **q)
            other = fn(dy, x, mask, bias, **q)
            assert all(same_bits(a, b) == 0 for a, b in zip(out, other)), \
                "the (mask, b) order gives other bits"
    return out if isinstance(out, tuple) else (out,)


# ---------------------------------------------------------------- comparison

def monotone(a):
    """Float bits as integers ordered like the values (-0 just below +0)."""
    bits = a.dtype.itemsize * 8
    signed = a.view({16: np.int16, 32: np.int32, 64: np.int64}[bits]).astype(np.int64)
    magnitude = signed & np.int64((1 << (bits - 1)) - 1)
    return np.where(signed < 0, -magnitude - 1, magnitude)


def same_bits(a, b):
    """Elements whose bits differ (NaN matches NaN); -1 on shape/dtype mismatch."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return -1
    if a.dtype.kind != "f":
        return int((a != b).sum())
    both_nan = np.isnan(a) & np.isnan(b)
    return int((~both_nan & (monotone(a) != monotone(b))).sum())


def beyond_ulps(a, b, bound):
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return -1
    both_nan = np.isnan(a) & np.isnan(b)
    one_nan = np.isnan(a) ^ np.isnan(b)
    far = np.abs(monotone(a) - monotone(b)) > bound
    return int((~both_nan & (one_nan | far)).sum())


def differences(case, out, gold):
    """Per output: elements beyond the tolerance (-1: wrong shape/dtype)."""
    if len(out) != len(gold):
        if case["op"] == "rrelu" and len(out) == 1:
            gold = gold[:1]  # the kernel returns y only
        else:
            return [-1]
    if case["op"] == "elu":
        bound = ln._native.elu_max_ulp(case["dtype"], case["direction"] == "backward",
                                       case["params"].get("input_scale", 1.0) < 0)
        return [beyond_ulps(o, g, bound) for o, g in zip(out, gold)]
    return [same_bits(o, g) for o, g in zip(out, gold)]


# ---------------------------------------------------------------- helper self-test

def helper_selftest(rng):
    """The per-tile helpers, assembled without geometry, against the library."""
    failures = []
    for name, dt in DTYPES.items():
        ct = S.compute_type(dt)
        shape = (3, 5, 211)
        outer, channels, inner = shape
        for hard in (False, True):
            x, dy, w, b = inputs_for({"dtype": name}, shape, rng, hard)
            xc, gc = x.astype(ct), dy.astype(ct)
            wc = w.astype(ct)[None, :, None]
            checks = {
                "prelu": (np.where(xc > 0, xc, wc * xc).astype(dt), ln.prelu(x, w)),
                "prelu dx": (np.where(xc > 0, gc, wc * gc).astype(dt), ln.prelu_backward(dy, x, w)[0]),
                "prelu dweight": (S.round_reduction(S.channel_sums(np.where(xc > 0, ct(0), xc * gc),
                                                                   channels, inner), dt),
                                  ln.prelu_backward(dy, x, w)[1]),
            }
            f = x.reshape(-1)
            for lo, hi, seed, off in ((0.125, 1 / 3, 7, 0), (-0.25, 0.75, 2 ** 40 + 3, 2 ** 63 + 5)):
                r = S.rrelu_slopes(S.stream_positions(off, 0, f.size), seed, lo, hi, ct)
                fc = f.astype(ct)
                ry, rn = ln.rrelu_with_noise(f, lo, hi, True, seed, off)
                checks[f"rrelu y {seed}"] = (np.where(fc <= 0, fc * r, fc).astype(dt), ry)
                checks[f"rrelu noise {seed}"] = (np.where(fc <= 0, r, ct(1)).astype(dt), rn)
                g = dy.reshape(-1).astype(ct)
                checks[f"rrelu dx {seed}"] = (np.where(fc <= 0, g * r, g).astype(dt),
                                              ln.rrelu_backward(dy.reshape(-1), f, lo, hi, True, seed, off))
            for act, alpha, gain, clamp in (("lrelu", None, None, None), ("relu", None, 1.7, 0.8),
                                            ("linear", None, None, 2.0), ("lrelu", 0.3, -1.3, 0.5)):
                A, al, ga, cl = S.bias_act_scalars(act, alpha, gain, clamp)
                bs = b.astype(ct)[None, :, None]
                kw = dict(act=act, alpha=alpha, gain=gain, clamp=clamp)
                u = S.bias_act_values(x, bs, A, al, ga, cl, ct)
                checks[f"bias_act {act}"] = (u.astype(dt), ln.bias_act(x, b, **kw))
                d = S.bias_act_grad_values(dy, x, bs, A, al, ga, cl, ct)
                rdx, rdb = ln.bias_act_backward(dy, x, b, **kw)
                checks[f"bias_act dx {act}"] = (d.astype(dt), rdx)
                checks[f"bias_act db {act}"] = (S.round_reduction(S.channel_sums(d.astype(dt), channels, inner), dt), rdb)
                for p, seed, off in ((0.3, 5, 17), (0.7969528945079264, 2 ** 33, 999)):
                    ry, rm = ln.bias_act_dropout(x, b, dropout_p=p, seed=seed, offset=off, **kw)
                    kept = S.dropout_bits(S.stream_positions(off, 0, x.size), seed) >= S.keep_threshold(p)
                    sc = np.where(kept, S.dropout_scale(p, ct), ct(0)).reshape(shape)
                    checks[f"dropout y {act} {p}"] = ((u * sc).astype(dt), ry)
                    checks[f"dropout mask {act} {p}"] = (np.packbits(kept, bitorder="little"), rm)
                    gd = S.bias_act_grad_values(gc * sc, x, bs, A, al, ga, cl, ct)
                    rdx, rdb = ln.bias_act_dropout_backward(dy, x, rm, b, dropout_p=p, **kw)
                    checks[f"dropout dx {act} {p}"] = (gd.astype(dt), rdx)
                    checks[f"dropout db {act} {p}"] = (S.round_reduction(S.channel_sums(gd.astype(dt), channels, inner), dt), rdb)
            for key, (mine, lib) in checks.items():
                bad = same_bits(mine, lib)
                if bad:
                    failures.append(f"{name} {'hard' if hard else 'normal'} {key}: {bad} elements")
            for a, s, i in ((1.0, 1.0, 1.0), (1.6732632423543772, 1.0507009873554805, 1.0),
                            (0.8, 1.25, 0.75), (1.1, 0.9, -0.75)):
                for backward in (False, True):
                    bound = ln._native.elu_max_ulp(name, backward, i < 0)
                    if backward:
                        mine = S.elu_grad_values(dy.reshape(-1), f, a, s, i).astype(dt)
                        lib = ln.elu_backward(dy.reshape(-1), f, a, s, i)
                    else:
                        mine = S.elu_values(f, a, s, i).astype(dt)
                        lib = ln.elu(f, a, s, i)
                    bad = beyond_ulps(mine, lib, bound)
                    if bad:
                        failures.append(f"{name} elu {'bwd' if backward else 'fwd'} {a} {s} {i}: {bad}")
    return failures


# ---------------------------------------------------------------- cases

def check_case(case, rng, quiet):
    problems, notes = [], []
    fn = getattr(S, case["function"], None)
    if fn is None:
        return [f"no function {case['function']}"], notes
    if getattr(fn, "plan", None) != case["plan"]:
        problems.append(f"plan {case['plan']} != the kernel's {getattr(fn, 'plan', None)}")
    source = inspect.getsource(inspect.unwrap(fn))
    correct = case["expect"] == ["pass"]
    marked = "# FAULT" in source
    if correct == marked:
        problems.append("a correct kernel with a FAULT mark" if correct else "a faulty kernel without a FAULT mark")
    if (case["max_findings"] == 0) != correct:
        problems.append("max_findings does not fit expect")
    if case["op"] in CHANNEL_OPS:
        primary, extras = channel_shapes(case["elems"], case["channels"])
    else:
        primary, extras = (case["elems"],), []
    runs = [("normal", primary, False), ("hard", primary, True)]
    runs += [("normal", shape, False) for shape in extras]
    if correct:
        runs += [("hard", shape, True) for shape in extras]
        if case["op"] == "elu" and case["dtype"] == "f16":
            runs.append(("all-f16", None, False))
    for label, shape, hard in runs:
        if label == "all-f16":
            x = np.arange(65536, dtype=np.uint16).view(np.float16)
            dy, weight, bias = np.ones_like(x), None, None
            shape = x.shape
        else:
            x, dy, weight, bias = inputs_for(case, shape, rng, hard)
        with np.errstate(all="ignore"):
            gold = golden(case, x, dy, weight, bias)
            try:
                out = run_kernel(case, fn, x, dy, weight, bias)
            except Exception as error:  # a kernel that raises is a violation either way
                problems.append(f"{label} {shape}: raised {type(error).__name__}: {error}")
                continue
        diff = differences(case, out, gold)
        notes.append(f"{label} {tuple(shape)}: {diff}")
        if correct:
            if any(d != 0 for d in diff):
                problems.append(f"{label} {tuple(shape)}: differs from leaky.numpy {diff}")
        elif label == "normal" and shape == primary:
            if not any(d != 0 for d in diff):
                problems.append(f"{label} {tuple(shape)}: the fault does not show")
            want = LOCAL.get(case["name"])
            if want is not None:
                for k, (w, d) in enumerate(zip(want, diff)):
                    if w == "=" and d != 0:
                        problems.append(f"output {k} should be exact, {d} elements differ")
                    if w == "!" and d == 0:
                        problems.append(f"output {k} should differ and does not")
    return problems, notes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--case", help="one case by name")
    parser.add_argument("--quiet", action="store_true", help="one line per case")
    args = parser.parse_args()
    cases = json.load(open(os.path.join(HERE, "family_cases.json")))
    if args.case:
        cases = [c for c in cases if c["name"] == args.case]
        if not cases:
            sys.exit(f"no case {args.case}")
    np.seterr(all="ignore")  # overflow to inf and NaN are part of the data
    rng = np.random.default_rng(20261206)
    violations = 0
    if not args.case:
        failures = helper_selftest(rng)
        print(f"helpers vs leaky.numpy: {'ok' if not failures else 'FAILED'}")
        for f in failures:
            print("  ", f)
        violations += len(failures)
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        print("duplicate case names")
        violations += 1
    for case in cases:
        problems, notes = check_case(case, rng, args.quiet)
        status = "ok" if not problems else "VIOLATION"
        print(f"{status:9} {case['name']:36} {case['op']}/{case['direction']}/{case['dtype']} "
              f"expect {','.join(case['expect'])}")
        if not args.quiet:
            for n in notes:
                print("            ", n)
        for p in problems:
            print("          !", p)
        violations += len(problems)
    kinds = {}
    for c in cases:
        kinds[c["expect"][0] if len(c["expect"]) == 1 else "/".join(c["expect"])] = \
            kinds.get(c["expect"][0] if len(c["expect"]) == 1 else "/".join(c["expect"]), 0) + 1
    print(f"{len(cases)} cases; " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    print(f"violations: {violations}")
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()

"""Checks sealed family set 3 itself (not a diagnosis): every kernel of
family_cases.py is run on inputs drawn here and compared with leaky.numpy.

  - `pass` kernels must equal leaky.numpy bit for bit (NaN positions must
    agree; ELU within leaky.numpy._native.elu_max_ulp) on every draw;
  - faulty kernels must differ on every draw;
  - every faulty kernel, with its `# FAULT` line replaced by the fix in
    FIXES below, must then equal leaky.numpy: the marked line is the one
    fault, and the rest of the kernel is right;
  - the JSON agrees with the kernels (plan == @plan, # FAULT marks vs
    expect / max_findings, params allowed for the op and direction, channel
    ops' elems a multiple of 2 * channels, every @plan kernel has exactly one
    case, every FIXES entry belongs to a faulty case).

Draws: non-reducing ops (every forward, ReLU's, ELU's and RReLU's backward) get NaN,
+-inf, +-0, +-subnormals and tiny values in x; the reducing backwards
(PReLU, bias_act, bias_act_dropout) get normal values. Channel ops use
x of shape (2, channels, elems // (2 * channels)).

Run:
  PYTHONPATH=/work/main/python LEAKY_LIB_DIR=/tmp/helperlib /usr/bin/python3 \
      /work/sealed-family-3/check_kernels.py [--quiet] [--case NAME] [--draws N]
Exits 1 on any violation.
"""
import argparse
import inspect
import json
import os
import re
import sys
import textwrap
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import family_cases  # noqa: E402
import leaky.numpy as ln  # noqa: E402

DTYPES = {"f32": np.float32, "f64": np.float64, "f16": np.float16}
ALLOWED = {
    ("relu", "forward"): set(),
    ("relu", "backward"): set(),
    ("elu", "forward"): {"alpha", "scale", "input_scale"},
    ("elu", "backward"): {"alpha", "scale", "input_scale"},
    ("prelu", "forward"): set(),
    ("prelu", "backward"): set(),
    ("rrelu", "forward"): {"lower", "upper", "training", "seed", "offset"},
    ("rrelu", "backward"): {"lower", "upper", "training", "seed", "offset"},
    ("bias_act", "forward"): {"act", "alpha", "gain", "clamp"},
    ("bias_act", "backward"): {"act", "alpha", "gain", "clamp"},
    ("bias_act_dropout", "forward"): {"act", "alpha", "gain", "clamp", "dropout_p", "seed", "offset"},
    ("bias_act_dropout", "backward"): {"act", "alpha", "gain", "clamp", "dropout_p"},
}
CHANNEL_OPS = {"prelu", "bias_act", "bias_act_dropout"}
REDUCING_BACKWARD = {"prelu", "bias_act", "bias_act_dropout"}
KINDS = {"pass", "not_written", "misplaced", "stale_tile", "input_copied", "mismatch", "ambiguous",
         "weight_axis", "weight_broadcast", "weight_grad_not_reduced", "weight_grad_wrong_axis",
         "weight_grad_half", "expm1_missing", "alpha_scale_swapped", "input_scale_missing",
         "stream_restart", "eval_slope_in_training", "bias_axis", "gain_before_clamp",
         "clamp_missing", "dropout_scale_missing", "mask_bit_order", "mask_offset_per_core"}

# The correct statement for each faulty kernel's `# FAULT` line (indentation
# is taken from the faulty line).
FIXES = {
    "relu_bwd_forward_select": "g = np.where(sv <= 0, ct(0), gv)",
    "prelu_fwd_tiling_fields": "inner = tiling[\"inner\"]",
    "prelu_fwd_ping_pong_pairs": "for (t0, n), res in zip(pair, results):",
    "prelu_bwd_staged_weights": "dx[t0:t0 + n] = np.where(xv > 0, gv, gv * wl[ch]).astype(dy.dtype)",
    "prelu_bwd_buffer_lists": "for t0, n in sorted(done[0] + done[1]):",
    "prelu_bwd_tile_channel_index": "ch = (np.arange(t0, t0 + n) // inner) % channels",
    "prelu_bwd_ub_accumulator": "acc = np.zeros(channels, np.float64)",
    "elu_fwd_fma_form": "neg = (np.expm1(t.astype(np.float64)) + 0.0).astype(ct) * coef",
    "elu_fwd_packed_scalars": "alpha_, scale_, isc = tiling_scalars",
    "elu_fwd_tail_queues": "y[t0:t0 + n] = res",
    "elu_fwd_exp_guard": "pass",
    "elu_bwd_exp_term": "e = np.exp(xv * ct(input_scale))",
    "rrelu_fwd_narrow_range": "if training:",
    "rrelu_fwd_pad_store": "y[t0:t0 + n] = cur[:n]",
    "rrelu_fwd_noise_select": "noise[t0:t0 + n] = np.where(neg, r, ct(1)).astype(x.dtype)",
    "rrelu_bwd_tile_counter": "words = stream_words(seed, positions(offset, t0, n))",
    "rrelu_bwd_device_midpoint": "s = ct(eval_slope(lower, upper))",
    "bias_act_fwd_plane_size": "plane = x.shape[2]",
    "bias_act_fwd_layout_store": "dst = i",
    "bias_act_fwd_minmax_clamp": "v = clamp_both(v, lim, ct)",
    "bias_act_bwd_pass_band": "g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))",
    "bias_act_bwd_host_defaults": "gain = (1.0 if act == \"linear\" else math.sqrt(2.0)) if gain is None else float(gain)",
    "dropout_fwd_clamp_stage": "u = clamp_both(u * gn, lim, ct)",
    "dropout_fwd_tail_select": "res = u * np.where(keep, scale, ct(0))",
    "dropout_bwd_core_unpack": "core_bits = np.unpackbits(mk[lo_byte:hi_byte], bitorder=\"little\")[begin - lo_byte * 8:]",
    "dropout_bwd_core_window": "k = np.arange(t0 - begin // 8 * 8, t0 - begin // 8 * 8 + n)",
}

_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}
_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def ordered(a):
    """Float bits mapped to integers in the floats' order (+0 and -0 both 0)."""
    i = a.view(_INT[a.dtype.itemsize]).astype(np.int64)
    mag = i & ((1 << (8 * a.dtype.itemsize - 1)) - 1)
    return np.where(i < 0, -mag, mag)


def bad_elements(got, want, ulp=0):
    """Indices where got and want disagree: NaN positions must agree, other
    values bit for bit (ulp > 0: within ulp, with zeros' signs, infinities
    exact)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return None
    if got.dtype.kind != "f":
        return np.flatnonzero(got.reshape(-1) != want.reshape(-1))
    g, w = got.reshape(-1), want.reshape(-1)
    gn, wn = np.isnan(g), np.isnan(w)
    bits_differ = g.view(_UINT[g.dtype.itemsize]) != w.view(_UINT[w.dtype.itemsize])
    if ulp:
        far = np.abs(ordered(g) - ordered(w)) > ulp
        exact_needed = np.isinf(g) | np.isinf(w) | (g == 0) | (w == 0)
        bits_differ = np.where(exact_needed, bits_differ, far)
    bad = (gn != wn) | (~gn & ~wn & bits_differ)
    return np.flatnonzero(bad)


def specials(dt):
    fi = np.finfo(dt)
    sub = fi.smallest_subnormal
    return np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, sub, -sub, sub * 7, -sub * 5,
                     fi.tiny, -fi.tiny, fi.tiny * 0.5, -fi.tiny * 0.25, 1e-4, -1e-4, fi.max,
                     -fi.max], dtype=dt)


def draw_inputs(case, draw):
    """The case's inputs (positional, family.h order)."""
    rng = np.random.default_rng(zlib.crc32(f"{case['name']}/{draw}".encode()))
    dt = DTYPES[case["dtype"]]
    op, direction, n = case["op"], case["direction"], case["elems"]
    shape = (2, case["channels"], n // (2 * case["channels"])) if op in CHANNEL_OPS else (n,)
    reducing = direction == "backward" and op in REDUCING_BACKWARD
    x = (rng.standard_normal(n) * 2.0).astype(dt)
    if not reducing:
        small = rng.choice(n, n // 20, replace=False)
        x[small] = (rng.standard_normal(small.size) * 1e-3).astype(dt)
        sp = specials(dt)
        where = rng.choice(n, 3 * sp.size, replace=False)
        x[where] = np.tile(sp, 3)
    x = x.reshape(shape)
    dy = (rng.standard_normal(n)).astype(dt).reshape(shape)
    ins = {"x": x, "dy": dy}
    if op in CHANNEL_OPS:
        c = case["channels"]
        if op == "prelu":
            ins["weight"] = rng.uniform(-0.6, 0.6, c).astype(dt)
        else:
            ins["bias"] = (rng.standard_normal(c) * 0.7).astype(dt)
    if op == "bias_act_dropout" and direction == "backward":
        ins["mask"] = rng.integers(0, 256, (n + 7) // 8, dtype=np.uint8)
    order = {
        ("relu", "forward"): ["x"], ("relu", "backward"): ["dy", "x"],
        ("elu", "forward"): ["x"], ("elu", "backward"): ["dy", "x"],
        ("prelu", "forward"): ["x", "weight"], ("prelu", "backward"): ["dy", "x", "weight"],
        ("rrelu", "forward"): ["x"], ("rrelu", "backward"): ["dy", "x"],
        ("bias_act", "forward"): ["x", "bias"], ("bias_act", "backward"): ["dy", "x", "bias"],
        ("bias_act_dropout", "forward"): ["x", "bias"],
        ("bias_act_dropout", "backward"): ["dy", "x", "bias", "mask"],
    }[(op, direction)]
    return [ins[k] for k in order]


def reference(case, args, wants_noise):
    """leaky.numpy's outputs (a tuple) for the case."""
    op, direction, p = case["op"], case["direction"], dict(case["params"])
    if op == "relu":
        if direction == "forward":
            return (ln.relu(args[0]),)
        return (ln.relu_backward(args[0], args[1]),)
    if op == "elu":
        if direction == "forward":
            return (ln.elu(args[0], **p),)
        return (ln.elu_backward(args[0], args[1], **p),)
    if op == "prelu":
        if direction == "forward":
            return (ln.prelu(args[0], args[1]),)
        return tuple(ln.prelu_backward(args[0], args[1], args[2]))
    if op == "rrelu":
        if direction == "forward":
            if wants_noise:
                return tuple(ln.rrelu_with_noise(args[0], **p))
            return (ln.rrelu(args[0], **p),)
        return (ln.rrelu_backward(args[0], args[1], **p),)
    if op == "bias_act":
        if direction == "forward":
            return (ln.bias_act(args[0], args[1], **p),)
        return tuple(ln.bias_act_backward(args[0], args[1], args[2], **p))
    if direction == "forward":
        return tuple(ln.bias_act_dropout(args[0], args[1], **p))
    dy, x, b, mask = args
    return tuple(ln.bias_act_dropout_backward(dy, x, mask, b, **p))


def ulp_bound(case):
    if case["op"] != "elu":
        return 0
    return ln._native.elu_max_ulp(case["dtype"], case["direction"] == "backward",
                                  case["params"].get("input_scale", 1.0) < 0)


def run_case(case, fn, draws):
    """Per draw: a list of (output index, number of bad elements or 'shape')."""
    results = []
    for d in range(draws):
        args = draw_inputs(case, d)
        before = [a.copy() for a in args]
        with np.errstate(all="ignore"):
            got = fn(*args, **case["params"])
        for a, b in zip(args, before):
            if bad_elements(a, b) is None or bad_elements(a, b).size:
                raise AssertionError("kernel modified an input")
        got = got if isinstance(got, tuple) else (got,)
        want = reference(case, args, wants_noise=len(got) == 2)
        diffs = []
        if len(got) != len(want):
            diffs.append((-1, "outputs %d != %d" % (len(got), len(want))))
        for k, (g, w) in enumerate(zip(got, want)):
            bad = bad_elements(g, w, ulp_bound(case))
            if bad is None:
                diffs.append((k, "shape/dtype %s %s vs %s %s" % (np.shape(g), np.asarray(g).dtype,
                                                               np.shape(w), np.asarray(w).dtype)))
            elif bad.size:
                diffs.append((k, int(bad.size)))
        results.append(diffs)
    return results


def fixed_function(fn):
    """fn with its `# FAULT` line replaced by FIXES[fn.__name__]."""
    src = textwrap.dedent(inspect.getsource(fn))
    lines = src.splitlines()
    marked = [i for i, ln_ in enumerate(lines) if "# FAULT" in ln_]
    assert len(marked) == 1, fn.__name__
    i = marked[0]
    indent = re.match(r"\s*", lines[i]).group(0)
    lines[i] = indent + FIXES[fn.__name__]
    src = "\n".join(lines)
    src = re.sub(r"^@plan\(.*\)\n", "", src, flags=re.M)
    ns = dict(vars(family_cases))
    exec(compile(src, f"<fixed {fn.__name__}>", "exec"), ns)
    return ns[fn.__name__]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--case")
    ap.add_argument("--draws", type=int, default=3)
    opts = ap.parse_args()
    cases = json.load(open(os.path.join(HERE, "family_cases.json")))
    if opts.case:
        cases = [c for c in cases if c["name"] == opts.case]
    violations = []
    names = set()
    for case in cases:
        name = case["name"]
        problems = []
        if name in names:
            problems.append("duplicate name")
        names.add(name)
        fn = getattr(family_cases, case["function"], None)
        if fn is None:
            violations.append(f"{name}: no function {case['function']}")
            continue
        faulty = case["expect"] != ["pass"]
        marks = inspect.getsource(fn).count("# FAULT")
        if case["kind"] != "numpy_family":
            problems.append("kind")
        if not set(case["expect"]) <= KINDS:
            problems.append(f"unknown expect {case['expect']}")
        if case["max_findings"] != (1 if faulty else 0):
            problems.append("max_findings")
        if marks != (1 if faulty else 0):
            problems.append(f"{marks} FAULT marks")
        if not fn.__doc__:
            problems.append("no docstring")
        if getattr(fn, "plan", None) != case["plan"]:
            problems.append(f"plan {case['plan']} != @plan {getattr(fn, 'plan', None)}")
        if not set(case["params"]) <= ALLOWED[(case["op"], case["direction"])]:
            problems.append(f"params {sorted(case['params'])}")
        if case["op"] in CHANNEL_OPS and case["elems"] % (2 * case["channels"]):
            problems.append("elems not a multiple of 2 * channels")
        results = run_case(case, fn, opts.draws)
        differs = [bool(r) for r in results]
        if faulty:
            if not all(differs):
                problems.append(f"faulty kernel matched leaky.numpy on draw(s) "
                                f"{[d for d, x in enumerate(differs) if not x]}")
            if case["function"] in FIXES:
                fixed = run_case(case, fixed_function(fn), opts.draws)
                if any(fixed):
                    problems.append(f"fixed kernel still differs: {fixed}")
            else:
                problems.append("no fix recorded")
        elif any(differs):
            problems.append(f"pass kernel differs: {results}")
        status = "ok" if not problems else "VIOLATION"
        if not opts.quiet or problems:
            summary = "; ".join(f"out{k}:{v}" for k, v in results[0]) or "equal"
            print(f"{status:9} {name:36} expect={','.join(case['expect']):28} draw0[{summary}]"
                  + ("" if not problems else "  <- " + " | ".join(problems)))
        violations += [f"{name}: {p}" for p in problems]
    if not opts.case:
        kernels = {n for n, f in vars(family_cases).items()
                   if callable(f) and hasattr(f, "plan") and not isinstance(f, type)}
        used = [c["function"] for c in cases]
        for k in sorted(kernels - set(used)):
            violations.append(f"kernel {k} has no case")
        for k in sorted({u for u in used if used.count(u) > 1}):
            violations.append(f"kernel {k} used by more than one case")
        faulty_fns = {c["function"] for c in cases if c["expect"] != ["pass"]}
        for k in sorted(set(FIXES) - faulty_fns):
            violations.append(f"FIXES entry {k} is not a faulty case's kernel")
    kinds = {}
    for c in cases:
        key = "/".join(c["expect"])
        kinds[key] = kinds.get(key, 0) + 1
    print(f"\n{len(cases)} cases; by expected first finding:")
    for k in sorted(kinds):
        print(f"  {k:30} {kinds[k]}")
    if violations:
        print(f"\n{len(violations)} violation(s):")
        for v in violations:
            print("  " + v)
        return 1
    print(f"\nOK: {sum(c['expect'] == ['pass'] for c in cases)} pass kernels equal leaky.numpy, "
          f"{sum(c['expect'] != ['pass'] for c in cases)} faulty kernels differ on every draw "
          f"and equal it once their # FAULT line is fixed ({opts.draws} draws each).")
    return 0


if __name__ == "__main__":
    sys.exit(main())

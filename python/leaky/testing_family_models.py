"""Why a kernel of a family op (leaky/family.h besides LeakyReLU) computes
wrong values: the faults each op invites, each a model of the output a
kernel with that fault gives, tried against what the kernel gave.

A model is the op computed another way from the same inputs (PReLU's
weights indexed along another axis, ELU's exp(x) - 1, RReLU's stream
restarted per core, bias_act's clamp before its gain, ...), each with the
variants a port writes (another stride, a restart per core or per tile, a
clamp on one side). A model explains the kernel when every element the
kernel got wrong, in every output, is what the model gives there; where
several kinds explain it equally well the finding is `ambiguous`, and
where none does nothing is claimed (check_op's `mismatch` stands). Sums
(PReLU's dweight, bias_act's db) are compared within the rounding their
order of summation allows, and ELU's exp within a few ulp of exp's own
result; everything else bit for bit.

Before trusting a model, each op's NumPy form with no fault must give the
library's golden output exactly (within ELU's bound): where it does not
(bf16, an op this module does not model), no value is explained.
"""
import numpy as _np

from . import numpy as _lnp

# kind: what the output looks like (docs/toolkit.md's table of the family's kinds)
KINDS = {
    "weight_axis": "PReLU's weights taken along another axis or stride than the channel axis",
    "weight_broadcast": "one PReLU weight used for every channel",
    "weight_grad_not_reduced": "dweight holds part of its channel's sum (one core's, tile's or "
                               "slice's), or every element's term unsummed",
    "weight_grad_wrong_axis": "dweight summed over another grouping of the elements",
    "weight_grad_half": "dweight accumulated in the half type: off by more than one rounding, "
                        "within what summing in f16/bf16 gives",
    "expm1_missing": "ELU's negative side as exp(x) - 1, not expm1(x): wrong near 0",
    "alpha_scale_swapped": "ELU's alpha and scale swapped",
    "input_scale_missing": "ELU's input_scale not applied",
    "stream_restart": "the random stream restarted per core or per tile, not continued at "
                      "each element's own position",
    "eval_slope_in_training": "RReLU in training with the evaluation slope (lower + upper) / 2",
    "bias_axis": "bias_act's bias added along another axis or stride than the channel axis",
    "gain_before_clamp": "bias_act's clamp and gain in the wrong order",
    "clamp_missing": "bias_act's clamp not applied (or on one side only)",
    "dropout_scale_missing": "dropout's kept elements not scaled by 1 / (1 - p)",
    "mask_bit_order": "dropout's mask bits in the other order within each byte",
    "mask_offset_per_core": "dropout's keep decisions restarted at each core's (or tile's) start",
}


def _ct(dtype):
    return _np.float64 if dtype == _np.float64 else _np.float32


def _bits(a):
    a = _np.ascontiguousarray(a)
    return a.reshape(-1).view(_np.dtype("u%d" % a.itemsize))


def _same(a, b, ulps=0):
    """Element-wise: equal bits, both NaN, or within `ulps` of b."""
    a, b = _np.asarray(a).reshape(-1), _np.asarray(b).reshape(-1)
    if a.dtype != b.dtype or a.shape != b.shape:
        return None
    if a.dtype == _np.uint8:
        return a == b
    same = (_bits(a) == _bits(b)) | (_np.isnan(a) & _np.isnan(b))
    if ulps:
        with _np.errstate(invalid="ignore", over="ignore"):
            spacing = _np.abs(_np.spacing(b.astype(b.dtype)))
            same |= _np.abs(a.astype(_np.float64) - b.astype(_np.float64)) <= ulps * spacing
    return same


def _matches(k, pred, ulps):
    """Where the kernel's output k is the prediction: `pred` an array
    (bit for bit, or within ulps), or (array, tolerance per element)."""
    if isinstance(pred, tuple):
        value, tol = pred
        return _near(k, value, _np.broadcast_to(_np.asarray(tol, _np.float64).reshape(-1),
                                                 _np.asarray(value).reshape(-1).shape)) \
            if _np.asarray(k).shape == _np.asarray(value).shape else None
    return _same(k, pred, ulps)


def _value(pred):
    return pred[0] if isinstance(pred, tuple) else pred


def _near(a, b, tol):
    """Element-wise |a - b| <= tol (sums in another order), NaN with NaN."""
    a = _np.asarray(a, _np.float64).reshape(-1)
    b = _np.asarray(b, _np.float64).reshape(-1)
    if a.shape != b.shape:
        return None
    with _np.errstate(invalid="ignore"):
        return (_np.abs(a - b) <= tol) | (_np.isnan(a) & _np.isnan(b)) | (a == b)


class _Geometry:
    """The tensor's [outer, channels, inner] view and the plan's regions."""

    def __init__(self, shape, regions):
        self.n = int(_np.prod(shape))
        self.outer, self.channels, self.inner = (shape + (1, 1))[:3] if len(shape) == 3 else (
            1, 1, self.n)
        self.flat = _np.arange(self.n)
        self.channel = (self.flat // self.inner) % self.channels
        # Partitions of the elements: per core and per tile under the plan.
        self.partitions = []
        if regions:
            core = _np.zeros(self.n, _np.int64)
            tile = _np.zeros(self.n, _np.int64)
            core_start = _np.zeros(self.n, _np.int64)
            tile_start = _np.zeros(self.n, _np.int64)
            t = 0
            for k, (start, length, tiles) in enumerate(regions):
                core[start:start + length] = k
                core_start[start:start + length] = start
                for ts, tl in tiles:
                    tile[ts:ts + tl] = t
                    tile_start[ts:ts + tl] = ts
                    t += 1
            self.partitions = [("core", core, core_start), ("tile", tile, tile_start)]

    def channel_maps(self):
        """(description, kind, index of the weight each element uses): the
        ways a port indexes a per-channel operand wrongly."""
        c, n, inner, outer = self.channels, self.n, self.inner, self.outer
        if c < 2:
            return []
        maps = [("the flat index modulo channels (channels-last indexing)", "axis", self.flat % c),
                ("the outer index", "axis", (self.flat // (c * inner)) % c),
                ("the position within the inner axis", "axis", (self.flat % inner) % c),
                ("channel-major blocks (index // (outer * inner))", "axis",
                 _np.minimum(self.flat // max(1, outer * inner), c - 1))]
        for s in sorted({1, 2, inner - 1, inner + 1, 2 * inner, inner // 2, c, c * inner,
                         outer * inner}):
            if 1 <= s != inner:
                maps.append(("stride %d in place of %d" % (s, inner), "axis", (self.flat // s) % c))
        for k in range(c):
            maps.append(("weight[%d] for every channel" % k, "broadcast", _np.full(n, k)))
        seen, out = [self.channel], []
        for m in maps:
            if not any(_np.array_equal(m[2], s) for s in seen):
                seen.append(m[2])
                out.append(m)
        return out

    def restart_positions(self):
        """(description, position of each element's draw) for a stream
        restarted at the start of each core or tile."""
        return [("each %s's start" % name, self.flat - start)
                for name, _, start in self.partitions]


# ---- the ops in NumPy, with the faults as knobs (no knob: the library's result)

def _prelu_y(x, w, index, ct):
    xf = x.reshape(-1).astype(ct)
    with _np.errstate(invalid="ignore", over="ignore"):
        y = _np.where(xf > 0, xf, w.astype(ct)[index] * xf)
    return y.astype(x.dtype).reshape(x.shape)


def _prelu_dx(dy, x, w, index, ct):
    xf, gf = x.reshape(-1).astype(ct), dy.reshape(-1).astype(ct)
    with _np.errstate(invalid="ignore", over="ignore"):
        dx = _np.where(xf > 0, gf, w.astype(ct)[index] * gf)
    return dx.astype(x.dtype).reshape(x.shape)


def _prelu_terms(dy, x, ct):
    xf, gf = x.reshape(-1).astype(ct), dy.reshape(-1).astype(ct)
    with _np.errstate(invalid="ignore", over="ignore"):
        return _np.where(xf > 0, ct(0), xf * gf).astype(_np.float64)


def _grouped(terms, index, groups):
    return _np.bincount(index, weights=terms, minlength=groups)[:groups]


def _round_sum(total, dtype):
    return _np.asarray(total, _np.float64).astype(_np.float32).astype(dtype) \
        if dtype != _np.float64 else _np.asarray(total, _np.float64)


def _bias_act(x, b, index, s, ct, order="gain_then_clamp", clamp_sides="both", drop=None,
              scale_kept=True):
    """bias_act (and dropout when drop, the keep decision per element, is
    given) in the compute type, rounded once."""
    xf = x.reshape(-1).astype(ct)
    with _np.errstate(invalid="ignore", over="ignore"):
        v = xf + (b.astype(ct)[index] if b is not None else ct(0))
        act = s["act"]
        if act == "lrelu":
            a = _np.where(v > 0, v, v * ct(s["alpha"]))
        elif act == "relu":
            a = _np.where(v < 0, ct(0), v)
        else:
            a = v
        clamp = s.get("clamp")
        clamp = -1.0 if clamp is None else clamp

        def clip(u):
            if clamp < 0 or clamp_sides == "none":
                return u
            lo = ct(-clamp) if clamp_sides in ("both", "lower") else None
            hi = ct(clamp) if clamp_sides in ("both", "upper") else None
            if lo is not None:
                u = _np.where(u < lo, lo, u)
            if hi is not None:
                u = _np.where(u > hi, hi, u)
            return u

        gain = ct(s["gain"])
        u = clip(a * gain) if order == "gain_then_clamp" else clip(a) * gain
        if drop is not None:
            keep_scale = ct(1) / ct(ct(1) - ct(s["dropout_p"])) if scale_kept else ct(1)
            u = u * _np.where(drop, keep_scale, ct(0))
    return u.astype(x.dtype).reshape(x.shape)


def _scalars(s):
    """bias_act's scalars with StyleGAN's defaults filled in."""
    s = dict(s)
    act = s.get("act", "lrelu")
    if s.get("alpha") is None:
        s["alpha"] = 0.2 if act == "lrelu" else 0.0
    if s.get("gain") is None:
        s["gain"] = 1.0 if act == "linear" else 2 ** 0.5
    return s


def _keep_stream(n, seed, p, offset):
    """Dropout's keep decisions for stream positions [offset, offset + n)."""
    _, mask = _lnp.bias_act_dropout(_np.ones((1, 1, n), _np.float32), None, act="linear",
                                    gain=1.0, dropout_p=p, seed=seed, offset=offset)
    return _np.unpackbits(mask, bitorder="little")[:n].astype(bool)


def _pack(keep):
    return _np.packbits(keep.astype(_np.uint8), bitorder="little")


def _rrelu_stream(n, s, offset):
    _, noise = _lnp.rrelu_with_noise(-_np.ones(n, _np.float32), lower=s["lower"], upper=s["upper"],
                                     training=True, seed=s["seed"], offset=offset)
    return noise.astype(_np.float64)


def _restarted(n, draws, value_of, matches, bases, max_segments=256, window=16):
    """Stream positions restarted wherever the kernel's output says: from
    the first drawing element the current positions get wrong, try each
    restart point P back to 64 elements before it (and each base position),
    keep the one under which the next `window` drawing elements match,
    repeat. draws: which elements draw from the stream and show their draw
    (a bool array); value_of(idx, pos) the model's output at idx for stream
    positions pos; matches(idx, values) where they are the kernel's.
    Returns (positions, restart points as (P, base)) or None when no
    restart explains it."""
    drawing = _np.nonzero(draws)[0]

    def first_wrong(pos, start):
        idx = drawing[drawing >= start]
        bad = idx[~matches(idx, value_of(idx, pos[idx]))]
        return int(bad[0]) if bad.size else None

    pos = _np.arange(n, dtype=_np.int64) + bases[0]
    restarts = []
    start = 0
    for _ in range(max_segments):
        i = first_wrong(pos, start)
        if i is None:
            return pos, restarts
        # The restart lies before i, after the last restart; a drawing
        # element before i may be right by chance (f16 rounds many slopes
        # alike), so the points back to 64 before i are all tried.
        low = max(start, i - 64)
        found = None
        for base in bases:
            for point in range(i, low - 1, -1):
                trial = pos.copy()
                trial[point:] = base + _np.arange(n - point)
                ahead = drawing[(drawing >= point)][:window]
                if ahead.size and _np.all(matches(ahead, value_of(ahead, trial[ahead]))):
                    found = (point, base, trial)
                    break
            if found:
                break
        if not found:
            return None
        point, base, pos = found
        restarts.append((point, base))
        start = point + 1
    return None


def _restarts_text(what, restarts, n):
    """'<what> restarted at elements P, ... (k restarts, from ...)': base n
    is the call's offset (the positions' index n + k), base 0 position 0."""
    points = ", ".join(str(p) for p, _ in restarts[:6]) + (
        " and %d more" % (len(restarts) - 6) if len(restarts) > 6 else "")
    bases = " and ".join(sorted({"the call's offset" if b == n else "position 0"
                                 for _, b in restarts}))
    return "%s restarted at elements %s (%d restarts, from %s)" % (what, points, len(restarts),
                                                                  bases)


# ---- the hypotheses per op: (kind, description, {output name: predicted array})

def _prelu(direction, inputs, golden, s, g, ct):
    x, w = inputs["x"], inputs["weight"]
    dtype = x.dtype.type
    if direction == "forward":
        base = {"y": _prelu_y(x, w, g.channel, ct)}
        hyps = [("weight_" + kind, "weights indexed by " + what, {"y": _prelu_y(x, w, m, ct)})
                for what, kind, m in g.channel_maps()]
        return base, hyps
    dy = inputs["dy"]
    terms = _prelu_terms(dy, x, ct)
    dweight = _round_sum(_grouped(terms, g.channel, g.channels), dtype)
    base = {"dx": _prelu_dx(dy, x, w, g.channel, ct), "dweight": dweight}

    def sums(index):
        # Summed in another order than the library's: within f32 rounding.
        return (_round_sum(_grouped(terms, index, g.channels), dtype),
                _sum_tolerance(terms, index, g.channels, dtype, 2.0 ** -23))

    hyps = []
    for what, kind, m in g.channel_maps():
        dx = _prelu_dx(dy, x, w, m, ct)
        hyps.append(("weight_" + kind, "dx's weights indexed by " + what, {"dx": dx}))
        hyps.append(("weight_" + kind, "dx's weights and dweight's sums indexed by " + what,
                     {"dx": dx, "dweight": sums(m % g.channels)}))
        if kind == "axis":
            hyps.append(("weight_grad_wrong_axis", "dweight summed over " + what,
                         {"dweight": sums(m % g.channels)}))
    return base, hyps


def _prelu_dweight_shape(got, inputs, g, ct):
    """dweight returned with another shape: every term unsummed, or sums over
    the outer or inner axis; (kind, description) or None."""
    terms = _prelu_terms(inputs["dy"], inputs["x"], ct)
    got = _np.asarray(got, _np.float64).reshape(-1)
    if got.size == g.n and _np.all(_near(got, terms, 1e-3 * _np.abs(terms) + 1e-30)):
        return "weight_grad_not_reduced", "dweight holds every element's term x * dy, not summed"
    for what, groups, index in (("the outer index", g.outer, g.flat // (g.channels * g.inner)),
                                ("the inner position", g.inner, g.flat % g.inner)):
        if got.size == groups != g.channels:
            sums = _grouped(terms, index, groups)
            tol = 1e-3 * _grouped(_np.abs(terms), index, groups) + 1e-30
            if _np.all(_near(got, sums, tol)):
                return "weight_grad_wrong_axis", "dweight summed per %s (%d sums), not per channel" % (
                    what, groups)
    return None


def _sum_tolerance(terms, index, groups, dtype, eps):
    """How far a sum of `terms` per group may move with another order of
    summation at precision eps, plus one rounding of the result."""
    mags = _grouped(_np.abs(terms), index, groups)
    counts = _np.bincount(index, minlength=groups)[:groups]
    return counts * eps * mags + _np.abs(_np.spacing(mags.astype(_np.float32))).astype(
        _np.float64) * (1 if dtype != _np.float64 else 0) + 1e-300


def _dweight_sums(got, inputs, golden_dw, g, ct, dtype):
    """dweight's own faults, where dx is right: (kind, description) or None."""
    terms = _prelu_terms(inputs["dy"], inputs["x"], ct)
    got = _np.asarray(got, _np.float64).reshape(-1)
    exact = _grouped(terms, g.channel, g.channels)
    wrong = ~_same(_np.asarray(got).astype(golden_dw.dtype), golden_dw)
    if not wrong.any():
        return None
    # Part of each channel's sum: candidate partial reductions, each a value
    # per channel - one part of a partition (a core's, a tile's, an outer
    # slice's), the parts of a prefix of cores, or per core only the first
    # or last tile touching the channel (an accumulator assigned, not added to).
    mags_c = _grouped(_np.abs(terms), g.channel, g.channels)
    candidates = []
    parts = list(g.partitions) + [("outer slice", g.flat // (g.channels * g.inner), None)]
    for name, part, _ in parts:
        ids = _np.unique(part)
        per = _np.array([_grouped(_np.where(part == p, terms, 0.0), g.channel, g.channels)
                         for p in ids])  # [part, channel]
        candidates += [("one %s's part of each channel's sum" % name, row) for row in per]
        candidates.append(("the sum of some %ss' parts, not all" % name, _np.cumsum(per, axis=0)))
    if len(g.partitions) == 2:
        core, tile = g.partitions[0][1], g.partitions[1][1]
        for pick in ("first", "last"):
            value = _np.zeros(g.channels)
            for k in _np.unique(core):
                for c in range(g.channels):
                    tiles_kc = _np.unique(tile[(core == k) & (g.channel == c)])
                    if tiles_kc.size:
                        t = tiles_kc[0] if pick == "first" else tiles_kc[-1]
                        value[c] += terms[(tile == t) & (g.channel == c)].sum()
            candidates.append(("per core only the %s tile's part of each channel" % pick, value))
    for what, value in candidates:
        value = _np.asarray(value)
        rows = value if value.ndim == 2 else value[None, :]
        ok = _np.zeros(g.channels, bool)
        for row in rows:  # prefixes: any prefix per channel
            tol = 2.0 ** -20 * mags_c + 2 * _np.abs(_np.spacing(row.astype(dtype))).astype(_np.float64)
            # A partial sum within rounding of the whole one tells nothing.
            ok |= (_np.abs(got - row) <= tol) & (_np.abs(row - exact) > tol)
        if ok[wrong].all() and rows.shape[0] >= 1:
            return "weight_grad_not_reduced", "dweight holds " + what
    # Accumulated in the half type: off its exact sum by more than summing
    # in f32 in any order gives, and by no more than a few times what
    # summing the same terms in f16 (bf16) in memory order gives.
    if dtype == _np.float64:
        return None
    err = _np.abs(got - exact)
    # What summing in f32 gives: the memory-order f32 sum's own error, with
    # room for another order, and the output's rounding.
    f32_err = _np.array([abs(float(_np.cumsum(terms[g.channel == c].astype(_np.float32),
                                              dtype=_np.float32)[-1]) - exact[c])
                         if _np.any(g.channel == c) else 0.0 for c in range(g.channels)])
    tight = 16 * f32_err + 2 * _np.abs(_np.spacing(exact.astype(dtype))).astype(_np.float64)
    if not _np.any(err[wrong] > tight[wrong]):
        return None
    for half, eps in (("f16", 2.0 ** -11), ("bf16", 2.0 ** -8)):
        simulated = _np.zeros(g.channels)
        for c in range(g.channels):
            t = terms[g.channel == c]
            if half == "f16":
                with _np.errstate(over="ignore", invalid="ignore"):
                    acc = _np.cumsum(t.astype(_np.float16), dtype=_np.float16)
                simulated[c] = abs(float(acc[-1]) - exact[c]) if acc.size else 0.0
            else:  # bf16: f32 rounded to 8 bits of mantissa after every addition
                acc = 0.0
                for v in t:
                    acc = float(_bf16(_np.float32(acc + _bf16(_np.float32(v)))))
                simulated[c] = abs(acc - exact[c])
        mags = _grouped(_np.abs(terms), g.channel, g.channels)
        bound = 4 * simulated + 4 * eps * _np.abs(exact) + eps * 1e-3 * mags
        if _np.all(err <= bound):
            return "weight_grad_half", "dweight is off its exact sum by up to %.3g, more than " \
                "summing in f32 gives and as much as summing in %s does (%.3g)" % (
                    err.max(), half, simulated.max())
    return None


def _bf16(v):
    """f32 values rounded to bf16 (to nearest even), as f32."""
    b = _np.asarray(v, _np.float32).view(_np.uint32)
    r = ((b + _np.uint32(0x7FFF) + ((b >> _np.uint32(16)) & _np.uint32(1))) &
         _np.uint32(0xFFFF0000))
    return r.view(_np.float32)


def _elu(direction, inputs, golden, s, g, ct):
    x = inputs["x"] if direction == "forward" else inputs["saved"]
    a, sc, isc = s["alpha"], s["scale"], s["input_scale"]
    hyps = []
    if direction == "forward":
        base = {"y": _lnp.elu(x, **s)}
        xf = x.reshape(-1).astype(ct)
        with _np.errstate(invalid="ignore", over="ignore"):
            v = xf * ct(isc)
            e = _np.exp(v)
            neg = (e - ct(1)) * ct(ct(a) * ct(sc))
            y = _np.where(xf > 0, xf * ct(sc), neg).astype(x.dtype).reshape(x.shape)
            # Any exp within 2 ulp of its own result, then the subtraction.
            tol = _np.where(xf > 0, 0.0, 2 * _np.abs(_np.spacing(e)).astype(_np.float64) *
                            abs(a * sc)) 
            tol = tol + 2 * _np.abs(_np.spacing(y.reshape(-1))).astype(_np.float64)
        hyps.append(("expm1_missing", "exp(x * input_scale) - 1 in place of expm1", {"y": (y, tol)}))
        call = lambda **k: {"y": _lnp.elu(x, **k)}
    else:
        dy = inputs["dy"]
        base = {"dx": _lnp.elu_backward(dy, x, **s)}
        call = lambda **k: {"dx": _lnp.elu_backward(dy, x, **k)}
    if a != sc:
        hyps.append(("alpha_scale_swapped", "alpha %g used as scale and scale %g as alpha" % (a, sc),
                     call(alpha=sc, scale=a, input_scale=isc)))
    if isc != 1:
        hyps.append(("input_scale_missing", "input_scale %g not applied" % isc,
                     call(alpha=a, scale=sc, input_scale=1.0)))
        if direction == "backward":
            # exp(x * input_scale) kept, the chain rule's factor input_scale dropped
            xf, gf = x.reshape(-1).astype(ct), inputs["dy"].reshape(-1).astype(ct)
            with _np.errstate(invalid="ignore", over="ignore"):
                dx = _np.where(xf > 0, gf * ct(sc), gf * ct(ct(a) * ct(sc)) * _np.exp(xf * ct(isc)))
            hyps.append(("input_scale_missing", "the chain rule's factor input_scale %g dropped "
                         "(exp(x * input_scale) kept)" % isc,
                         {"dx": dx.astype(x.dtype).reshape(x.shape)}))
    return base, hyps


def _rrelu(direction, inputs, golden, s, g, ct, got_first=None):
    x = inputs["x"]
    if not s.get("training"):
        return None, []
    n, off = g.n, s["offset"]
    stream = _rrelu_stream(n, s, off)
    xf = x.reshape(-1).astype(ct)

    def outputs(r):
        rr = r.astype(ct)
        if direction == "forward":
            # x <= 0 draws (a NaN does not: its slope is 1, as PyTorch's)
            with _np.errstate(invalid="ignore", over="ignore"):
                y = _np.where(xf <= 0, xf * rr, xf).astype(x.dtype).reshape(x.shape)
            noise = _np.where(xf <= 0, rr, ct(1)).astype(golden["noise"].dtype).reshape(x.shape) \
                if "noise" in golden else None
            return {"y": y, **({"noise": noise} if noise is not None else {})}
        gf = inputs["dy"].reshape(-1).astype(ct)
        with _np.errstate(invalid="ignore", over="ignore"):
            return {"dx": _np.where(xf <= 0, gf * rr, gf).astype(x.dtype).reshape(x.shape)}

    base = outputs(stream)
    # The evaluation slope in training: in the training code's form, or the
    # evaluation path itself (LeakyReLU's, where a NaN input takes the slope).
    ev = dict(s, training=False)
    evaluation = {"y": _lnp.rrelu(x, **ev)} if direction == "forward" else {
        "dx": _lnp.rrelu_backward(inputs["dy"], x, **ev)}
    if direction == "forward" and "noise" in golden:
        evaluation["noise"] = _lnp.rrelu_with_noise(x, **ev)[1]
    hyps = [("eval_slope_in_training", "slope (lower + upper) / 2 while training",
             outputs(_np.full(n, (s["lower"] + s["upper"]) / 2))),
            ("eval_slope_in_training", "the evaluation path, slope (lower + upper) / 2, while "
             "training", evaluation)]
    # Restarts wherever the output says (per core, per tile, at any split):
    # the slopes of positions [0, n) and [offset, offset + n).
    kernel = _np.asarray(got_first[0]).reshape(-1) if got_first else None
    if kernel is not None and kernel.shape == (n,):
        # Index k < n: position k of the stream; n + k: position offset + k.
        slopes = _np.concatenate([_rrelu_stream(n, s, 0) if off else stream, stream])
        at = slopes.__getitem__

        other = xf if direction == "forward" else inputs["dy"].reshape(-1).astype(ct)

        def value_of(idx, pos):
            with _np.errstate(invalid="ignore", over="ignore"):
                return (other[idx] * at(pos).astype(ct)).astype(x.dtype)

        def matches(idx, values):
            return _same(kernel[idx], values)

        # The elements whose output shows their slope: forward, x negative
        # and finite (0, -0 and -inf give the same y for every slope);
        # backward, x <= 0 with dy finite and not 0.
        if direction == "forward":
            telling = (xf < 0) & _np.isfinite(xf)
        else:
            telling = (xf <= 0) & (other != 0) & _np.isfinite(other)

        found = _restarted(n, telling, value_of, matches, [n, 0] if off else [n])
        if found and found[1]:
            pos, restarts = found
            hyps.append(("stream_restart", _restarts_text("the stream", restarts, n),
                         outputs(at(pos))))
    return base, hyps


def _bias_act_op(op, direction, inputs, golden, s, g, ct, got_mask=None):
    s = _scalars(s)
    x, b = inputs["x"], inputs.get("bias")
    if direction == "backward" and op == "bias_act":
        return _bias_act_backward(inputs, golden, s, g, ct)
    dropout = op == "bias_act_dropout"
    keep = None
    if dropout:
        if direction == "forward":
            keep = _keep_stream(g.n, s["seed"], s["dropout_p"], s["offset"])
        else:
            return _dropout_backward(inputs, golden, s, g, ct)

    def run(**k):
        drop = k.pop("drop", keep)
        y = _bias_act(x, b, k.pop("index", g.channel), s, ct, drop=drop, **k)
        out = {"y": y}
        if dropout:
            out["mask"] = _pack(drop)
        return out

    base = run()
    hyps = []
    for what, kind, m in g.channel_maps():
        hyps.append(("bias_axis", "bias indexed by " + what, run(index=m)))
    if s.get("clamp") is not None and s["clamp"] >= 0:
        hyps.append(("gain_before_clamp", "clamp applied before the gain",
                     run(order="clamp_then_gain")))
        for sides, what in (("none", "no clamp"), ("upper", "only the upper clamp"),
                            ("lower", "only the lower clamp")):
            hyps.append(("clamp_missing", what, run(clamp_sides=sides)))
    if dropout:
        hyps.append(("dropout_scale_missing", "kept elements not scaled by 1 / (1 - p)",
                     run(scale_kept=False)))
        flipped = _np.unpackbits(_np.packbits(keep.astype(_np.uint8), bitorder="big"),
                                 bitorder="little")[:g.n].astype(bool)
        hyps.append(("mask_bit_order", "the mask written most significant bit first",
                     {"y": base["y"], "mask": _pack(flipped)}))
        # The keep decisions restarted wherever the kernel's mask says (per
        # core, per tile, at any split): positions [offset, offset + n) at
        # index n + k, [0, n) at k.
        mask = _np.asarray(got_mask) if got_mask is not None else None
        n, off = g.n, s["offset"]
        if mask is not None and mask.dtype == _np.uint8 and mask.size == (n + 7) // 8:
            bits = _np.unpackbits(mask.reshape(-1), bitorder="little")[:n].astype(bool)
            # position 0's stream is the call's own when its offset is 0
            draws = _np.concatenate(
                [_keep_stream(n, s["seed"], s["dropout_p"], 0) if off else keep, keep])
            found = _restarted(n, _np.ones(n, bool), lambda idx, pos: draws[pos],
                               lambda idx, values: bits[idx] == values,
                               [n, 0] if off else [n], window=64)
            if found and found[1]:
                pos, restarts = found
                hyps.append(("mask_offset_per_core",
                             _restarts_text("the keep decisions", restarts, n),
                             run(drop=draws[pos])))
        for where_, part, start in g.partitions:
            mask_bytes = _np.zeros((n + 7) // 8, _np.uint8)
            for p_ in _np.unique(part):
                idx = _np.nonzero(part == p_)[0]
                b0 = int(idx[0])
                packed = _pack(keep[idx])
                mask_bytes[b0 // 8:b0 // 8 + packed.size] = packed[:mask_bytes.size - b0 // 8]
            hyps.append(("mask_offset_per_core", "each %s's mask bits stored from its first "
                         "byte (element // 8), the bit offset element %% 8 dropped" % where_,
                         {"y": base["y"], "mask": mask_bytes}))
    return base, hyps


def _bias_act_dx(dy, x, b, index, s, ct, clamp_sides="both", clamp_on="gained", scale=None):
    """bias_act's dx as PyTorch's unfused backward computes it: the clamp's
    gradient (passed where -clamp <= pre-clamp value <= clamp), then the
    gain, then the activation's; rounded once. scale: dy's dropout factor
    per element, applied first."""
    xf, gf = x.reshape(-1).astype(ct), dy.reshape(-1).astype(ct)
    with _np.errstate(invalid="ignore", over="ignore"):
        if scale is not None:
            gf = gf * scale
        v = xf + (b.astype(ct)[index] if b is not None else ct(0))
        act, alpha, gain = s["act"], ct(s["alpha"]), ct(s["gain"])
        a = _np.where(v > 0, v, v * alpha) if act == "lrelu" else \
            _np.where(v < 0, ct(0), v) if act == "relu" else v
        clamp = -1.0 if s.get("clamp") is None else s["clamp"]
        if clamp >= 0 and clamp_sides != "none":
            u = a * gain if clamp_on == "gained" else a
            ok = _np.ones(u.shape, bool)
            if clamp_sides in ("both", "lower"):
                ok &= u >= ct(-clamp)
            if clamp_sides in ("both", "upper"):
                ok &= u <= ct(clamp)
            gf = _np.where(ok, gf, ct(0))
        gf = gf * gain
        if act == "lrelu":
            gf = _np.where(v > 0, gf, gf * alpha)
        elif act == "relu":
            gf = _np.where(v > 0, gf, ct(0))
    return gf.astype(x.dtype).reshape(x.shape)


def _db(dx, g, golden, index=None):
    """db from a dx: summed per channel in double, rounded once (half
    types: to float, then to the type); in another order: within f32."""
    terms = _np.asarray(dx, _np.float64).reshape(-1)
    index = g.channel if index is None else index
    value = _round_sum(_grouped(terms, index, g.channels), golden["db"].dtype.type)
    return value, _sum_tolerance(terms, index, g.channels, golden["db"].dtype.type, 2.0 ** -23)


def _bias_act_backward(inputs, golden, s, g, ct, scale=None):
    dy, x, b = inputs["dy"], inputs["x"], inputs.get("bias")
    with_db = "db" in golden

    def run(index=None, db_index=None, **k):
        dx = _bias_act_dx(dy, x, b, g.channel if index is None else index, s, ct, scale=scale,
                          **k)
        return {"dx": dx, **({"db": _db(dx, g, golden, db_index)} if with_db else {})}

    base = run()
    if with_db:
        base["db"] = base["db"][0]
    hyps = []
    for what, kind, m in g.channel_maps():
        hyps.append(("bias_axis", "bias indexed by " + what, run(index=m)))
        hyps.append(("bias_axis", "bias indexed, and db summed, by " + what,
                     run(index=m, db_index=m % g.channels)))
    if s.get("clamp") is not None and s["clamp"] >= 0:
        hyps.append(("gain_before_clamp", "the clamp's test on the value before the gain",
                     run(clamp_on="ungained")))
        for sides, what in (("none", "the clamp's gradient not applied"),
                            ("upper", "only the upper clamp's gradient"),
                            ("lower", "only the lower clamp's gradient")):
            hyps.append(("clamp_missing", what, run(clamp_sides=sides)))
    return base, hyps


def _dropout_backward(inputs, golden, s, g, ct):
    """dx = bias_act's backward of dy * (kept ? 1 / (1 - p) : 0): its own
    knobs are the mask's reading and the scale."""
    dy, x, b, mask = inputs["dy"], inputs["x"], inputs.get("bias"), inputs["mask"]
    keep = _np.unpackbits(mask, bitorder="little")[:g.n].astype(bool)

    def run(kept, scale=True):
        k = {key: s[key] for key in ("act", "alpha", "gain", "clamp")}
        p = s["dropout_p"]
        if not scale:  # dy zeroed where dropped, not scaled: p = 0 with the mask applied first
            dyz = _np.where(kept.reshape(dy.shape), dy, dy.dtype.type(0))
            dx, db = _lnp.bias_act_backward(dyz, x, b, **k)
        else:
            dx, db = _lnp.bias_act_dropout_backward(dy, x, _pack(kept), b, dropout_p=p, **k)
        return {"dx": dx, "db": db} if "db" in golden else {"dx": dx}

    base = run(keep)
    flipped = _np.unpackbits(_np.packbits(keep.astype(_np.uint8), bitorder="big"),
                             bitorder="little")[:g.n].astype(bool)
    hyps = [("dropout_scale_missing", "dy not scaled by 1 / (1 - p) where kept", run(keep, False)),
            ("mask_bit_order", "the mask's bits read most significant first", run(flipped))]
    for where, pos in g.restart_positions():
        hyps.append(("mask_offset_per_core", "the mask read from bit 0 again at " + where,
                     run(keep[pos])))
    return base, hyps


def _judge(names, golden, got, wrong, hyps, ulps):
    """The hypotheses that explain every wrong element of every output, as
    (collateral, kind, description): collateral counts the elements the
    model would change that the kernel got right (fewer: the closer fit)."""
    total = sum(int(w.sum()) for w in wrong.values())
    accepted = []
    for kind, what, predicted in hyps:
        explained, collateral = 0, 0
        for name in names:
            pred = predicted.get(name, golden[name])
            k = _np.asarray(got.get(name, golden[name]))
            u = ulps if name in ("y", "dx") else 0
            match = _matches(k, pred, u)
            if match is None:
                break
            if isinstance(pred, tuple) and name not in ("y", "dx"):
                # Within its tolerance a sum explains only what it tells
                # apart from the golden (a grouping one element off is not
                # a cause).
                apart = ~_near(_value(pred), golden[name], _np.broadcast_to(
                    _np.asarray(pred[1], _np.float64).reshape(-1), golden[name].reshape(-1).shape))
                match = match & apart
            explained += int((wrong[name] & match).sum())
            differs = ~_same(_np.asarray(_value(pred)), golden[name], u)
            collateral += int((differs & ~wrong[name]).sum())
        else:
            if explained == total:
                accepted.append((collateral, kind, what))
    accepted.sort(key=lambda a: a[0])
    return accepted


def explain(op, direction, dtype, inputs, golden, results, scalars, shape, regions, max_ulp):
    """The family's value findings: [(kind, message, details)] (empty: none
    of the models explains the kernel's output). `golden` and `results`
    are the outputs by name, in leaky/family.h's order."""
    # The models overflow, divide by zero and meet NaNs as the op does: not
    # the user's warnings.
    with _np.errstate(all="ignore"):
        return _explain(op, direction, dtype, inputs, golden, results, scalars, shape, regions,
                        max_ulp)


def _explain(op, direction, dtype, inputs, golden, results, scalars, shape, regions, max_ulp):
    g = _Geometry(shape, regions)
    dt = {"f16": _np.float16, "f32": _np.float32, "f64": _np.float64}.get(dtype)
    if dt is None:
        return []  # bf16 and the 8-bit types: not modelled
    ct = _ct(dt)
    names = list(golden)
    got = dict(zip(names, results))
    ulps = 4 + max_ulp if op == "elu" else 0
    prelu_bwd = op == "prelu" and direction == "backward" and "dweight" in got
    if prelu_bwd and _np.asarray(got["dweight"]).shape != golden["dweight"].shape:
        found = _prelu_dweight_shape(_np.asarray(got["dweight"]), inputs, g, ct)
        dx_right = _np.all(_same(_np.asarray(got["dx"]), golden["dx"]))
        return [found + ({"output": "dweight"},)] if found and dx_right else []
    models = {"prelu": _prelu, "elu": _elu}
    if op == "rrelu":
        base, hyps = _rrelu(direction, inputs, golden, scalars, g, ct, results[:1])
    elif op in models:
        base, hyps = models[op](direction, inputs, golden, scalars, g, ct)
    elif op in ("bias_act", "bias_act_dropout"):
        base, hyps = _bias_act_op(op, direction, inputs, golden, scalars, g, ct,
                                  results[1] if len(results) > 1 and "mask" in golden else None)
    else:
        return []
    if base is None:
        return []
    # The models are trusted only if, with no fault, they are the library.
    for name, value in base.items():
        same = _same(_np.asarray(value), golden[name], ulps if name in ("y", "dx") else 0)
        if same is None or not same.all():
            return []
    wrong = {}
    for name in names:
        k = _np.asarray(got.get(name, golden[name]))
        same = _same(k, golden[name], ulps if name in ("y", "dx") else 0)
        if same is None:
            return []  # another shape or dtype: check_op says so
        wrong[name] = ~same
    if not any(w.any() for w in wrong.values()):
        return []
    where = {name: int(w.sum()) for name, w in wrong.items() if w.any()}
    counts = ", ".join("%s %d of %d" % (name, c, golden[name].size) for name, c in where.items())
    first_output = next(iter(where))
    first = int(_np.nonzero(wrong[first_output])[0][0])
    details = {"output": first_output, "index": first, "counts": where}
    accepted = _judge(names, golden, got, wrong, hyps, ulps)
    if not accepted and prelu_bwd and not wrong["dx"].any():
        # dweight's own faults where dx is right: part of each sum, or a
        # sum in the half type (judged by size, not by bits).
        found = _dweight_sums(_np.asarray(got["dweight"]), inputs, golden["dweight"], g, ct, dt)
        return [found + (dict(details),)] if found else []
    if not accepted:
        return []
    best = accepted[0][0]
    kinds = []
    for collateral, kind, what in accepted:
        if collateral == best and kind not in [k for k, _ in kinds]:
            kinds.append((kind, what))
    if len(kinds) > 1:
        return [("ambiguous", "the wrong elements (%s) fit %s equally; check each" % (
            counts, "; ".join("%s (%s)" % (k, w) for k, w in kinds)),
            dict(details, candidates=[k for k, _ in kinds]))]
    kind, what = kinds[0]
    return [(kind, "%s: %s (%s wrong, the first at %d)" % (KINDS[kind], what, counts, first),
             details)]

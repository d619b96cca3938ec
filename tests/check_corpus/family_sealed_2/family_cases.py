"""Sealed test set 2: NumPy kernels for leaky's PReLU, ELU, RReLU, bias_act and
bias_act_dropout, forward and backward, written the way an engineer porting
them to an AI accelerator (CANN style) would: the flattened elements are split
evenly over `cores` (core k takes [k * step, k * step + len), step = total //
cores, the last core also the remainder) and every core walks its range tile
by tile (the last tile short). Each kernel's geometry is recorded by @plan.

Most kernels carry one mistake, marked `# FAULT` on the faulty line; the rest
are correct and must equal leaky.numpy bit for bit (ELU: within its ulp bound).
The shared helpers below (plan, core_ranges, tiles, compute_type, the Philox
stream and the dropout draws, bias_act's defaults) are correct.

Calling convention (leaky/family.h order, scalars as keywords):
    elu       fn(x, alpha, scale, input_scale)                fn(dy, x, alpha, scale, input_scale)
    prelu     fn(x, weight)                                   fn(dy, x, weight) -> (dx, dweight)
    rrelu     fn(x, lower, upper, training, seed, offset)     fn(dy, x, lower, upper, training, seed, offset)
    bias_act  fn(x, bias, act, alpha, gain, clamp)            fn(dy, x, bias, act, alpha, gain, clamp) -> (dx, db)
    bias_act_dropout  fn(x, bias, act, alpha, gain, clamp, dropout_p, seed, offset) -> (y, mask)
                      fn(dy, x, bias, mask, act, alpha, gain, clamp, dropout_p) -> (dx, db)
PReLU's and bias_act's x is [outer, channels, inner].
"""
import math

import numpy as np

# --------------------------------------------------------------------------
# shared helpers (correct)
# --------------------------------------------------------------------------


def plan(cores, tile_elems, split="even", buffers=2):
    """Records the geometry a kernel really uses (checked against the JSON)."""
    def wrap(fn):
        fn.plan = {"split": split, "cores": cores, "tile_elems": tile_elems, "buffers": buffers}
        return fn
    return wrap


def core_ranges(total, cores):
    """[(begin, length)] of the even split: step = total // cores, the last
    core also takes the remainder."""
    step = total // cores
    ranges = []
    for k in range(cores):
        length = step + (total - step * cores if k == cores - 1 else 0)
        ranges.append((k * step, length))
    return ranges


def tiles(begin, length, tile_elems):
    """(start, count) of each tile of a core's range; the last may be short."""
    pos, end = begin, begin + length
    while pos < end:
        count = min(tile_elems, end - pos)
        yield pos, count
        pos += count


def compute_type(dtype):
    """f64 computes in f64; f32 and f16 in f32."""
    return np.float64 if np.dtype(dtype) == np.float64 else np.float32


def bias_act_defaults(act, alpha, gain):
    """StyleGAN's defaults, as leaky.numpy: linear gain 1; relu gain sqrt(2);
    lrelu alpha 0.2, gain sqrt(2)."""
    if alpha is None:
        alpha = 0.2
    if gain is None:
        gain = 1.0 if act == "linear" else math.sqrt(2.0)
    return float(alpha), float(gain)


def clamp_value(clamp):
    """None (or < 0) means no clamp."""
    return None if clamp is None or clamp < 0 else float(clamp)


_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
_LO32 = np.uint64(0xFFFFFFFF)
_SH32 = np.uint64(32)


def philox4x32_10(ctr_lo, ctr_hi, seed):
    """Philox4x32-10 on counters {lo, hi, 0, 0} with key {seed lo, seed hi}:
    the four output words as uint32 arrays."""
    c0 = np.asarray(ctr_lo, np.uint64)
    c1 = np.asarray(ctr_hi, np.uint64)
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
        p0, p1 = _M0 * c0, _M1 * c2
        c0, c1, c2, c3 = ((p1 >> _SH32) ^ c1 ^ np.uint64(k0), p1 & _LO32,
                          (p0 >> _SH32) ^ c3 ^ np.uint64(k1), p0 & _LO32)
    return [c.astype(np.uint32) for c in (c0, c1, c2, c3)]


def stream_words(seed, positions):
    """Word s of the stream of `seed` for each s in positions (uint64): word
    (s % 64) // 16 of Philox on counter (s // 64) * 16 + s % 16."""
    s = np.asarray(positions, np.uint64)
    ctr = (s >> np.uint64(6)) * np.uint64(16) + (s & np.uint64(15))
    which = (s & np.uint64(63)) >> np.uint64(4)
    words = philox4x32_10(ctr & _LO32, ctr >> _SH32, int(seed))
    out = np.empty(s.shape, np.uint32)
    for k in range(4):
        sel = which == k
        out[sel] = words[k][sel]
    return out


def positions(offset, start, count):
    """Stream positions offset + start ... offset + start + count - 1."""
    return np.uint64(offset) + np.arange(start, start + count, dtype=np.uint64)


def dropout_bits(seed, pos):
    """Dropout's 16-bit draw at each stream position: the low (s % 128 < 64)
    or high half of word 64 * (s // 128) + s % 64."""
    s = np.asarray(pos, np.uint64)
    word_pos = np.uint64(64) * (s >> np.uint64(7)) + (s & np.uint64(63))
    words = stream_words(seed, word_pos)
    high = (s & np.uint64(127)) >= np.uint64(64)
    return np.where(high, words >> np.uint32(16), words & np.uint32(0xFFFF))


def keep_threshold(p):
    """An element is kept when its 16 bits are >= ceil(p * 2^16)."""
    return math.ceil(float(p) * 65536.0)


def uniform_from_words(words, ct):
    """RReLU's u: (w >> 8) * 2^-24 in f32 compute, w * 2^-32 in f64."""
    if ct == np.float64:
        return words.astype(np.float64) * 2.0 ** -32
    return (words >> np.uint32(8)).astype(np.float32) * np.float32(2.0 ** -24)


# --------------------------------------------------------------------------
# PReLU
# --------------------------------------------------------------------------


@plan(cores=4, tile_elems=1024)
def prelu_fwd_channel_runs(x, weight):
    """PReLU forward over NCHW [outer, channels, inner]. Each core walks its
    range in tiles of 1024; inside a tile the elements are processed in runs
    that share one channel, so each run is one vector compare and one vector
    multiply by a scalar weight (a Muls on the device). The run boundaries
    come from the channel plane size."""
    shape = x.shape
    channels = shape[1]
    flat = x.reshape(-1)
    total = flat.size
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    plane = total // channels  # FAULT: numel / C is the plane H*W only when outer == 1
    y = np.empty_like(flat)
    for begin, length in core_ranges(total, 4):
        for t0, n in tiles(begin, length, 1024):
            pos, stop = t0, t0 + n
            while pos < stop:
                c = (pos // plane) % channels
                run_end = min(stop, (pos // plane + 1) * plane)
                seg = flat[pos:run_end].astype(ct)
                with np.errstate(over="ignore", invalid="ignore"):
                    y[pos:run_end] = np.where(seg > 0, seg, seg * w[c]).astype(x.dtype)
                pos = run_end
    return y.reshape(shape)


@plan(cores=3, tile_elems=768)
def prelu_fwd_remainder_routine(x, weight):
    """PReLU forward, f16 data computed in f32. Full tiles gather each
    element's weight through a channel-index vector; the short last tile of
    each core goes through a separate remainder routine (the device's
    unaligned-tail path)."""
    outer, channels = x.shape[0], x.shape[1]
    inner = x.size // (outer * channels)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    wv = np.asarray(weight).reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    with np.errstate(over="ignore", invalid="ignore"):
        for begin, length in core_ranges(flat.size, 3):
            full = length // 768
            for j in range(full):
                s = begin + j * 768
                ch = (np.arange(s, s + 768) // inner) % channels
                xv = flat[s:s + 768].astype(ct)
                y[s:s + 768] = np.where(xv > 0, xv, wv[ch] * xv).astype(x.dtype)
            rem = length - full * 768
            if rem:
                s = begin + full * 768
                xv = flat[s:s + rem].astype(ct)
                slope = wv[0]  # FAULT: remainder routine copied from the single-slope LeakyReLU kernel
                y[s:s + rem] = np.where(xv > 0, xv, slope * xv).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=512)
def prelu_bwd_running_sums(dy, x, weight):
    """PReLU backward. dx elementwise per tile. dweight: per-channel running
    sums in double carried through the tiles in memory order (core 0's tiles
    first), each channel run of a tile folded in with a sequential
    accumulate, so the sum has the library's fixed (outer, inner) order."""
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    acc = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 512):
            acc = np.zeros(channels, np.float64)  # FAULT: accumulator cleared per tile instead of once
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            ch = (np.arange(t0, t0 + n) // inner) % channels
            dx[t0:t0 + n] = np.where(xv > 0, gv, w[ch] * gv).astype(dy.dtype)
            prod = np.where(xv > 0, ct(0), xv * gv).astype(np.float64)
            cuts = np.flatnonzero(np.diff(ch)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n]):
                c = ch[lo]
                acc[c] = np.add.accumulate(np.r_[acc[c], prod[lo:hi]])[-1]
    dweight = acc.astype(ct).astype(np.asarray(weight).dtype)
    return dx.reshape(shape), dweight


@plan(cores=2, tile_elems=1000)
def prelu_bwd_workspace_reduce(dy, x, weight):
    """PReLU backward in two passes, as on the device: pass 1 (2 cores, tiles
    of 1000) writes dx and the per-element products x * dy (0 where x > 0)
    to a workspace in global memory; pass 2 reduces the workspace per
    channel, sequentially in double."""
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    ws = np.empty(xf.size, ct)
    for begin, length in core_ranges(xf.size, 2):
        for t0, n in tiles(begin, length, 1000):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            wv = w[(np.arange(t0, t0 + n) // inner) % channels]
            dx[t0:t0 + n] = np.where(xv > 0, gv, wv * gv).astype(dy.dtype)
            ws[t0:t0 + n] = np.where(xv > 0, ct(0), xv * gv)
    rows = ws.reshape(channels, -1)  # FAULT: channel-major view; the workspace is [outer, channels, inner]
    dweight = np.add.accumulate(rows.astype(np.float64), axis=1)[:, -1]
    return dx.reshape(shape), dweight.astype(ct).astype(np.asarray(weight).dtype)


@plan(cores=4, tile_elems=128)
def prelu_bwd_scalar_loop(dy, x, weight):
    """PReLU backward written as scalar code (the device's scalar unit):
    each core walks its range tile by tile and element by element; dx per
    element, and each product x * dy (f32 for half data) added to its
    channel's dweight accumulator."""
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1)
    dx = np.empty_like(dyf)
    dw = np.zeros_like(w)  # FAULT: accumulator takes weight's dtype (f16)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 128):
            for i in range(t0, t0 + n):
                c = (i // inner) % channels
                xi, gi = ct(xf[i]), ct(dyf[i])
                if xi > 0:
                    dx[i] = gi
                else:
                    dx[i] = ct(w[c]) * gi
                    dw[c] += np.float64(xi * gi)
    dweight = np.asarray(dw, np.float64).astype(ct).astype(w.dtype)
    return dx.reshape(shape), dweight


@plan(cores=2, tile_elems=1024)
def prelu_bwd_relu_split(dy, x, weight):
    """PReLU backward from the split form y = relu(x) - w * relu(-x):
    dx = dy where x > 0, else w * dy; d/dw of -w * relu(-x) gives dweight.
    Per-element terms go to a workspace tile by tile; the per-channel sums
    are cumulative sums in double over (outer, inner)."""
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    term = np.empty(xf.size, ct)
    for begin, length in core_ranges(xf.size, 2):
        for t0, n in tiles(begin, length, 1024):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            wv = w[(np.arange(t0, t0 + n) // inner) % channels]
            dx[t0:t0 + n] = np.where(xv > 0, gv, wv * gv).astype(dy.dtype)
            term[t0:t0 + n] = np.maximum(-xv, ct(0)) * gv  # FAULT: d/dw of -w * relu(-x) is -relu(-x) * dy
    per_channel = np.moveaxis(term.reshape(shape), 1, 0).reshape(channels, -1)
    dweight = np.cumsum(per_channel.astype(np.float64), axis=1)[:, -1]
    return dx.reshape(shape), dweight.astype(ct).astype(np.asarray(weight).dtype)


@plan(cores=3, tile_elems=256)
def prelu_bwd_slope_map(dy, x, weight):
    """PReLU backward, f16 data in f32. Each tile builds a slope map
    (1 where x > 0, else the channel's weight) and multiplies dy by it; the
    tile's dweight terms are kept in a workspace. dweight is then gathered
    channel by channel (np.flatnonzero gives each channel's positions in
    memory order, i.e. (outer, inner) order) and folded sequentially in
    double."""
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    chan = (np.arange(xf.size) // inner) % channels
    dx = np.empty_like(dyf)
    terms = np.zeros(xf.size, ct)
    for begin, length in core_ranges(xf.size, 3):
        for t0, n in tiles(begin, length, 256):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            slope = np.where(xv > 0, ct(1), w[chan[t0:t0 + n]])
            dx[t0:t0 + n] = (slope * gv).astype(dy.dtype)
            np.copyto(terms[t0:t0 + n], xv * gv, where=~(xv > 0))
    dweight = np.empty(channels, np.float64)
    for c in range(channels):
        dweight[c] = np.add.accumulate(terms[np.flatnonzero(chan == c)].astype(np.float64))[-1]
    return dx.reshape(shape), dweight.astype(ct).astype(np.asarray(weight).dtype)


# --------------------------------------------------------------------------
# ELU
# --------------------------------------------------------------------------

# The device's vector instructions, one NumPy call each (dst = op(src)).
def _vmuls(a, s):
    return a * s


def _vexp(a):
    return np.exp(a)


def _vadds(a, s):
    return a + s


def _vselect(mask, a, b):
    return np.where(mask, a, b)


@plan(cores=4, tile_elems=1000)
def elu_fwd_instruction_sequence(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward written as the device's instruction sequence per tile:
    Muls (x * input_scale), Exp, Adds (-1), Muls (alpha * scale) for the
    negative side, Muls (scale) for the positive side, then Select on
    x <= 0. 4 cores, tiles of 1000, f32 compute."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = ct(alpha) * ct(scale)
    y = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 1000):
                xv = flat[t0:t0 + n].astype(ct)
                t = _vmuls(xv, ct(input_scale))
                e = _vadds(_vexp(t), ct(-1))  # FAULT: exp(t) - 1 loses every digit near 0: expm1(t)
                neg = _vmuls(e, coef)
                pos = _vmuls(xv, ct(scale))
                y[t0:t0 + n] = _vselect(xv <= 0, neg, pos).astype(x.dtype)
    return y.reshape(x.shape)


def _elu_grad_tile(dy_t, x_t, alpha, scale, input_scale, ct):
    """One tile of ELU's gradient from the input: the negative side is
    dy * input_scale * (alpha * scale) * exp(x * input_scale), multiplied
    left to right in the compute type, exp taken in double and rounded."""
    coef = ct(alpha) * ct(scale)
    t = x_t * ct(input_scale)
    e = np.exp(t.astype(np.float64)).astype(ct)
    neg = dy_t * ct(input_scale) * coef * e
    return np.where(x_t <= 0, neg, dy_t * ct(scale))


@plan(cores=8, tile_elems=384)
def elu_bwd_tile_helper(dy, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU backward (from the input), 8 cores, tiles of 384, through a shared
    per-tile gradient helper _elu_grad_tile(dy, x, alpha, scale,
    input_scale)."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    dx = np.empty_like(dyf)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(xf.size, 8):
            for t0, n in tiles(begin, length, 384):
                xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
                g = _elu_grad_tile(gv, xv, scale, alpha, input_scale, ct)  # FAULT: (scale, alpha) for (alpha, scale)
                dx[t0:t0 + n] = g.astype(dy.dtype)
    return dx.reshape(dy.shape)


@plan(cores=3, tile_elems=256)
def elu_fwd_scalar_libm(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward in f64 as scalar code: every element goes through libm's
    expm1 (math.expm1) on the scalar unit, 3 cores, tiles of 256."""
    flat = x.reshape(-1)
    coef = float(alpha) * float(scale)
    y = np.empty_like(flat)
    for begin, length in core_ranges(flat.size, 3):
        for t0, n in tiles(begin, length, 256):
            for i in range(t0, t0 + n):
                v = float(flat[i])
                if v <= 0:
                    t = v  # FAULT: the exponent's argument is x * input_scale
                    y[i] = (math.expm1(t) + 0.0) * coef  # + 0.0: ELU(-0) is +0, as PyTorch
                else:
                    y[i] = v * float(scale)
    return y.reshape(x.shape)


@plan(cores=2, tile_elems=1024)
def elu_fwd_prescaled(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, f16 data in f32: each tile is scaled by input_scale once
    on load (t = x * input_scale), then the branch is taken on t; expm1 is
    evaluated in double and rounded to f32."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = ct(alpha) * ct(scale)
    y = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(flat.size, 2):
            for t0, n in tiles(begin, length, 1024):
                xv = flat[t0:t0 + n].astype(ct)
                t = xv * ct(input_scale)
                e = (np.expm1(t.astype(np.float64)) + 0.0).astype(ct)
                pos = t * ct(scale)  # FAULT: the positive side is x * scale, not (x * input_scale) * scale
                y[t0:t0 + n] = np.where(t <= 0, e * coef, pos).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=512)
def elu_fwd_two_phase(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, 4 cores, tiles of 512, in two phases: every core first
    computes its whole range into a local result buffer (negative side in
    double, rounded once), queued in a list; then the buffers are copied
    out to global memory core by core."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = np.float64(ct(alpha) * ct(scale))
    ranges = core_ranges(flat.size, 4)
    results = []
    with np.errstate(all="ignore"):
        for begin, length in ranges:
            buf = np.empty(length, x.dtype)
            for t0, n in tiles(begin, length, 512):
                xv = flat[t0:t0 + n].astype(ct)
                t = (xv * ct(input_scale)).astype(np.float64)
                neg = ((np.expm1(t) + 0.0) * coef).astype(ct)
                buf[t0 - begin:t0 - begin + n] = np.where(xv <= 0, neg, xv * ct(scale))
            results.append(buf)
    y = np.zeros_like(flat)
    for begin, length in ranges:
        buf = results.pop()  # FAULT: pop() takes the last core's buffer; the queue is FIFO: pop(0)
        y[begin:begin + length] = buf
    return y.reshape(x.shape)


@plan(cores=3, tile_elems=1000)
def elu_fwd_lockstep_cores(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, 3 cores in lock step: step j gathers tile j of every
    core into one [cores, 1000] block (lanes past a core's end masked off),
    evaluates it in double and rounds once to the data type; the last
    core's longer range just takes more steps."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = np.float64(ct(alpha) * ct(scale))
    s = np.float64(ct(scale))
    isc = ct(input_scale)
    ranges = core_ranges(flat.size, 3)
    begins = np.array([b for b, _ in ranges])
    ends = begins + np.array([n for _, n in ranges])
    y = np.empty_like(flat)
    lane = np.arange(1000)
    step = 0
    with np.errstate(all="ignore"):
        while True:
            idx = begins[:, None] + step * 1000 + lane[None, :]
            live = idx < ends[:, None]
            if not live.any():
                break
            xv = flat[np.where(live, idx, 0)].astype(ct)
            t = (xv * isc).astype(np.float64)
            neg = (np.expm1(t) + 0.0) * coef
            pos = xv.astype(np.float64) * s
            block = np.where(xv <= 0, neg, pos).astype(ct).astype(x.dtype)
            y[idx[live]] = block[live]
            step += 1
    return y.reshape(x.shape)


# --------------------------------------------------------------------------
# RReLU
# --------------------------------------------------------------------------


@plan(cores=5, tile_elems=640)
def rrelu_bwd_core_stream(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU backward: the slopes are drawn again from (seed, offset), so no
    noise tensor is needed. 5 cores, tiles of 640; each core sets up its
    Philox counter once and advances it tile by tile."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    dx = np.empty_like(dyf)
    for begin, length in core_ranges(xf.size, 5):
        core_pos = 0  # FAULT: the core's counter starts at offset + 0, not offset + begin
        for t0, n in tiles(begin, length, 640):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            if training:
                u = uniform_from_words(stream_words(seed, positions(offset, core_pos, n)), ct)
                r = lo + u * (up - lo)
            else:
                r = ct((float(lower) + float(upper)) / 2)
            core_pos += n
            dx[t0:t0 + n] = np.where(xv <= 0, gv * r, gv).astype(dy.dtype)
    return dx.reshape(dy.shape)


@plan(cores=3, tile_elems=500)
def rrelu_fwd_with_noise(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward returning (y, noise) in training, y in evaluation.
    3 cores, tiles of 500, f64. The evaluation slope is set up once at
    kernel start; in training each tile draws its slopes and writes the
    noise tile next to y."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    slope = ct((float(lower) + float(upper)) / 2)
    y = np.empty_like(flat)
    noise = np.empty_like(flat) if training else None
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 3):
            for t0, n in tiles(begin, length, 500):
                xv = flat[t0:t0 + n].astype(ct)
                neg = xv <= 0
                if training:
                    u = uniform_from_words(stream_words(seed, positions(offset, t0, n)), ct)
                    r = lo + u * (up - lo)
                    noise[t0:t0 + n] = np.where(neg, r, ct(1)).astype(x.dtype)
                    y[t0:t0 + n] = np.where(neg, xv * slope, xv).astype(x.dtype)  # FAULT: y uses the eval slope, not r
                else:
                    y[t0:t0 + n] = np.where(xv > 0, xv, xv * slope).astype(x.dtype)
    if training:
        return y.reshape(x.shape), noise.reshape(x.shape)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=512)
def rrelu_bwd_descending_interp(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0,
                                offset=0):
    """RReLU backward, f16 data in f32, 4 cores, tiles of 512: each tile
    redraws its words, turns them into u and interpolates the slope between
    the bounds."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    dx = np.empty_like(dyf)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 512):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            if training:
                u = uniform_from_words(stream_words(seed, positions(offset, t0, n)), ct)
                r = up + u * (lo - up)  # FAULT: lower and upper swapped: r = lower + u * (upper - lower)
            else:
                r = ct((float(lower) + float(upper)) / 2)
            dx[t0:t0 + n] = np.where(xv <= 0, gv * r, gv).astype(dy.dtype)
    return dx.reshape(dy.shape)


@plan(cores=3, tile_elems=768)
def rrelu_fwd_pipelined(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward, f16 in f32, 3 cores, tiles of 768, software-pipelined:
    the output starts as a copy of x (so the kernel also runs in place), the
    prologue loads tile 0, and the steady-state loop computes and stores."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    y = flat.copy()
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 3):
            tl = list(tiles(begin, length, 768))
            buf = flat[tl[0][0]:tl[0][0] + tl[0][1]].astype(ct)  # prologue: CopyIn(tile 0)
            for j in range(1, len(tl)):  # FAULT: steady state starts at tile 1; tile 0 is never computed
                t0, n = tl[j]
                buf = flat[t0:t0 + n].astype(ct)
                if training:
                    u = uniform_from_words(stream_words(seed, positions(offset, t0, n)), ct)
                    r = lo + u * (up - lo)
                    y[t0:t0 + n] = np.where(buf <= 0, buf * r, buf).astype(x.dtype)
                else:
                    s = ct((float(lower) + float(upper)) / 2)
                    y[t0:t0 + n] = np.where(buf > 0, buf, buf * s).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=1000)
def rrelu_fwd_counter_blocks(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward returning (y, noise) in training (y alone in
    evaluation), 4 cores, tiles of 1000. Each tile runs Philox once per
    distinct counter it touches (np.unique over the tile's counters, every
    call giving four words) and picks its words out with the inverse index;
    u = ldexp(w >> 8, -24)."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    y = np.empty_like(flat)
    noise = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 1000):
                xv = flat[t0:t0 + n].astype(ct)
                if not training:
                    s = ct((float(lower) + float(upper)) / 2)
                    y[t0:t0 + n] = np.where(xv > 0, xv, xv * s).astype(x.dtype)
                    continue
                s = positions(offset, t0, n)
                ctr = (s >> np.uint64(6)) * np.uint64(16) + (s & np.uint64(15))
                uniq, inv = np.unique(ctr, return_inverse=True)
                block = np.stack(philox4x32_10(uniq & _LO32, uniq >> _SH32, int(seed)), axis=1)
                w = block[inv, ((s & np.uint64(63)) >> np.uint64(4)).astype(np.intp)]
                if ct == np.float64:
                    u = np.ldexp(w.astype(np.float64), -32)
                else:
                    u = np.ldexp((w >> np.uint32(8)).astype(np.float32), np.int32(-24)).astype(np.float32)
                r = lo + u * (up - lo)
                pos = ~(xv <= 0)
                yt = xv * r
                yt[pos] = xv[pos]
                nt = r.copy()
                nt[pos] = ct(1)
                y[t0:t0 + n] = yt.astype(x.dtype)
                noise[t0:t0 + n] = nt.astype(x.dtype)
    if training:
        return y.reshape(x.shape), noise.reshape(x.shape)
    return y.reshape(x.shape)


# --------------------------------------------------------------------------
# bias_act
# --------------------------------------------------------------------------


@plan(cores=4, tile_elems=512)
def bias_act_bwd_recompute(dy, x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act backward, 4 cores, tiles of 512. Each tile recomputes the
    forward (v = x + b, the activation) to get the clamp's pass mask and the
    activation's derivative, then walks the chain back: clamp, gain,
    activation. db: per-channel sums of dx in double, carried through the
    tiles in memory order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 512):
            ch = (np.arange(t0, t0 + n) // inner) % channels
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            if act == "lrelu":
                u = np.where(v > 0, v, v * a)
            elif act == "relu":
                u = np.where(v < 0, ct(0), v)
            else:
                u = v
            g = dyf[t0:t0 + n].astype(ct)
            if lim is not None:
                c = ct(lim)
                g = np.where((u >= -c) & (u <= c), g, ct(0))  # FAULT: the clamp sees u * gain, not u
            g = g * gn
            if act == "lrelu":
                g = np.where(v > 0, g, g * a)
            elif act == "relu":
                g = np.where(u <= 0, ct(0), g)
            dxt = g.astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            for c_ in np.unique(ch):
                db[c_] = np.add.accumulate(np.r_[db[c_], dxt[ch == c_].astype(np.float64)])[-1]
    return dx.reshape(shape), db.astype(ct).astype(x.dtype)


@plan(cores=4, tile_elems=384)
def bias_act_fwd_tail_routine(x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act forward, f16 in f32, 4 cores, tiles of 384. Full tiles run
    the vector path (Adds bias, activation, Muls gain, Mins/Maxs clamp);
    the short last tile of each core is finished by a separate tail routine
    working on a padded scratch buffer."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)

    def activate(v):
        if act == "lrelu":
            return np.where(v > 0, v, v * a)
        if act == "relu":
            return np.where(v < 0, ct(0), v)
        return v

    def clamp_(u):
        if lim is None:
            return u
        c = ct(lim)
        u = np.where(u < -c, -c, u)
        return np.where(u > c, c, u)

    y = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 384):
                ch = (np.arange(t0, t0 + n) // inner) % channels
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[ch]
                if n == 384:
                    y[t0:t0 + n] = clamp_(activate(v) * gn).astype(x.dtype)
                else:
                    scratch = np.zeros(384, ct)
                    scratch[:n] = v
                    scratch = activate(scratch) * gn  # FAULT: the tail routine never clamps
                    y[t0:t0 + n] = scratch[:n].astype(x.dtype)
    return y.reshape(shape)


@plan(cores=6, tile_elems=448)
def bias_act_fwd_param_block(x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act forward in f64, 6 cores, tiles of 448. The host packs the
    scalars into a tiling-parameter block (missing ones take StyleGAN's
    defaults) that every core reads; each tile is computed per channel run."""
    params = {
        "alpha": float(alpha or 0.2),  # FAULT: `or` also replaces an explicit alpha = 0.0 by 0.2
        "gain": bias_act_defaults(act, alpha, gain)[1],
        "clamp": clamp_value(clamp),
    }
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(params["alpha"]), ct(params["gain"])
    y = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 6):
            for t0, n in tiles(begin, length, 448):
                pos = t0
                while pos < t0 + n:
                    c = (pos // inner) % channels
                    end = min(t0 + n, (pos // inner + 1) * inner)
                    v = flat[pos:end].astype(ct)
                    if b is not None:
                        v = v + b[c]
                    if act == "lrelu":
                        v = np.where(v > 0, v, v * a)
                    elif act == "relu":
                        v = np.where(v < 0, ct(0), v)
                    v = v * gn
                    if params["clamp"] is not None:
                        lim = ct(params["clamp"])
                        v = np.where(v < -lim, -lim, v)
                        v = np.where(v > lim, lim, v)
                    y[pos:end] = v.astype(x.dtype)
                    pos = end
    return y.reshape(shape)


@plan(cores=4, tile_elems=1024)
def bias_act_bwd_aligned_store(dy, x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act backward, 4 cores, tiles of 1024, with the device's 32-byte
    DataCopy granularity: each tile's dx goes out with DataCopy, whose
    length must be a whole number of 32-byte blocks. db is summed from the
    tile registers (double, memory order)."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    per_block = 32 // x.dtype.itemsize
    dx = np.zeros_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 1024):
            ch = (np.arange(t0, t0 + n) // inner) % channels
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = np.where(v > 0, v, v * a) if act == "lrelu" else (
                np.where(v < 0, ct(0), v) if act == "relu" else v)
            g = dyf[t0:t0 + n].astype(ct)
            if lim is not None:
                pre = u * gn
                g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
            g = g * gn
            if act == "lrelu":
                g = np.where(v > 0, g, g * a)
            elif act == "relu":
                g = np.where(u <= 0, ct(0), g)
            reg = g.astype(dy.dtype)
            for c_ in np.unique(ch):
                db[c_] = np.add.accumulate(np.r_[db[c_], reg[ch == c_].astype(np.float64)])[-1]
            copy_len = n // per_block * per_block  # FAULT: a short tile needs DataCopyPad; the last n % 8 are dropped
            dx[t0:t0 + copy_len] = reg[:copy_len]
    return dx.reshape(shape), db.astype(ct).astype(x.dtype)


# --------------------------------------------------------------------------
# bias_act + dropout
# --------------------------------------------------------------------------


def _pack_tile_bits(mask, start, keep):
    """ORs one tile's keep bits into the mask at element `start` (any bit
    offset): bit i % 8 of byte i // 8."""
    idx = start + np.arange(keep.size)
    np.bitwise_or.at(mask, idx >> 3, (keep.astype(np.uint8) << (idx & 7).astype(np.uint8)))


@plan(cores=4, tile_elems=512)
def bias_act_dropout_fwd_shape_unpack(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                                      dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward, 4 cores, tiles of 512: the tiling data
    unpacks x's shape, each tile computes bias_act, draws its 16-bit keep
    decisions from the stream and ORs the tile's bits into the mask."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    inner, channels, outer = x.shape  # FAULT: x is [outer, channels, inner]
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = ct(1) / ct(1 - float(dropout_p))
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 512):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                if act == "lrelu":
                    v = np.where(v > 0, v, v * a)
                elif act == "relu":
                    v = np.where(v < 0, ct(0), v)
                v = v * gn
                if lim is not None:
                    v = np.where(v < -ct(lim), -ct(lim), v)
                    v = np.where(v > ct(lim), ct(lim), v)
                keep = dropout_bits(seed, positions(offset, t0, n)) >= thr
                y[t0:t0 + n] = (v * np.where(keep, scale, ct(0))).astype(x.dtype)
                _pack_tile_bits(mask, t0, keep)
    return y.reshape(x.shape), mask


@plan(cores=2, tile_elems=1024)
def bias_act_dropout_fwd_select(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                                dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward, f16 in f32, 2 cores, tiles of 1024. The
    drop is a Select between u and u * 0 (u * 0, not 0, so that a NaN or
    infinite u gives NaN when dropped, as PyTorch); the mask is packed at the
    end from the keep array."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    keep_all = np.zeros(flat.size, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 2):
            for t0, n in tiles(begin, length, 1024):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                if act == "lrelu":
                    v = np.where(v > 0, v, v * a)
                elif act == "relu":
                    v = np.where(v < 0, ct(0), v)
                v = v * gn
                if lim is not None:
                    v = np.where(v < -ct(lim), -ct(lim), v)
                    v = np.where(v > ct(lim), ct(lim), v)
                keep = dropout_bits(seed, positions(offset, t0, n)) >= thr
                keep_all[t0:t0 + n] = keep
                y[t0:t0 + n] = np.where(keep, v, v * ct(0)).astype(x.dtype)  # FAULT: kept values need * 1 / (1 - p)
    return y.reshape(shape), np.packbits(keep_all, bitorder="little")


@plan(cores=4, tile_elems=256)
def bias_act_dropout_fwd_tile_bytes(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                                    dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward in f64, 4 cores, tiles of 256 (a multiple
    of 8, so a tile's keep bits fill whole bytes): each tile folds its keep
    flags into bytes (bit j % 8 of byte j // 8 of the tile) and ORs them into
    the mask at the tile's byte address."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = ct(1) / ct(1 - float(dropout_p))
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    weights = (1 << np.arange(8)).astype(np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 256):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                if act == "lrelu":
                    v = np.where(v > 0, v, v * a)
                elif act == "relu":
                    v = np.where(v < 0, ct(0), v)
                v = v * gn
                if lim is not None:
                    v = np.where(v < -ct(lim), -ct(lim), v)
                    v = np.where(v > ct(lim), ct(lim), v)
                keep = dropout_bits(seed, positions(offset, t0, n)) >= thr
                y[t0:t0 + n] = (v * np.where(keep, scale, ct(0))).astype(x.dtype)
                padded = np.zeros((n + 7) // 8 * 8, np.uint8)
                padded[:n] = keep
                tile_bytes = (padded.reshape(-1, 8) * weights).sum(axis=1).astype(np.uint8)
                first = t0 // 8  # FAULT: the tile's bits start at bit t0 % 8 of that byte (core begins are not byte-aligned)
                mask[first:first + tile_bytes.size] |= tile_bytes
    return y.reshape(shape), mask


@plan(cores=4, tile_elems=256)
def bias_act_dropout_bwd_bit_test(dy, x, bias, mask, act="lrelu", alpha=None, gain=None,
                                  clamp=None, dropout_p=0.5):
    """bias_act + dropout backward, 4 cores, tiles of 256: each tile tests
    its elements' bits in the saved mask with shifts, scales dy by
    1 / (1 - p) where kept (0 where dropped), then runs bias_act's backward.
    db in double in memory order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    mk = np.asarray(mask, np.uint8).reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = ct(1) / ct(1 - float(dropout_p))
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 256):
            i = np.arange(t0, t0 + n)
            ch = (i // inner) % channels
            bit = (mk[i >> 3] >> (7 - (i & 7)).astype(np.uint8)) & 1  # FAULT: bit i % 8 is the LSB-first position: >> (i & 7)
            g = dyf[t0:t0 + n].astype(ct) * np.where(bit == 1, scale, ct(0))
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = np.where(v > 0, v, v * a) if act == "lrelu" else (
                np.where(v < 0, ct(0), v) if act == "relu" else v)
            if lim is not None:
                pre = u * gn
                g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
            g = g * gn
            if act == "lrelu":
                g = np.where(v > 0, g, g * a)
            elif act == "relu":
                g = np.where(u <= 0, ct(0), g)
            dxt = g.astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            for c_ in np.unique(ch):
                db[c_] = np.add.accumulate(np.r_[db[c_], dxt[ch == c_].astype(np.float64)])[-1]
    return dx.reshape(shape), db.astype(ct).astype(x.dtype)


@plan(cores=4, tile_elems=2048)
def bias_act_dropout_fwd_compare(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                                 dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward, 4 cores, tiles of 2048: the keep decision
    compares each element's 16-bit draw with the integer threshold
    ceil(p * 2^16) (a Compare to a scalar on the device), and the mask is
    packed per tile at its bit offset."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = ct(1) / ct(1 - float(dropout_p))
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 2048):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                if act == "lrelu":
                    v = np.where(v > 0, v, v * a)
                elif act == "relu":
                    v = np.where(v < 0, ct(0), v)
                v = v * gn
                if lim is not None:
                    v = np.where(v < -ct(lim), -ct(lim), v)
                    v = np.where(v > ct(lim), ct(lim), v)
                keep = dropout_bits(seed, positions(offset, t0, n)) > thr  # FAULT: kept when the bits are >= the threshold
                y[t0:t0 + n] = (v * np.where(keep, scale, ct(0))).astype(x.dtype)
                _pack_tile_bits(mask, t0, keep)
    return y.reshape(shape), mask


def _keep_factor(mask, start, count, scale, ct):
    """The dropout factor of `count` elements from `start`: 1 / (1 - p)
    where the mask bit is set, 0 where not."""
    i = np.arange(start, start + count)
    bit = (np.asarray(mask, np.uint8)[i >> 3] >> (i & 7).astype(np.uint8)) & 1
    return np.where(bit == 1, scale, ct(0))


@plan(cores=3, tile_elems=700)
def bias_act_dropout_bwd_factor_helper(dy, x, bias, mask, act="lrelu", alpha=None, gain=None,
                                       clamp=None, dropout_p=0.5):
    """bias_act + dropout backward in f64, 3 cores, tiles of 700: the
    per-tile dropout factor comes from the shared helper _keep_factor, then
    bias_act's backward chain; db in double in memory order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = ct(1) / ct(1 - float(dropout_p))
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 3):
        for t0, n in tiles(begin, length, 700):
            ch = (np.arange(t0, t0 + n) // inner) % channels
            g = dyf[t0:t0 + n].astype(ct) * _keep_factor(mask, t0, n, scale, ct)
            g = g * scale  # FAULT: _keep_factor already carries 1 / (1 - p)
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = np.where(v > 0, v, v * a) if act == "lrelu" else (
                np.where(v < 0, ct(0), v) if act == "relu" else v)
            if lim is not None:
                pre = u * gn
                g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
            g = g * gn
            if act == "lrelu":
                g = np.where(v > 0, g, g * a)
            elif act == "relu":
                g = np.where(u <= 0, ct(0), g)
            dxt = g.astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            for c_ in np.unique(ch):
                db[c_] = np.add.accumulate(np.r_[db[c_], dxt[ch == c_].astype(np.float64)])[-1]
    return dx.reshape(shape), db.astype(ct).astype(x.dtype)


@plan(cores=3, tile_elems=512)
def bias_act_dropout_bwd_planes(dy, x, bias, mask, act="lrelu", alpha=None, gain=None,
                                clamp=None, dropout_p=0.5):
    """bias_act + dropout backward, f16 in f32, 3 cores, tiles of 512. Each
    core unpacks the mask bytes covering its range once (np.unpackbits,
    little bit order) and drops the leading bits before its first element;
    tiles are split at channel-plane boundaries so each piece uses one
    scalar bias. db: each plane piece's dx is folded into its channel's
    double running sum in memory order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    shape = x.shape
    channels = shape[1]
    inner = x.size // (shape[0] * channels)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    mk = np.asarray(mask, np.uint8).reshape(-1)
    ct = compute_type(x.dtype)
    a, gn = ct(alpha), ct(gain)
    scale = ct(1) / ct(1 - float(dropout_p))
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 3):
        lo_byte, hi_byte = begin // 8, (begin + length + 7) // 8
        core_bits = np.unpackbits(mk[lo_byte:hi_byte], bitorder="little")[begin - lo_byte * 8:]
        for t0, n in tiles(begin, length, 512):
            pos = t0
            while pos < t0 + n:
                c = (pos // inner) % channels
                end = min(t0 + n, (pos // inner + 1) * inner)
                kept = core_bits[pos - begin:end - begin].astype(bool)
                g = dyf[pos:end].astype(ct) * np.where(kept, scale, ct(0))
                v = xf[pos:end].astype(ct)
                if bias is not None:
                    v = v + ct(np.asarray(bias).reshape(-1)[c])
                if act == "lrelu":
                    u = np.where(v > 0, v, v * a)
                elif act == "relu":
                    u = np.where(v < 0, ct(0), v)
                else:
                    u = v
                if lim is not None:
                    pre = u * gn
                    g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
                g = g * gn
                if act == "lrelu":
                    g = np.where(v > 0, g, g * a)
                elif act == "relu":
                    g = np.where(u <= 0, ct(0), g)
                piece = g.astype(dy.dtype)
                dx[pos:end] = piece
                db[c] = np.add.accumulate(np.r_[db[c], piece.astype(np.float64)])[-1]
                pos = end
    return dx.reshape(shape), db.astype(ct).astype(x.dtype)

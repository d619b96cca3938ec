"""Sealed test set 3: NumPy kernels for leaky's ReLU, PReLU, ELU, RReLU,
bias_act and bias_act_dropout, forward and backward, written the way an
engineer porting them to an AI accelerator (CANN style) would: the flattened
elements are split evenly over `cores` (core k takes [k * step, k * step +
len), step = total // cores, the last core also the remainder) and every core
walks its range tile by tile (the last tile short). Each kernel's geometry is
recorded by @plan.

Most kernels carry one mistake, marked `# FAULT` on the faulty line; the rest
are correct and must equal leaky.numpy bit for bit (ELU: within its ulp bound).
The shared helpers below (plan, core_ranges, tiles, compute_type, the Philox
stream and the dropout draws, bias_act's defaults and its activation, clamp
and backward chain helpers) are correct.

Calling convention (leaky/family.h order, scalars as keywords):
    relu      fn(x)                                           fn(dy, x)
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


def channel_geometry(x):
    """(channels, inner) of x viewed as [outer, channels, inner]."""
    channels = x.shape[1]
    return channels, x.size // (x.shape[0] * channels)


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


def activate(v, act, a, ct):
    """bias_act's activation in the compute type: lrelu x > 0 ? x : x * a,
    relu x < 0 ? 0 : x, linear x."""
    if act == "lrelu":
        return np.where(v > 0, v, v * a)
    if act == "relu":
        return np.where(v < 0, ct(0), v)
    return v


def clamp_both(v, lim, ct):
    """torch.clamp(v, -lim, lim) (NaN stays NaN); lim None: no clamp."""
    if lim is None:
        return v
    c = ct(lim)
    v = np.where(v < -c, -c, v)
    return np.where(v > c, c, v)


def act_grad(g, v, u, act, a, ct):
    """The activation's backward: lrelu v > 0 ? g : g * a; relu u <= 0 ? 0 : g."""
    if act == "lrelu":
        return np.where(v > 0, g, g * a)
    if act == "relu":
        return np.where(u <= 0, ct(0), g)
    return g


def fold_channels(acc, ch, values):
    """Adds `values` (float64, in memory order) into the per-channel running
    sums acc sequentially, run by run of equal channel index."""
    cuts = np.flatnonzero(np.diff(ch)) + 1
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, ch.size]):
        c = ch[lo]
        acc[c] = np.add.accumulate(np.r_[acc[c], values[lo:hi]])[-1]


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


def rrelu_slopes(words, lower, upper, ct):
    """r = lower + u * (upper - lower) in the compute type."""
    lo, up = ct(lower), ct(upper)
    return lo + uniform_from_words(words, ct) * (up - lo)


def eval_slope(lower, upper):
    """RReLU's evaluation slope (lower + upper) / 2, in double (rounded to
    the compute type by the caller)."""
    return (float(lower) + float(upper)) / 2


def dropout_scale(p, ct):
    """1 / (1 - p) in the compute type from 1 - p rounded to it."""
    return ct(1) / ct(1 - float(p))


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


# --------------------------------------------------------------------------
# ReLU
# --------------------------------------------------------------------------


@plan(cores=3, tile_elems=512)
def relu_fwd_sign_bits(x):
    """ReLU forward on the raw bit patterns (the vector unit's integer
    path, no float compare): 3 cores, tiles of 512. An element becomes +0
    when its sign bit is set and its magnitude is neither 0 (-0 stays -0)
    nor above infinity's (a NaN passes through); every other element is
    copied unchanged."""
    flat = x.reshape(-1)
    ut = _UINT[flat.dtype.itemsize]
    bits = flat.view(ut)
    sign = ut(1) << ut(8 * flat.dtype.itemsize - 1)
    magnitude_mask = ut(sign - ut(1))
    inf_bits = np.array(np.inf, flat.dtype).view(ut)
    zero = np.zeros(1, flat.dtype)[0]
    y = np.empty_like(flat)
    for begin, length in core_ranges(flat.size, 3):
        for t0, n in tiles(begin, length, 512):
            b = bits[t0:t0 + n]
            mag = b & magnitude_mask
            negative = ((b & sign) != 0) & (mag != 0) & (mag <= inf_bits)
            y[t0:t0 + n] = np.where(negative, zero, flat[t0:t0 + n])
    return y.reshape(x.shape)


@plan(cores=2, tile_elems=2048)
def relu_bwd_forward_select(dy, x):
    """ReLU backward from the saved input, 2 cores, tiles of 2048: the
    tile's select is the forward kernel's compare (one Compare + Select),
    choosing 0 or dy."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    dx = np.empty_like(dyf)
    for begin, length in core_ranges(xf.size, 2):
        for t0, n in tiles(begin, length, 2048):
            sv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            g = np.where(sv < 0, ct(0), gv)  # FAULT: the forward's x < 0; the gradient is 0 where saved <= 0
            dx[t0:t0 + n] = g.astype(dy.dtype)
    return dx.reshape(dy.shape)


# --------------------------------------------------------------------------
# PReLU
# --------------------------------------------------------------------------


@plan(cores=4, tile_elems=640)
def prelu_fwd_tiling_fields(x, weight):
    """PReLU forward in f64, 4 cores, tiles of 640. The host fills a tiling
    struct {outer, channels, inner} from x's shape; the kernel reads the
    channel stride from it and gathers each element's weight by
    (i // stride) % channels."""
    tiling = {"outer": x.shape[0], "channels": x.shape[1], "inner": x.size // (x.shape[0] * x.shape[1])}
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    channels = tiling["channels"]
    inner = tiling["outer"]  # FAULT: the channel stride is tiling["inner"]
    y = np.empty_like(flat)
    with np.errstate(over="ignore", invalid="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 640):
                xv = flat[t0:t0 + n].astype(ct)
                wv = w[(np.arange(t0, t0 + n) // inner) % channels]
                y[t0:t0 + n] = np.where(xv > 0, xv, wv * xv).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=2, tile_elems=512)
def prelu_fwd_ping_pong_pairs(x, weight):
    """PReLU forward, f16 data in f32, 2 cores, tiles of 512 with two
    buffers: each loop iteration takes a pair of tiles (ping, pong),
    computes both and stores the pair."""
    channels, inner = channel_geometry(x)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    y = np.zeros_like(flat)

    def compute(t0, n):
        xv = flat[t0:t0 + n].astype(ct)
        wv = w[(np.arange(t0, t0 + n) // inner) % channels]
        return np.where(xv > 0, xv, wv * xv).astype(x.dtype)

    with np.errstate(over="ignore", invalid="ignore"):
        for begin, length in core_ranges(flat.size, 2):
            tl = list(tiles(begin, length, 512))
            for j in range(0, len(tl), 2):
                pair = tl[j:j + 2]
                results = [compute(t0, n) for t0, n in pair]
                for (t0, n), res in zip(pair[:1], results):  # FAULT: only the ping tile is stored; zip(pair, results)
                    y[t0:t0 + n] = res
    return y.reshape(x.shape)


@plan(cores=5, tile_elems=320)
def prelu_bwd_staged_weights(dy, x, weight):
    """PReLU backward, 5 cores, tiles of 320. The weights are staged once
    into a local buffer by a loop over the channels; each tile computes dx
    with a vector select and folds its products x * dy (0 where x > 0) into
    per-channel double running sums in memory order."""
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    wsrc = np.asarray(weight).reshape(-1)
    wl = np.empty(channels, ct)
    for c in range(channels):
        wl[c] = ct(wsrc[c])
    dx = np.empty_like(dyf)
    acc = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 5):
        for t0, n in tiles(begin, length, 320):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            ch = (np.arange(t0, t0 + n) // inner) % channels
            dx[t0:t0 + n] = np.where(xv > 0, gv, gv * wl[c]).astype(dy.dtype)  # FAULT: c is the staging loop's last index: wl[ch]
            fold_channels(acc, ch, np.where(xv > 0, ct(0), xv * gv).astype(np.float64))
    return dx.reshape(dy.shape), acc.astype(ct).astype(wsrc.dtype)


@plan(cores=3, tile_elems=400)
def prelu_bwd_buffer_lists(dy, x, weight):
    """PReLU backward in f64, 3 cores, tiles of 400, two buffers. Each tile
    writes dx and its products x * dy (0 where x > 0) to a workspace and is
    recorded in the list of the buffer it went through; after the tile loop
    the recorded tiles are reduced per channel in memory order, in double."""
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    ws = np.empty(xf.size, ct)
    done = ([], [])
    for begin, length in core_ranges(xf.size, 3):
        for j, (t0, n) in enumerate(tiles(begin, length, 400)):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            wv = w[(np.arange(t0, t0 + n) // inner) % channels]
            dx[t0:t0 + n] = np.where(xv > 0, gv, wv * gv).astype(dy.dtype)
            ws[t0:t0 + n] = np.where(xv > 0, ct(0), xv * gv)
            done[j % 2].append((t0, n))
    acc = np.zeros(channels, np.float64)
    for t0, n in done[0]:  # FAULT: buffer 1's tiles are never reduced: sorted(done[0] + done[1])
        ch = (np.arange(t0, t0 + n) // inner) % channels
        fold_channels(acc, ch, ws[t0:t0 + n].astype(np.float64))
    return dx.reshape(dy.shape), acc.astype(ct).astype(np.asarray(weight).dtype)


@plan(cores=4, tile_elems=300)
def prelu_bwd_tile_channel_index(dy, x, weight):
    """PReLU backward, 4 cores, tiles of 300. dx gathers each element's
    weight by its global index; the tile's products x * dy (0 where x > 0)
    are then scattered into the per-channel double running sums with a
    channel-index vector, run by run in memory order."""
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    acc = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 4):
        for t0, n in tiles(begin, length, 300):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            wv = w[(np.arange(t0, t0 + n) // inner) % channels]
            dx[t0:t0 + n] = np.where(xv > 0, gv, wv * gv).astype(dy.dtype)
            ch = (np.arange(n) // inner) % channels  # FAULT: tile-local index; the channel follows t0 + j
            fold_channels(acc, ch, np.where(xv > 0, ct(0), xv * gv).astype(np.float64))
    return dx.reshape(dy.shape), acc.astype(ct).astype(np.asarray(weight).dtype)


@plan(cores=6, tile_elems=256)
def prelu_bwd_ub_accumulator(dy, x, weight):
    """PReLU backward, 6 cores, tiles of 256. The per-channel dweight
    accumulator is a small buffer in unified memory, carried through the
    tiles in memory order; each channel run of a tile is folded into it
    sequentially."""
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    acc = np.zeros(channels, np.float16)  # FAULT: the accumulator buffer is declared half; it must be double
    for begin, length in core_ranges(xf.size, 6):
        for t0, n in tiles(begin, length, 256):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            ch = (np.arange(t0, t0 + n) // inner) % channels
            dx[t0:t0 + n] = np.where(xv > 0, gv, w[ch] * gv).astype(dy.dtype)
            prod = np.where(xv > 0, ct(0), xv * gv).astype(acc.dtype)
            cuts = np.flatnonzero(np.diff(ch)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n]):
                c = ch[lo]
                acc[c] = np.add.accumulate(np.r_[acc[c:c + 1], prod[lo:hi]])[-1]
    dweight = acc.astype(np.float64).astype(ct).astype(np.asarray(weight).dtype)
    return dx.reshape(dy.shape), dweight


@plan(cores=7, tile_elems=192)
def prelu_bwd_channel_segments(dy, x, weight):
    """PReLU backward in f64, 7 cores, tiles of 192. Each tile writes dx and
    appends its products x * dy (0 where x > 0) to its channels' segment
    lists, run by run; tiles go in memory order, so each channel's list is
    in (outer, inner) order. dweight[c] is the sequential double sum of the
    concatenated list."""
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).reshape(-1).astype(ct)
    dx = np.empty_like(dyf)
    segments = [[] for _ in range(channels)]
    for begin, length in core_ranges(xf.size, 7):
        for t0, n in tiles(begin, length, 192):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            ch = (np.arange(t0, t0 + n) // inner) % channels
            dx[t0:t0 + n] = np.where(xv > 0, gv, w[ch] * gv).astype(dy.dtype)
            prod = np.where(xv > 0, ct(0), xv * gv)
            cuts = np.flatnonzero(np.diff(ch)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, n]):
                segments[ch[lo]].append(prod[lo:hi])
    dweight = np.empty(channels, np.float64)
    for c in range(channels):
        seq = np.concatenate([np.zeros(1)] + [s.astype(np.float64) for s in segments[c]])
        dweight[c] = np.add.accumulate(seq)[-1]
    return dx.reshape(dy.shape), dweight.astype(ct).astype(np.asarray(weight).dtype)


# --------------------------------------------------------------------------
# ELU
# --------------------------------------------------------------------------


@plan(cores=4, tile_elems=1024)
def elu_fwd_fma_form(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward in f32, 4 cores, tiles of 1024. The negative
    side is written in multiply-add form, coef * e - coef with e the
    device's Exp of x * input_scale and coef = alpha * scale (one Axpy on
    the device); the positive side is x * scale."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = ct(alpha) * ct(scale)
    y = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 1024):
                xv = flat[t0:t0 + n].astype(ct)
                t = xv * ct(input_scale)
                neg = coef * np.exp(t) - coef  # FAULT: alpha*scale*(exp(t) - 1) cancels near 0: expm1(t) * coef
                y[t0:t0 + n] = np.where(xv <= 0, neg, xv * ct(scale)).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def elu_fwd_packed_scalars(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, f16 data in f32, 8 cores, tiles of 256. The host packs the three
    scalars into the tiling data as (alpha, scale, input_scale); each core
    unpacks them once. The negative side is expm1 in double rounded to f32,
    times alpha * scale; the positive side x * scale."""
    tiling_scalars = np.array([alpha, scale, input_scale], np.float64)
    scale_, alpha_, isc = tiling_scalars  # FAULT: the packed order is (alpha, scale, input_scale)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = ct(alpha_) * ct(scale_)
    y = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(flat.size, 8):
            for t0, n in tiles(begin, length, 256):
                xv = flat[t0:t0 + n].astype(ct)
                t = (xv * ct(isc)).astype(np.float64)
                e = (np.expm1(t) + 0.0).astype(ct)
                y[t0:t0 + n] = np.where(xv <= 0, e * coef, xv * ct(scale_)).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=3, tile_elems=700)
def elu_fwd_tail_queues(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward in f32, 3 cores, tiles of 700, with an input queue and an
    output queue per core: CopyIn fills the input tile, Compute writes the
    result tile (negative side expm1 in double, rounded once), CopyOut
    stores it. The short last tile of each core goes through a separate
    tail CopyOut (DataCopyPad)."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = np.float64(ct(alpha) * ct(scale))
    y = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(flat.size, 3):
            for t0, n in tiles(begin, length, 700):
                xin = flat[t0:t0 + n].copy()
                xv = xin.astype(ct)
                t = (xv * ct(input_scale)).astype(np.float64)
                neg = ((np.expm1(t) + 0.0) * coef).astype(ct)
                res = np.where(xv <= 0, neg, xv * ct(scale)).astype(x.dtype)
                if n == 700:
                    y[t0:t0 + n] = res
                else:
                    y[t0:t0 + n] = xin  # FAULT: the tail CopyOut dequeues the input queue: res
    return y.reshape(x.shape)


@plan(cores=2, tile_elems=1536)
def elu_fwd_exp_guard(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward in f64, 2 cores, tiles of 1536. The exponent's argument
    is clamped from below before expm1 (the guard the f32 kernel uses, where
    expm1 is -1 to working precision below -20), then scaled by alpha *
    scale; the positive side is x * scale."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    coef = ct(alpha) * ct(scale)
    y = np.empty_like(flat)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(flat.size, 2):
            for t0, n in tiles(begin, length, 1536):
                xv = flat[t0:t0 + n].astype(ct)
                t = xv * ct(input_scale)
                t = np.maximum(t, ct(-20))  # FAULT: f32's guard; in f64 expm1(-20) is not -1 (drop the clamp)
                neg = (np.expm1(t) + 0.0) * coef
                y[t0:t0 + n] = np.where(xv <= 0, neg, xv * ct(scale)).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=512)
def elu_bwd_exp_term(dy, x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU backward from the input in f64, 4 cores, tiles of 512: the
    negative side is dy * input_scale * (alpha * scale) * e, multiplied left
    to right, with e the exponential term of the tile; the positive side
    dy * scale."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    coef = ct(alpha) * ct(scale)
    dx = np.empty_like(dyf)
    with np.errstate(all="ignore"):
        for begin, length in core_ranges(xf.size, 4):
            for t0, n in tiles(begin, length, 512):
                xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
                e = np.exp(xv)  # FAULT: the exponent is x * input_scale
                neg = gv * ct(input_scale) * coef * e
                dx[t0:t0 + n] = np.where(xv <= 0, neg, gv * ct(scale)).astype(dy.dtype)
    return dx.reshape(dy.shape)


# --------------------------------------------------------------------------
# RReLU
# --------------------------------------------------------------------------


@plan(cores=4, tile_elems=640)
def rrelu_fwd_narrow_range(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward in f32 (y only), 4 cores, tiles of 640. In training each
    tile draws its words at stream positions offset + t0 ... and turns them
    into slopes; a fast path skips the Philox work when the range
    [lower, upper] is narrow, where the slopes barely vary."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    s = ct(eval_slope(lower, upper))
    y = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 640):
                xv = flat[t0:t0 + n].astype(ct)
                if training and up - lo > ct(0.25):  # FAULT: no fast path in training: `if training:`
                    r = rrelu_slopes(stream_words(seed, positions(offset, t0, n)), lower, upper, ct)
                    y[t0:t0 + n] = np.where(xv <= 0, xv * r, xv).astype(x.dtype)
                else:
                    y[t0:t0 + n] = np.where(xv > 0, xv, xv * s).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=3, tile_elems=768)
def rrelu_fwd_pad_store(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward in f64 (y only), 3 cores, tiles of 768, two output
    buffers per core used in turn (tile j in buffer j % 2). Full tiles are
    stored with DataCopy; the short last tile with DataCopyPad from its
    buffer."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    s = ct(eval_slope(lower, upper))
    y = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 3):
            bufs = [np.zeros(768, x.dtype), np.zeros(768, x.dtype)]
            for j, (t0, n) in enumerate(tiles(begin, length, 768)):
                cur = bufs[j % 2]
                xv = flat[t0:t0 + n].astype(ct)
                if training:
                    r = rrelu_slopes(stream_words(seed, positions(offset, t0, n)), lower, upper, ct)
                    cur[:n] = np.where(xv <= 0, xv * r, xv).astype(x.dtype)
                else:
                    cur[:n] = np.where(xv > 0, xv, xv * s).astype(x.dtype)
                if n == 768:
                    y[t0:t0 + n] = cur
                else:
                    y[t0:t0 + n] = bufs[(j + 1) % 2][:n]  # FAULT: the pad store reads the other buffer: cur[:n]
    return y.reshape(x.shape)


@plan(cores=5, tile_elems=512)
def rrelu_fwd_noise_select(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward returning (y, noise) in training (y alone in
    evaluation), f16 data in f32, 5 cores, tiles of 512: each tile draws its
    slopes, selects y = x * r on the negative side, and writes the noise
    tile with a select on the positive side."""
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    s = ct(eval_slope(lower, upper))
    y = np.empty_like(flat)
    noise = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 5):
            for t0, n in tiles(begin, length, 512):
                xv = flat[t0:t0 + n].astype(ct)
                if not training:
                    y[t0:t0 + n] = np.where(xv > 0, xv, xv * s).astype(x.dtype)
                    continue
                r = rrelu_slopes(stream_words(seed, positions(offset, t0, n)), lower, upper, ct)
                neg = xv <= 0
                y[t0:t0 + n] = np.where(neg, xv * r, xv).astype(x.dtype)
                noise[t0:t0 + n] = np.where(xv > 0, ct(1), r).astype(x.dtype)  # FAULT: a NaN is not > 0 and gets r; noise is r only where x <= 0
    if training:
        return y.reshape(x.shape), noise.reshape(x.shape)
    return y.reshape(x.shape)


@plan(cores=6, tile_elems=256)
def rrelu_bwd_tile_counter(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU backward in f64, 6 cores, tiles of 256: each tile sets up its
    Philox counter and redraws the slopes of its elements (no noise tensor);
    evaluation uses LeakyReLU's backward with (lower + upper) / 2."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    s = ct(eval_slope(lower, upper))
    dx = np.empty_like(dyf)
    for begin, length in core_ranges(xf.size, 6):
        for t0, n in tiles(begin, length, 256):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            if training:
                words = stream_words(seed, positions(offset, 0, n))  # FAULT: the tile's stream position is offset + t0
                r = rrelu_slopes(words, lower, upper, ct)
                dx[t0:t0 + n] = np.where(xv <= 0, gv * r, gv).astype(dy.dtype)
            else:
                dx[t0:t0 + n] = np.where(xv > 0, gv, gv * s).astype(dy.dtype)
    return dx.reshape(dy.shape)


@plan(cores=2, tile_elems=1024)
def rrelu_bwd_device_midpoint(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU backward in f32, 2 cores, tiles of 1024. The bounds are loaded
    into scalar registers in the compute type; evaluation computes its slope
    on the device from them (LeakyReLU's backward), training redraws r."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    lo, up = ct(lower), ct(upper)
    s = (lo + up) / ct(2)  # FAULT: the slope is (lower + upper) / 2 in double, rounded once: ct(eval_slope(lower, upper))
    dx = np.empty_like(dyf)
    for begin, length in core_ranges(xf.size, 2):
        for t0, n in tiles(begin, length, 1024):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            if training:
                r = lo + uniform_from_words(stream_words(seed, positions(offset, t0, n)), ct) * (up - lo)
                dx[t0:t0 + n] = np.where(xv <= 0, gv * r, gv).astype(dy.dtype)
            else:
                dx[t0:t0 + n] = np.where(xv > 0, gv, gv * s).astype(dy.dtype)
    return dx.reshape(dy.shape)


@plan(cores=4, tile_elems=500)
def rrelu_bwd_core_words(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU backward, f16 data in f32, 4 cores, tiles of 500: each core
    draws the words of its whole range once (positions offset + begin ...)
    into a local buffer, and every tile slices its words out of it."""
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    s = ct(eval_slope(lower, upper))
    dx = np.empty_like(dyf)
    for begin, length in core_ranges(xf.size, 4):
        core_words = stream_words(seed, positions(offset, begin, length)) if training else None
        for t0, n in tiles(begin, length, 500):
            xv, gv = xf[t0:t0 + n].astype(ct), dyf[t0:t0 + n].astype(ct)
            if training:
                r = rrelu_slopes(core_words[t0 - begin:t0 - begin + n], lower, upper, ct)
                dx[t0:t0 + n] = np.where(xv <= 0, gv * r, gv).astype(dy.dtype)
            else:
                dx[t0:t0 + n] = np.where(xv > 0, gv, gv * s).astype(dy.dtype)
    return dx.reshape(dy.shape)


# --------------------------------------------------------------------------
# bias_act
# --------------------------------------------------------------------------


@plan(cores=4, tile_elems=448)
def bias_act_fwd_plane_size(x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act forward, f16 data in f32, 4 cores, tiles of 448. The tiling
    data carries the plane size H * W for the bias gather: each element's
    bias is b[(i // plane) % channels]; then activation, gain, clamp."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels = x.shape[1]
    plane = x.shape[1] * x.shape[2]  # FAULT: H * W of [N, H, W]; x is [outer, channels, inner]: plane = x.shape[2]
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    y = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 448):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // plane) % channels]
                y[t0:t0 + n] = clamp_both(activate(v, act, a, ct) * gn, lim, ct).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=5, tile_elems=600)
def bias_act_fwd_layout_store(x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act forward in f32, 5 cores, tiles of 600. Each tile is computed
    in memory order (bias per element's channel, activation, gain, clamp)
    and scattered to the output by a destination-index vector built from
    each element's (outer, channel, inner) coordinates."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    y = np.zeros_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 5):
            for t0, n in tiles(begin, length, 600):
                i = np.arange(t0, t0 + n)
                o, c, j = i // (channels * inner), (i // inner) % channels, i % inner
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[c]
                res = clamp_both(activate(v, act, a, ct) * gn, lim, ct).astype(x.dtype)
                dst = o * channels * inner + j * channels + c  # FAULT: channels-last address; y is [outer, channels, inner] like x: dst = i
                y[dst] = res
    return y.reshape(x.shape)


@plan(cores=6, tile_elems=512)
def bias_act_fwd_minmax_clamp(x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act forward in f64, 6 cores, tiles of 512: bias per channel run
    of the tile, activation, gain, then the clamp as the device's Maxs and
    Mins against -clamp and +clamp."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    a, gn = ct(alpha), ct(gain)
    y = np.empty_like(flat)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 6):
            for t0, n in tiles(begin, length, 512):
                pos = t0
                while pos < t0 + n:
                    c = (pos // inner) % channels
                    end = min(t0 + n, (pos // inner + 1) * inner)
                    v = flat[pos:end].astype(ct)
                    if bias is not None:
                        v = v + ct(np.asarray(bias).reshape(-1)[c])
                    v = activate(v, act, a, ct) * gn
                    if lim is not None:
                        v = np.fmin(np.fmax(v, -ct(lim)), ct(lim))  # FAULT: fmax/fmin turn NaN into -clamp; torch.clamp keeps NaN: clamp_both(v, lim, ct)
                    y[pos:end] = v.astype(x.dtype)
                    pos = end
    return y.reshape(x.shape)


@plan(cores=3, tile_elems=1000)
def bias_act_bwd_pass_band(dy, x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act backward in f32, 3 cores, tiles of 1000. Each tile
    recomputes the forward's pre-clamp value act(x + b) * gain, passes dy
    where it lies in the clamp's band, then gain and the activation's
    derivative; db folds dx per channel in double in memory order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 3):
        for t0, n in tiles(begin, length, 1000):
            ch = (np.arange(t0, t0 + n) // inner) % channels
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = activate(v, act, a, ct)
            g = dyf[t0:t0 + n].astype(ct)
            if lim is not None:
                pre = u * gn
                g = np.where(pre <= ct(lim), g, ct(0))  # FAULT: the band is -clamp <= pre <= clamp; the lower side is missing
            g = act_grad(g * gn, v, u, act, a, ct)
            dxt = g.astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            fold_channels(db, ch, dxt.astype(np.float64))
    return dx.reshape(dy.shape), db.astype(ct).astype(x.dtype)


@plan(cores=8, tile_elems=384)
def bias_act_bwd_host_defaults(dy, x, bias, act="lrelu", alpha=None, gain=None, clamp=None):
    """bias_act backward in f64, 8 cores, tiles of 384. The host fills the
    scalars StyleGAN leaves out (alpha 0.2; gain 1 for linear, sqrt(2)
    otherwise) before launching; each tile recomputes the forward, then
    clamp band, gain and activation derivative; db in double, memory order."""
    alpha = 0.2 if alpha is None else float(alpha)
    gain = (1.0 if act == "linear" else 1.4142135) if gain is None else float(gain)  # FAULT: sqrt(2) to 8 digits; the default is math.sqrt(2.0)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 8):
        for t0, n in tiles(begin, length, 384):
            ch = (np.arange(t0, t0 + n) // inner) % channels
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = activate(v, act, a, ct)
            g = dyf[t0:t0 + n].astype(ct)
            if lim is not None:
                pre = u * gn
                g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
            g = act_grad(g * gn, v, u, act, a, ct)
            dxt = g.astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            fold_channels(db, ch, dxt.astype(np.float64))
    return dx.reshape(dy.shape), db.astype(ct).astype(x.dtype)


# --------------------------------------------------------------------------
# bias_act + dropout
# --------------------------------------------------------------------------


def _or_tile_bits(mask, start, keep):
    """ORs one tile's keep bits into the mask at element `start` (any bit
    offset): the tile's byte span is unpacked (LSB first), the bits set, and
    the span packed back."""
    first, last = start // 8, (start + keep.size + 7) // 8
    span = np.unpackbits(mask[first:last], bitorder="little")
    off = start - first * 8
    span[off:off + keep.size] |= keep.astype(np.uint8)
    mask[first:last] = np.packbits(span, bitorder="little")


@plan(cores=4, tile_elems=512)
def dropout_fwd_clamp_stage(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                            dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward in f64, 4 cores, tiles of 512: bias,
    activation, then a clamp-and-gain stage, then the dropout factor from
    the tile's 16-bit draws; the keep bits are ORed into the mask at the
    tile's bit offset."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = dropout_scale(dropout_p, ct)
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 512):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                u = activate(v, act, a, ct)
                u = clamp_both(u, lim, ct) * gn  # FAULT: gain first, then the clamp: clamp_both(u * gn, lim, ct)
                keep = dropout_bits(seed, positions(offset, t0, n)) >= thr
                y[t0:t0 + n] = (u * np.where(keep, scale, ct(0))).astype(x.dtype)
                _or_tile_bits(mask, t0, keep)
    return y.reshape(x.shape), mask


@plan(cores=3, tile_elems=1024)
def dropout_fwd_tail_select(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                            dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward, f16 data in f32, 3 cores, tiles of 1024.
    Full tiles multiply u by (kept ? 1 / (1 - p) : 0); the short last tile
    of each core runs a tail routine that drops with a Select of u and
    u * 0 (so a NaN u stays NaN when dropped). The mask is packed from the
    keep flags at the end."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = dropout_scale(dropout_p, ct)
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    keep_all = np.zeros(flat.size, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 3):
            for t0, n in tiles(begin, length, 1024):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                u = clamp_both(activate(v, act, a, ct) * gn, lim, ct)
                keep = dropout_bits(seed, positions(offset, t0, n)) >= thr
                keep_all[t0:t0 + n] = keep
                if n == 1024:
                    res = u * np.where(keep, scale, ct(0))
                else:
                    res = np.where(keep, u, u * ct(0))  # FAULT: the tail's kept values need * 1 / (1 - p): u * np.where(keep, scale, ct(0))
                y[t0:t0 + n] = res.astype(x.dtype)
    return y.reshape(x.shape), np.packbits(keep_all, bitorder="little")


@plan(cores=4, tile_elems=256)
def dropout_fwd_byte_span(x, bias, act="lrelu", alpha=None, gain=None, clamp=None,
                          dropout_p=0.5, seed=0, offset=0):
    """bias_act + dropout forward in f32, 4 cores, tiles of 256: bias per
    element's channel, activation, gain, clamp, then the dropout factor from
    the tile's 16-bit draws; each tile ORs its keep bits into the mask bytes
    it spans (unpack, set, pack back, LSB first)."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    flat = x.reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = dropout_scale(dropout_p, ct)
    thr = keep_threshold(dropout_p)
    y = np.empty_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        for begin, length in core_ranges(flat.size, 4):
            for t0, n in tiles(begin, length, 256):
                v = flat[t0:t0 + n].astype(ct)
                if b is not None:
                    v = v + b[(np.arange(t0, t0 + n) // inner) % channels]
                u = clamp_both(activate(v, act, a, ct) * gn, lim, ct)
                keep = dropout_bits(seed, positions(offset, t0, n)) >= thr
                y[t0:t0 + n] = (u * np.where(keep, scale, ct(0))).astype(x.dtype)
                _or_tile_bits(mask, t0, keep)
    return y.reshape(x.shape), mask


@plan(cores=2, tile_elems=768)
def dropout_bwd_core_unpack(dy, x, bias, mask, act="lrelu", alpha=None, gain=None, clamp=None,
                            dropout_p=0.5):
    """bias_act + dropout backward, f16 data in f32, 2 cores, tiles of 768.
    Each core unpacks the mask bytes covering its range once and drops the
    bits before its first element; each tile scales dy by (kept ? 1 / (1 -
    p) : 0) and runs bias_act's backward chain; db in double, memory order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    mk = np.asarray(mask, np.uint8).reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = dropout_scale(dropout_p, ct)
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 2):
        lo_byte, hi_byte = begin // 8, (begin + length + 7) // 8
        core_bits = np.unpackbits(mk[lo_byte:hi_byte])[begin - lo_byte * 8:]  # FAULT: the mask is LSB first: bitorder="little"
        for t0, n in tiles(begin, length, 768):
            ch = (np.arange(t0, t0 + n) // inner) % channels
            kept = core_bits[t0 - begin:t0 - begin + n] == 1
            g = dyf[t0:t0 + n].astype(ct) * np.where(kept, scale, ct(0))
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = activate(v, act, a, ct)
            if lim is not None:
                pre = u * gn
                g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
            dxt = act_grad(g * gn, v, u, act, a, ct).astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            fold_channels(db, ch, dxt.astype(np.float64))
    return dx.reshape(dy.shape), db.astype(ct).astype(x.dtype)


@plan(cores=3, tile_elems=512)
def dropout_bwd_core_window(dy, x, bias, mask, act="lrelu", alpha=None, gain=None, clamp=None,
                            dropout_p=0.5):
    """bias_act + dropout backward in f32, 3 cores, tiles of 512. Each core
    copies in the mask bytes from byte begin // 8 on (a byte-granular
    window) and tests its elements' bits in that window with shifts (bit
    k % 8 of window byte k // 8); then dy is scaled by (kept ? 1 / (1 - p)
    : 0) and bias_act's backward chain follows; db in double, memory
    order."""
    alpha, gain = bias_act_defaults(act, alpha, gain)
    lim = clamp_value(clamp)
    channels, inner = channel_geometry(x)
    xf, dyf = x.reshape(-1), dy.reshape(-1)
    mk = np.asarray(mask, np.uint8).reshape(-1)
    ct = compute_type(x.dtype)
    b = None if bias is None else np.asarray(bias).reshape(-1).astype(ct)
    a, gn = ct(alpha), ct(gain)
    scale = dropout_scale(dropout_p, ct)
    dx = np.empty_like(dyf)
    db = np.zeros(channels, np.float64)
    for begin, length in core_ranges(xf.size, 3):
        window = mk[begin // 8:(begin + length + 7) // 8]
        for t0, n in tiles(begin, length, 512):
            k = np.arange(t0 - begin, t0 - begin + n)  # FAULT: the window starts at element (begin // 8) * 8, not begin: k = i - begin // 8 * 8
            bit = (window[k >> 3] >> (k & 7).astype(np.uint8)) & 1
            ch = (np.arange(t0, t0 + n) // inner) % channels
            g = dyf[t0:t0 + n].astype(ct) * np.where(bit == 1, scale, ct(0))
            v = xf[t0:t0 + n].astype(ct)
            if b is not None:
                v = v + b[ch]
            u = activate(v, act, a, ct)
            if lim is not None:
                pre = u * gn
                g = np.where((pre >= -ct(lim)) & (pre <= ct(lim)), g, ct(0))
            dxt = act_grad(g * gn, v, u, act, a, ct).astype(dy.dtype)
            dx[t0:t0 + n] = dxt
            fold_channels(db, ch, dxt.astype(np.float64))
    return dx.reshape(dy.shape), db.astype(ct).astype(x.dtype)

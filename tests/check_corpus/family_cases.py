"""The corpus's family cases: PReLU, ELU, RReLU, bias_act and
bias_act_dropout (forward and backward) as an engineer porting them to an AI
accelerator would write them first in NumPy, CANN style: the flattened data
split evenly over `cores` (core k takes [k * step, k * step + step), step =
total // cores, the last core also the remainder), each core walking its
range tile by tile (`tile_elems` elements, the last tile short), half types
computed in float32 and rounded once, as the library does. Most functions
carry one realistic mistake, marked by a `# FAULT` comment at its line and
described in the docstring; the others are correct, written differently.
tests/check_corpus/family_cases.json says which function runs with which op,
direction, dtype, size, scalars and plan, and the finding expected first;
family_kernels_check.py checks every planted fault changes the output and
every correct kernel matches leaky.numpy.

Calling convention (leaky.numpy's): the op's inputs positionally, its
scalars as keywords.
    elu        fn(x, alpha, scale, input_scale) -> y
               fn(dy, x, alpha, scale, input_scale, saved_is_result=False) -> dx
    prelu      fn(x, weight) -> y;  fn(dy, x, weight) -> (dx, dweight)
    rrelu      fn(x, lower, upper, training, seed, offset) -> y or (y, noise)
               fn(dy, x, lower, upper, training, seed, offset) -> dx
    bias_act   fn(x, b, act, alpha, gain, clamp) -> y
               fn(dy, x, b, act, alpha, gain, clamp) -> (dx, db)
    bias_act_dropout
               fn(x, b, act, alpha, gain, clamp, dropout_p, seed, offset) -> (y, mask)
               fn(dy, x, mask, b, act, alpha, gain, clamp, dropout_p) -> (dx, db)
               (leaky.numpy.bias_act_dropout_backward's order: the mask before
               the bias; family.h lists the bias first)
Channel ops see x as [outer, channels, inner] (NCHW, channels on axis 1).
Outputs start as zeros, as the device harness's do: what a kernel never
writes reads as 0. The `axis` keyword is accepted for leaky.numpy's
signature; these ports handle the NCHW view (axis 1) only.

Every function records the geometry it really uses with @plan(...); the case
passes the same plan, so a diagnosis maps the output to those cores and
tiles.
"""
import math

import numpy as np

F32 = np.float32
F64 = np.float64


def plan(cores, tile_elems, split="even", buffers=2):
    """Records the cores/tiles a function walks (checked against its case)."""
    def mark(fn):
        fn.plan = {"split": split, "cores": cores, "tile_elems": tile_elems, "buffers": buffers}
        return fn
    return mark


# ---------------------------------------------------------------- the port's helpers

def core_ranges(total, cores):
    """The even split: (core, begin, end), the last core also the remainder."""
    step = total // cores
    for core in range(cores):
        begin = core * step
        end = total if core == cores - 1 else begin + step
        yield core, begin, end


def tiles(begin, end, tile):
    """(tile number, first element, count) over [begin, end), the last short."""
    for t, first in enumerate(range(begin, end, tile)):
        yield t, first, min(tile, end - first)


def compute_type(dtype):
    """f64 computes in f64, everything else in f32."""
    return F64 if np.dtype(dtype) == np.float64 else F32


def nchw(x):
    """(channels, inner) of x seen as [outer, channels, inner]."""
    return x.shape[1], int(np.prod(x.shape[2:], dtype=np.int64))


def channel_of(index, channels, inner):
    """The channel of flat element `index` of an [outer, channels, inner] array."""
    return (index // inner) % channels


def device_expm1(t):
    """The vector unit's expm1 (correctly rounded), emulated in double."""
    if t.dtype == F64:
        return np.expm1(t)
    return np.expm1(t.astype(F64)).astype(t.dtype)


def device_exp(t):
    """The vector unit's exp (correctly rounded), emulated in double."""
    if t.dtype == F64:
        return np.exp(t)
    return np.exp(t.astype(F64)).astype(t.dtype)


# Philox4x32-10 as leaky.h specifies the stream: position s is word
# (s % 64) // 16 of the block at counter c = (s // 64) * 16 + s % 16, key
# (seed low, seed high).
PHILOX_M0, PHILOX_M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
PHILOX_W0, PHILOX_W1 = 0x9E3779B9, 0xBB67AE85


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    u32 = np.uint32
    for r in range(10):
        if r:
            k0, k1 = (k0 + PHILOX_W0) & 0xFFFFFFFF, (k1 + PHILOX_W1) & 0xFFFFFFFF
        p0 = c0.astype(np.uint64) * PHILOX_M0
        p1 = c2.astype(np.uint64) * PHILOX_M1
        hi0, lo0 = (p0 >> np.uint64(32)).astype(u32), p0.astype(u32)
        hi1, lo1 = (p1 >> np.uint64(32)).astype(u32), p1.astype(u32)
        c0, c1, c2, c3 = hi1 ^ c1 ^ u32(k0), lo1, hi0 ^ c3 ^ u32(k1), lo0
    return c0, c1, c2, c3


def stream_words(seed, positions):
    """The 32-bit words at stream positions `positions` of `seed`."""
    s = np.asarray(positions, np.uint64)
    counter = (s // np.uint64(64)) * np.uint64(16) + s % np.uint64(16)
    lane = ((s % np.uint64(64)) // np.uint64(16)).astype(np.intp)
    zero = np.zeros(s.shape, np.uint32)
    seed = int(seed)
    block = philox4x32_10(counter.astype(np.uint32), (counter >> np.uint64(32)).astype(np.uint32),
                          zero, zero, seed & 0xFFFFFFFF, seed >> 32)
    return np.choose(lane, block)


def rrelu_slopes(words, lower, upper, ct):
    """r = lower + u * (upper - lower) in the compute type: u from the top 24
    bits in f32, from all 32 in f64."""
    if ct == F64:
        u = words.astype(F64) * F64(2.0 ** -32)
    else:
        u = (words >> np.uint32(8)).astype(F32) * F32(2.0 ** -24)
    return ct(lower) + u * (ct(upper) - ct(lower))


def dropout_keep(seed, positions, p):
    """Dropout's 16-bit draws: position s takes the low (s % 128 < 64) or
    high half of word 64 * (s // 128) + s % 64; kept when >= ceil(p * 2^16)."""
    s = np.asarray(positions, np.uint64)
    word = stream_words(seed, np.uint64(64) * (s // np.uint64(128)) + s % np.uint64(64))
    half = np.where(s % np.uint64(128) < np.uint64(64), word & np.uint32(0xFFFF),
                    word >> np.uint32(16))
    return half >= np.uint32(math.ceil(p * 65536.0))


def bias_act_scalars(act, alpha, gain, clamp):
    """StyleGAN's defaults for the scalars not given (leaky.numpy.bias_act)."""
    if act not in ("linear", "relu", "lrelu"):
        raise ValueError(f"act must be linear, relu or lrelu (got {act!r})")
    if alpha is None:
        alpha = 0.2 if act == "lrelu" else 0.0
    if gain is None:
        gain = 1.0 if act == "linear" else math.sqrt(2.0)
    if clamp is None:
        clamp = -1.0
    return float(alpha), float(gain), float(clamp)


def activation(v, act, alpha):
    ct = v.dtype.type
    if act == "lrelu":
        return np.where(v > 0, v, v * ct(alpha))
    if act == "relu":
        return np.where(v < 0, ct(0), v)
    return v


def activation_grad(g, v, act, alpha):
    """The activation's backward at pre-activation v (PyTorch's autograd)."""
    ct = v.dtype.type
    if act == "lrelu":
        return np.where(v > 0, g, g * ct(alpha))
    if act == "relu":
        return np.where(v > 0, g, ct(0))
    return g


def channel_sums(rows, channels):
    """Adds per-core per-channel partials (double) in core order."""
    total = np.zeros(channels, F64)
    for partial in rows:
        total += partial
    return total


def reduce_channels(values, cores):
    """The backward ports' reduction kernel: the per-element terms `values`
    ([outer, channels, inner]) summed per channel in double, one running sum
    per channel in (outer, inner) order (the library's order, so the bits do
    not depend on the core count), the channels split evenly over the
    cores."""
    outer, channels = values.shape[0], values.shape[1]
    rows = values.reshape(outer, channels, -1)
    total = np.zeros(channels, F64)
    for core, begin, end in core_ranges(channels, cores):
        for c in range(begin, end):
            run = rows[:, c, :].reshape(-1).astype(F64)
            if run.size:
                total[c] = np.add.accumulate(run)[-1]
    return total


def round_grad(total, dtype):
    """Rounded once: to f32 (f64 stays), then to the dtype for halves."""
    ct = compute_type(dtype)
    return total.astype(ct).astype(dtype)


# ================================================================ PReLU

@plan(cores=8, tile_elems=256)
def prelu_fwd_channels_last(x, weight, axis=1):
    """PReLU forward, 8 cores x 256-element tiles, the channel of an element
    taken as flat_index % channels (the NHWC formula the engineer's
    LeakyReLU-to-PReLU port inherited) on NCHW data: most elements get
    another channel's slope."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            idx = np.arange(first, first + count)
            c = idx % channels  # FAULT: channels-last channel index on [outer, channels, inner]
            y[first:first + count] = np.where(v > 0, v, v * w[c]).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def prelu_fwd_weight_broadcast(x, weight, axis=1):
    """PReLU forward in f16 (f32 compute), 8 cores x 256: the slope loaded
    once per tile as a scalar from weight[0] (the shared-slope path of
    F.prelu with a one-element weight), so every channel gets channel 0's
    slope."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            slope = ct(weight.reshape(-1)[0])  # FAULT: weight[0] as the slope of every channel
            y[first:first + count] = np.where(v > 0, v, v * slope).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=512)
def prelu_fwd_rows(x, weight, axis=1):
    """Correct, written differently: 4 cores x 512-element tiles, and inside
    a tile the channel runs (row segments of `inner` elements) walked one by
    one, each with its one slope as a scalar broadcast."""
    cores, tile = 4, 512
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            local = flat[first:first + count].astype(ct)
            out = np.empty(count, x.dtype)
            pos = 0
            while pos < count:
                row = (first + pos) // inner  # the (outer, channel) row
                run = min(count - pos, (row + 1) * inner - (first + pos))
                slope = w[row % channels]
                v = local[pos:pos + run]
                out[pos:pos + run] = np.where(v > 0, v, v * slope).astype(x.dtype)
                pos += run
            y[first:first + count] = out
    return y.reshape(x.shape)


def _prelu_dweight(dy, x, cores, tile):
    """The dweight passes of the PReLU backward ports (correct): per core,
    per tile, the terms x <= 0 ? x * dy : 0 (product in the compute type)
    into a workspace, then reduce_channels and one rounding. The faulty
    dweight kernels below write their reduction out with their mistake."""
    ct = compute_type(x.dtype)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    workspace = np.zeros(xf.size, ct)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            workspace[first:first + count] = np.where(v > 0, ct(0), v * g)
    return round_grad(reduce_channels(workspace.reshape(x.shape), cores), x.dtype)


@plan(cores=4, tile_elems=512)
def prelu_bwd_tiles(dy, x, weight, axis=1):
    """Correct: 4 cores x 512; dx tile by tile (weight gathered by each
    element's channel), the dweight terms into a workspace in the same pass,
    then the reduction kernel (channels over the cores, a running double sum
    per channel in (outer, inner) order) and one rounding to f32."""
    cores, tile = 4, 512
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    terms = np.zeros(xf.size, ct)  # dweight's workspace
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            c = channel_of(np.arange(first, first + count), channels, inner)
            dx[first:first + count] = np.where(v > 0, g, w[c] * g).astype(x.dtype)
            terms[first:first + count] = np.where(v > 0, ct(0), v * g)
    dweight = round_grad(reduce_channels(terms.reshape(x.shape), cores), x.dtype)
    return dx.reshape(x.shape), dweight


@plan(cores=8, tile_elems=256)
def prelu_bwd_weight_stride(dy, x, weight, axis=1):
    """PReLU backward in f16, 8 cores x 256: dx's weight gathered with the
    channel computed as (i // channels) % channels - divided by the channel
    count where the row length `inner` belongs (the wrong stride) - so the
    slope changes every `channels` elements, cycling through all of them.
    dweight (its own pass) is right."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            idx = np.arange(first, first + count)
            c = (idx // channels) % channels  # FAULT: stride `channels`, not `inner`
            dx[first:first + count] = np.where(v > 0, g, w[c] * g).astype(x.dtype)
    return dx.reshape(x.shape), _prelu_dweight(dy, x, cores, tile)


@plan(cores=8, tile_elems=256)
def prelu_bwd_dweight_core_partial_stored(dy, x, weight, axis=1):
    """PReLU backward in f32, 8 cores x 256: dx right; each core reduces its
    range's dweight partial and stores it into the shared dweight buffer
    (a plain copy-out where an atomic add was needed), so dweight holds only
    the last core's partial: the channels it never touched read 0."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    dweight_acc = np.zeros(channels, F64)  # the global workspace
    for core, begin, end in core_ranges(xf.size, cores):
        partial = np.zeros(channels, F64)
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            c = channel_of(np.arange(first, first + count), channels, inner)
            dx[first:first + count] = np.where(v > 0, g, w[c] * g).astype(x.dtype)
            contrib = np.where(v > 0, ct(0), v * g).astype(F64)
            partial += np.bincount(c, weights=contrib, minlength=channels)
        dweight_acc[:] = partial  # FAULT: stored, not added: the last core's partial wins
    return dx.reshape(x.shape), round_grad(dweight_acc, x.dtype)


@plan(cores=8, tile_elems=256)
def prelu_bwd_dweight_tile_overwrite(dy, x, weight, axis=1):
    """PReLU backward in f16, 8 cores x 256: dx right; inside a core each
    tile's per-channel sums are assigned to the core's accumulator instead
    of added (the channels a tile touches keep that tile's part only), so
    dweight sums, per core, just the last tile touching each channel."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    total = np.zeros(channels, F64)
    for core, begin, end in core_ranges(xf.size, cores):
        partial = np.zeros(channels, F64)
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            c = channel_of(np.arange(first, first + count), channels, inner)
            dx[first:first + count] = np.where(v > 0, g, w[c] * g).astype(x.dtype)
            contrib = np.where(v > 0, ct(0), v * g).astype(F64)
            sums = np.bincount(c, weights=contrib, minlength=channels)
            touched = np.unique(c)
            partial[touched] = sums[touched]  # FAULT: = where += was meant
        total += partial
    return dx.reshape(x.shape), round_grad(total, x.dtype)


@plan(cores=8, tile_elems=256)
def prelu_bwd_dweight_channels_last(dy, x, weight, axis=1):
    """PReLU backward in f32, 8 cores x 256: dx right; the dweight pass
    reduces each tile's contributions with the channels-last grouping
    (flat index % channels), i.e. over the wrong axis."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    partials = []
    for core, begin, end in core_ranges(xf.size, cores):
        partial = np.zeros(channels, F64)
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            idx = np.arange(first, first + count)
            dx[first:first + count] = np.where(v > 0, g, w[channel_of(idx, channels, inner)]
                                               * g).astype(x.dtype)
            contrib = np.where(v > 0, ct(0), v * g).astype(F64)
            partial += np.bincount(idx % channels, weights=contrib,  # FAULT: NHWC grouping
                                   minlength=channels)
        partials.append(partial)
    return dx.reshape(x.shape), round_grad(channel_sums(partials, channels), x.dtype)


@plan(cores=8, tile_elems=256)
def prelu_bwd_dweight_f16_accum(dy, x, weight, axis=1):
    """PReLU backward in f16, 8 cores x 256: dx right; dweight accumulated
    in the data type - each contribution rounded to f16 and added into an
    f16 accumulator, element by element, then the cores' f16 partials added
    in f16 - instead of in f32/double with one rounding at the end."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    dweight = np.zeros(channels, x.dtype)
    for core, begin, end in core_ranges(xf.size, cores):
        partial = np.zeros(channels, x.dtype)  # FAULT: the accumulator in the half dtype
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            c = channel_of(np.arange(first, first + count), channels, inner)
            dx[first:first + count] = np.where(v > 0, g, w[c] * g).astype(x.dtype)
            contrib = np.where(v > 0, ct(0), v * g).astype(x.dtype)
            np.add.at(partial, c, contrib)
        dweight += partial
    return dx.reshape(x.shape), dweight


@plan(cores=8, tile_elems=256)
def prelu_bwd_stale_tile(dy, x, weight, axis=1):
    """PReLU backward in f32, 8 cores x 256, dx staged through two output
    buffers (ping-pong): each tile is computed into slot t % 2 but copied out
    of the other slot, which still holds the previous tile's dx (the core's
    first tile: a slot of zeros). dweight (its own pass) is right."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        slots = [np.zeros(tile, x.dtype), np.zeros(tile, x.dtype)]
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            c = channel_of(np.arange(first, first + count), channels, inner)
            slots[t % 2][:count] = np.where(v > 0, g, w[c] * g).astype(x.dtype)
            dx[first:first + count] = slots[(t + 1) % 2][:count]  # FAULT: the other slot
    return dx.reshape(x.shape), _prelu_dweight(dy, x, cores, tile)


@plan(cores=8, tile_elems=256)
def prelu_bwd_dx_uses_x(dy, x, weight, axis=1):
    """PReLU backward in f32, 8 cores x 256: the negative side of dx computed
    as weight[c] * x (the forward's expression pasted) instead of
    weight[c] * dy. dweight (its own pass) is right. No kind names it."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    w = weight.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            c = channel_of(np.arange(first, first + count), channels, inner)
            d = np.where(v > 0, g, w[c] * v)  # FAULT: x, not dy
            dx[first:first + count] = d.astype(x.dtype)
    return dx.reshape(x.shape), _prelu_dweight(dy, x, cores, tile)


# ================================================================ ELU

def elu_tile(v, alpha, scale, input_scale):
    """The port's ELU tile function (v in the compute type): expm1 from the
    vector unit, alpha * scale multiplied in the compute type."""
    ct = v.dtype.type
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(v <= 0, device_expm1(v * i) * (a * s), v * s)


def elu_backward_tile(g, v, alpha, scale, input_scale):
    """The port's ELU backward tile function, from the input."""
    ct = v.dtype.type
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(v <= 0, g * i * (a * s) * device_exp(v * i), g * s)


@plan(cores=1, tile_elems=1024)
def elu_fwd_one_lane(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """Correct, written differently: one core walks everything in 1024-element
    tiles, f16 widened to f32, ELU in f32, rounded once to f16."""
    tile = 1024
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    first = 0
    while first < flat.size:
        count = min(tile, flat.size - first)
        y[first:first + count] = elu_tile(flat[first:first + count].astype(ct), alpha, scale,
                                          input_scale).astype(x.dtype)
        first += count
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def elu_fwd_exp_minus_one(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, 8 cores x 256, the negative side as exp(t) - 1 (the
    vector unit's exp, then a subtraction) instead of expm1: near 0 the
    result loses its digits (exp(-1e-6) - 1 keeps a few bits, tiny inputs
    give 0)."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            with np.errstate(over="ignore", invalid="ignore"):
                em1 = device_exp(v * i) - ct(1)  # FAULT: exp(t) - 1, not expm1(t)
                y[first:first + count] = np.where(v <= 0, em1 * (a * s), v * s).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def elu_fwd_input_scale_ignored(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, 8 cores x 256, ported from F.elu's kernel, which has no
    input scale: the argument is accepted but the exponent is expm1(x), not
    expm1(x * input_scale)."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    a, s = ct(alpha), ct(scale)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            with np.errstate(over="ignore", invalid="ignore"):
                em1 = device_expm1(v)  # FAULT: input_scale never applied
                y[first:first + count] = np.where(v <= 0, em1 * (a * s), v * s).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def elu_fwd_last_tile_dropped(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward, 8 cores x 256, the tile loop bounded by end - tile + 1
    (full tiles only): each core's short last tile is never computed or
    written."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first in range(begin, end - tile + 1, tile):  # FAULT: the short last tile skipped
            y[first:first + tile] = elu_tile(flat[first:first + tile].astype(ct), alpha, scale,
                                             input_scale).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def elu_bwd_alpha_scale_swapped(dy, x, alpha=1.0, scale=1.0, input_scale=1.0,
                                saved_is_result=False):
    """ELU backward (from the input), 8 cores x 256: the tile function called
    with alpha and scale in each other's places. The negative side only uses
    their product and comes out right; the positive side gives dy * alpha
    instead of dy * scale (visible with SELU's alpha and scale)."""
    if saved_is_result:
        raise NotImplementedError("this port computes the gradient from the input only")
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            dx[first:first + count] = elu_backward_tile(
                g, v, scale, alpha, input_scale).astype(x.dtype)  # FAULT: (scale, alpha) swapped
    return dx.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def elu_bwd_uses_result(dy, x, alpha=1.0, scale=1.0, input_scale=1.0, saved_is_result=False):
    """ELU backward, 8 cores x 256: the tile recomputes y and then plugs y,
    not x, into the from-the-input formula dy * input_scale * alpha * scale
    * exp(y * input_scale) (mixing up the two saved forms). No kind names
    it."""
    if saved_is_result:
        raise NotImplementedError("this port computes the gradient from the input only")
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            y = elu_tile(v, alpha, scale, input_scale)
            dx[first:first + count] = elu_backward_tile(
                g, y, alpha, scale, input_scale).astype(x.dtype)  # FAULT: y where x belongs
    return dx.reshape(x.shape)


# ================================================================ RReLU

@plan(cores=8, tile_elems=256)
def rrelu_fwd_training(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """Correct: RReLU forward returning (y, noise), 8 cores x 256; in
    training each tile draws the stream words at its global positions
    offset + i; in evaluation LeakyReLU with slope (lower + upper) / 2."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    noise = np.zeros_like(flat)
    eval_slope = ct((lower + upper) / 2)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            if training:
                positions = np.uint64(offset) + np.arange(first, first + count, dtype=np.uint64)
                r = rrelu_slopes(stream_words(seed, positions), lower, upper, ct)
                y[first:first + count] = np.where(v <= 0, v * r, v).astype(x.dtype)
                noise[first:first + count] = np.where(v <= 0, r, ct(1)).astype(x.dtype)
            else:
                y[first:first + count] = np.where(v > 0, v, v * eval_slope).astype(x.dtype)
                noise[first:first + count] = np.where(v > 0, ct(1), eval_slope).astype(x.dtype)
    return y.reshape(x.shape), noise.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def rrelu_fwd_stream_per_core(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward returning (y, noise), 8 cores x 256: each core numbers
    its stream positions from its own start (offset + i - begin) instead of
    the element's global index, so every core redraws core 0's slopes."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    noise = np.zeros_like(flat)
    eval_slope = ct((lower + upper) / 2)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            if training:
                local = np.arange(first - begin, first - begin + count, dtype=np.uint64)
                positions = np.uint64(offset) + local  # FAULT: core-local position, no + begin
                r = rrelu_slopes(stream_words(seed, positions), lower, upper, ct)
                y[first:first + count] = np.where(v <= 0, v * r, v).astype(x.dtype)
                noise[first:first + count] = np.where(v <= 0, r, ct(1)).astype(x.dtype)
            else:
                y[first:first + count] = np.where(v > 0, v, v * eval_slope).astype(x.dtype)
                noise[first:first + count] = np.where(v > 0, ct(1), eval_slope).astype(x.dtype)
    return y.reshape(x.shape), noise.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def rrelu_bwd_stream_per_tile(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU backward in f16, 8 cores x 256: the slopes are regenerated per
    tile from the positions offset + (i - tile start), so every tile reuses
    the first tile's slopes instead of the forward's."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    dx = np.zeros_like(xf)
    eval_slope = ct((lower + upper) / 2)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            g = gf[first:first + count].astype(ct)
            if training:
                positions = np.uint64(offset) + np.arange(count, dtype=np.uint64)  # FAULT: per tile
                r = rrelu_slopes(stream_words(seed, positions), lower, upper, ct)
                dx[first:first + count] = np.where(v <= 0, g * r, g).astype(x.dtype)
            else:
                dx[first:first + count] = np.where(v > 0, g, g * eval_slope).astype(x.dtype)
    return dx.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def rrelu_fwd_mean_slope_always(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward, 8 cores x 256, written from the inference graph: the
    kernel always applies the evaluation slope (lower + upper) / 2 and never
    looks at `training`, so training gives no random slopes."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    slope = ct((lower + upper) / 2)  # FAULT: the evaluation slope whatever `training` says
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            y[first:first + count] = np.where(v > 0, v, v * slope).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def rrelu_fwd_copies_input_tile(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward (evaluation) in f16, 8 cores x 256: each tile is
    computed into a result buffer, but the copy-out sends the staged input
    tile: the output is the input unchanged."""
    cores, tile = 8, 256
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    slope = ct((lower + upper) / 2)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            in_buf = flat[first:first + count].copy()  # copy-in
            out_buf = np.empty_like(in_buf)
            v = in_buf.astype(ct)
            if training:
                positions = np.uint64(offset) + np.arange(first, first + count, dtype=np.uint64)
                r = rrelu_slopes(stream_words(seed, positions), lower, upper, ct)
                out_buf[:] = np.where(v <= 0, v * r, v).astype(x.dtype)
            else:
                out_buf[:] = np.where(v > 0, v, v * slope).astype(x.dtype)
            y[first:first + count] = in_buf  # FAULT: copy-out from the copy-in buffer
    return y.reshape(x.shape)


# ================================================================ bias_act

def bias_act_tile(v, bias_values, act, alpha, gain, clamp):
    """The port's bias_act tile function: v and bias_values in the compute
    type; PyTorch's order: add, activation, gain, clamp."""
    ct = v.dtype.type
    u = activation(v + bias_values, act, alpha) * ct(gain)
    if clamp >= 0:
        u = np.clip(u, ct(-clamp), ct(clamp))
    return u


@plan(cores=8, tile_elems=256)
def bias_act_fwd_bias_channels_last(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                    axis=1):
    """bias_act forward in f32, 8 cores x 256: the bias gathered with the
    channels-last index (flat % channels) on NCHW data, i.e. along the
    wrong axis."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            bc = bias[np.arange(first, first + count) % channels]  # FAULT: channels-last index
            y[first:first + count] = bias_act_tile(v, bc, act, alpha, gain, clamp).astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def bias_act_fwd_clamp_before_gain(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                   axis=1):
    """bias_act forward in f32, 8 cores x 256: the clamp applied to act(x + b)
    and the gain after it (clamp(act(x + b)) * gain) where the library
    clamps the gained value: outputs reach gain * clamp."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            bc = bias[channel_of(np.arange(first, first + count), channels, inner)]
            u = activation(v + bc, act, alpha)
            if clamp >= 0:
                u = np.clip(u, ct(-clamp), ct(clamp))
            u = u * ct(gain)  # FAULT: the gain after the clamp
            y[first:first + count] = u.astype(x.dtype)
    return y.reshape(x.shape)


@plan(cores=4, tile_elems=512)
def bias_act_fwd_tiles_reversed(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                axis=1):
    """bias_act forward in f16, 4 cores x 512 (every tile full here): each
    core walks its input tiles from the last to the first (to reuse the
    last-loaded bias) while its output pointer advances from the core's
    start, so the core's tiles land in reverse order."""
    cores, tile = 4, 512
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        out = begin
        for t, first, count in reversed(list(tiles(begin, end, tile))):
            v = flat[first:first + count].astype(ct)
            bc = bias[channel_of(np.arange(first, first + count), channels, inner)]
            y[out:out + count] = bias_act_tile(v, bc, act, alpha, gain,  # FAULT: out, not first
                                               clamp).astype(x.dtype)
            out += count
    return y.reshape(x.shape)


@plan(cores=8, tile_elems=256)
def bias_act_fwd_act_name(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """bias_act forward in f32, 8 cores x 256: the activation chosen by
    comparing `act` with PyTorch's name "leaky_relu"; the op's name is
    "lrelu", so LeakyReLU falls through to the ReLU branch (negative side 0
    instead of alpha * v). No kind names it."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            v = v + bias[channel_of(np.arange(first, first + count), channels, inner)]
            if act == "linear":
                u = v
            elif act == "leaky_relu":  # FAULT: never true: the op says "lrelu"
                u = np.where(v > 0, v, v * ct(alpha))
            else:
                u = np.where(v < 0, ct(0), v)
            u = u * ct(gain)
            if clamp >= 0:
                u = np.clip(u, ct(-clamp), ct(clamp))
            y[first:first + count] = u.astype(x.dtype)
    return y.reshape(x.shape)


def bias_act_backward_tile(g, v, act, alpha, gain, clamp):
    """bias_act's backward on a tile (g = dy, v = x + b, both in the compute
    type): clamp's mask on the pre-clamp value, then the gain, then the
    activation's gradient (PyTorch's autograd order)."""
    ct = v.dtype.type
    if clamp >= 0:
        pre = activation(v, act, alpha) * ct(gain)
        g = np.where((pre >= ct(-clamp)) & (pre <= ct(clamp)), g, ct(0))
    return activation_grad(g * ct(gain), v, act, alpha)


def _bias_act_db(dx, cores):
    """db (correct): dx, as stored in the dtype, through the reduction
    kernel, rounded once."""
    return round_grad(reduce_channels(dx, cores), dx.dtype)


@plan(cores=4, tile_elems=384)
def bias_act_bwd_cursor(dy, x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """Correct, written differently: bias_act backward, 4 cores, each walking
    its range with a cursor loop in 384-element tiles; dx per tile, then db
    by the reduction kernel over dx as stored (channels over the cores, a
    running double sum per channel in (outer, inner) order), rounded once."""
    cores, tile = 4, 384
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    bias = None if b is None else b.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        cursor = begin
        while cursor < end:
            count = min(tile, end - cursor)
            c = channel_of(np.arange(cursor, cursor + count), channels, inner)
            v = xf[cursor:cursor + count].astype(ct)
            if bias is not None:
                v = v + bias[c]
            g = gf[cursor:cursor + count].astype(ct)
            d = bias_act_backward_tile(g, v, act, alpha, gain, clamp).astype(x.dtype)
            dx[cursor:cursor + count] = d
            cursor += count
    dx = dx.reshape(x.shape)
    db = None if b is None else round_grad(reduce_channels(dx, cores), x.dtype)
    return dx, db


@plan(cores=8, tile_elems=256)
def bias_act_bwd_bias_channels_last(dy, x, b=None, act="lrelu", alpha=None, gain=None,
                                    clamp=None, axis=1):
    """bias_act backward in f16, 8 cores x 256: the recomputed
    pre-activation x + b gathers the bias channels-last (flat % channels),
    along the wrong axis, so the activation's and the clamp's masks are taken
    at the wrong values (db, summed from dx by its own pass, follows)."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            v = v + bias[np.arange(first, first + count) % channels]  # FAULT: channels-last index
            g = gf[first:first + count].astype(ct)
            dx[first:first + count] = bias_act_backward_tile(g, v, act, alpha, gain,
                                                             clamp).astype(x.dtype)
    db = None if b is None else _bias_act_db(dx.reshape(x.shape), cores)
    return dx.reshape(x.shape), db


@plan(cores=8, tile_elems=256)
def bias_act_bwd_clamp_grad_missing(dy, x, b=None, act="lrelu", alpha=None, gain=None,
                                    clamp=None, axis=1):
    """bias_act backward in f32, 8 cores x 256, ported from the unclamped
    FusedBiasLeakyRelu backward: clamp's mask is never applied, so the
    gradient also flows where the forward clamped the value."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            v = xf[first:first + count].astype(ct)
            v = v + bias[channel_of(np.arange(first, first + count), channels, inner)]
            g = gf[first:first + count].astype(ct)
            d = activation_grad(g * ct(gain), v, act, alpha)  # FAULT: no clamp mask
            dx[first:first + count] = d.astype(x.dtype)
    db = None if b is None else _bias_act_db(dx.reshape(x.shape), cores)
    return dx.reshape(x.shape), db


# ================================================================ bias_act_dropout

def set_mask_bits(mask, index, keep):
    """Sets bit index % 8 of byte index // 8 for the kept elements (an atomic
    OR on the device: two cores may share a byte)."""
    np.bitwise_or.at(mask, index >> 3, (keep.astype(np.uint8) << (index & 7).astype(np.uint8)))


def kept_from_mask(mask, index):
    return ((mask[index >> 3] >> (index & 7).astype(np.uint8)) & np.uint8(1)).astype(bool)


@plan(cores=4, tile_elems=512)
def bias_act_dropout_fwd_tiles(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                               dropout_p=0.5, seed=0, offset=0, axis=1):
    """Correct: bias_act + dropout forward, 4 cores x 512, keep decisions at
    the global stream positions offset + i, kept values scaled by 1 / (1 - p)
    in the compute type, the mask's bits ORed in LSB first."""
    cores, tile = 4, 512
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    scale = ct(1) / ct(1.0 - dropout_p)
    y = np.zeros_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            idx = np.arange(first, first + count)
            v = flat[first:first + count].astype(ct)
            u = bias_act_tile(v, bias[channel_of(idx, channels, inner)], act, alpha, gain, clamp)
            keep = dropout_keep(seed, np.uint64(offset) + idx.astype(np.uint64), dropout_p)
            y[first:first + count] = (u * np.where(keep, scale, ct(0))).astype(x.dtype)
            set_mask_bits(mask, idx, keep)
    return y.reshape(x.shape), mask


@plan(cores=8, tile_elems=256)
def bias_act_dropout_fwd_no_rescale(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                    dropout_p=0.5, seed=0, offset=0, axis=1):
    """bias_act + dropout forward in f32, 8 cores x 256: dropped values
    zeroed but the kept ones not scaled by 1 / (1 - p) (the mask is
    right)."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    y = np.zeros_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            idx = np.arange(first, first + count)
            v = flat[first:first + count].astype(ct)
            u = bias_act_tile(v, bias[channel_of(idx, channels, inner)], act, alpha, gain, clamp)
            keep = dropout_keep(seed, np.uint64(offset) + idx.astype(np.uint64), dropout_p)
            kept = np.where(keep, ct(1), ct(0))  # FAULT: 1 for kept, not 1 / (1 - p)
            y[first:first + count] = (u * kept).astype(x.dtype)
            set_mask_bits(mask, idx, keep)
    return y.reshape(x.shape), mask


@plan(cores=8, tile_elems=256)
def bias_act_dropout_fwd_mask_msb_first(x, b=None, act="lrelu", alpha=None, gain=None,
                                        clamp=None, dropout_p=0.5, seed=0, offset=0, axis=1):
    """bias_act + dropout forward in f16, 8 cores x 256: y right, but the mask
    packed MSB first (element i in bit 7 - i % 8, np.packbits' default
    order) where the library puts it in bit i % 8."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    scale = ct(1) / ct(1.0 - dropout_p)
    y = np.zeros_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    for core, begin, end in core_ranges(flat.size, cores):
        for t, first, count in tiles(begin, end, tile):
            idx = np.arange(first, first + count)
            v = flat[first:first + count].astype(ct)
            u = bias_act_tile(v, bias[channel_of(idx, channels, inner)], act, alpha, gain, clamp)
            keep = dropout_keep(seed, np.uint64(offset) + idx.astype(np.uint64), dropout_p)
            y[first:first + count] = (u * np.where(keep, scale, ct(0))).astype(x.dtype)
            bit = (7 - (idx & 7)).astype(np.uint8)  # FAULT: MSB first
            np.bitwise_or.at(mask, idx >> 3, keep.astype(np.uint8) << bit)
    return y.reshape(x.shape), mask


@plan(cores=8, tile_elems=256)
def bias_act_dropout_fwd_stream_per_core(x, b=None, act="lrelu", alpha=None, gain=None,
                                         clamp=None, dropout_p=0.5, seed=0, offset=0, axis=1):
    """bias_act + dropout forward in f32, 8 cores x 256: each core's keep
    decisions drawn from stream position offset + (i - begin), the core's
    own numbering, so every core repeats core 0's keep pattern (y and mask
    both follow)."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    flat = x.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    scale = ct(1) / ct(1.0 - dropout_p)
    y = np.zeros_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    for core, begin, end in core_ranges(flat.size, cores):
        stream_base = np.uint64(offset)  # FAULT: the core's begin never added
        for t, first, count in tiles(begin, end, tile):
            idx = np.arange(first, first + count)
            v = flat[first:first + count].astype(ct)
            u = bias_act_tile(v, bias[channel_of(idx, channels, inner)], act, alpha, gain, clamp)
            keep = dropout_keep(seed, stream_base + (idx - begin).astype(np.uint64), dropout_p)
            y[first:first + count] = (u * np.where(keep, scale, ct(0))).astype(x.dtype)
            set_mask_bits(mask, idx, keep)
    return y.reshape(x.shape), mask


@plan(cores=8, tile_elems=256)
def bias_act_dropout_bwd_no_rescale(dy, x, b, mask, act="lrelu", alpha=None, gain=None,
                                    clamp=None, dropout_p=0.5, axis=1):
    """bias_act + dropout backward in f32, 8 cores x 256 (leaky/family.h's
    argument order, as check_op passes it: dy, x, bias, mask): dy zeroed where the mask says dropped
    but not scaled by 1 / (1 - p) where kept, then bias_act's backward; db
    (its own pass over dx) follows."""
    cores, tile = 8, 256
    alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    ct = compute_type(x.dtype)
    channels, inner = nchw(x)
    xf, gf = x.reshape(-1), dy.reshape(-1)
    bias = np.zeros(channels, ct) if b is None else b.reshape(-1).astype(ct)
    dx = np.zeros_like(xf)
    for core, begin, end in core_ranges(xf.size, cores):
        for t, first, count in tiles(begin, end, tile):
            idx = np.arange(first, first + count)
            v = xf[first:first + count].astype(ct) + bias[channel_of(idx, channels, inner)]
            g = gf[first:first + count].astype(ct)
            g = g * np.where(kept_from_mask(mask, idx), ct(1), ct(0))  # FAULT: 1, not 1/(1-p)
            dx[first:first + count] = bias_act_backward_tile(g, v, act, alpha, gain,
                                                             clamp).astype(x.dtype)
    db = None if b is None else _bias_act_db(dx.reshape(x.shape), cores)
    return dx.reshape(x.shape), db

"""A sealed set of NumPy kernels for leaky's activation family (PReLU, ELU,
RReLU, bias_act, bias_act_dropout), written as an engineer porting the ops to
an AI accelerator would write them: the flattened tensor split evenly over
`cores` (core k takes [k * step, k * step + len), step = total // cores, the
last core also the remainder), each core walking its range tile by tile
(tile_elems elements, the last tile short). Most kernels carry one realistic
mistake, marked `# FAULT` on the faulty line; a few are correct, written in
an unusual way. sealed_cases.json says which function runs with which op,
direction, dtype, data size, scalars and plan, and the finding expected.

Calling convention (mirrors leaky.numpy's keyword names and outputs):
    elu              fn(x, alpha=, scale=, input_scale=) -> y
    elu backward     fn(dy, x, alpha=, scale=, input_scale=) -> dx
    prelu            fn(x, weight) -> y
    prelu backward   fn(dy, x, weight) -> (dx, dweight)
    rrelu            fn(x, lower=, upper=, training=, seed=, offset=) -> y or (y, noise)
    rrelu backward   fn(dy, x, lower=, upper=, training=, seed=, offset=) -> dx
    bias_act         fn(x, b, act=, alpha=, gain=, clamp=) -> y
    bias_act bwd     fn(dy, x, b, act=, alpha=, gain=, clamp=) -> (dx, db)
    bias_act_dropout fn(x, b, act=, alpha=, gain=, clamp=, dropout_p=, seed=, offset=) -> (y, mask)
    ... backward     fn(dy, x, b, mask, act=, alpha=, gain=, clamp=, dropout_p=) -> (dx, db)
PReLU's and bias_act's x is [outer, channels, inner] (channels on axis 1).
Outputs start as zeros, as a device harness's do: what a kernel never
writes reads as 0.

Every kernel models its cores and tiles with the geometry its @plan(...)
records; the case passes the same plan, so a diagnosis can map the output
to the cores and tiles the kernel really used.
"""
import functools
import math

import numpy as np

F16, F32, F64 = np.float16, np.float32, np.float64
U32, U64 = np.uint32, np.uint64


def plan(**geometry):
    """Records the geometry a kernel models (checked against its case) and
    runs it with NumPy's floating-point warnings silenced (overflow to inf
    and NaN are the op's, not errors)."""
    def mark(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with np.errstate(all="ignore"):
                return fn(*args, **kwargs)
        run.plan = dict(geometry)
        return run
    return mark


# ---------------------------------------------------------------- geometry

def core_ranges(total, cores):
    """The even split: (core, begin, end) for every core."""
    step = total // cores
    for core in range(cores):
        begin = core * step
        end = total if core == cores - 1 else begin + step
        yield core, begin, end


def tiles(begin, end, tile):
    """(first, count) for each tile of [begin, end), the last one short."""
    for first in range(begin, end, tile):
        yield first, min(tile, end - first)


def layout(x):
    """[outer, channels, inner] of a channel op's input (channels on axis 1)."""
    if x.ndim < 2:
        return 1, 1, x.size
    return x.shape[0], x.shape[1], int(np.prod(x.shape[2:], dtype=np.int64))


def channel_of(first, count, channels, inner):
    """Channel index of the flattened elements [first, first + count)."""
    return (np.arange(first, first + count, dtype=np.int64) // inner) % channels


def compute_type(dtype):
    """f64 computes in f64; f32 and f16 in f32."""
    return F64 if np.dtype(dtype) == F64 else F32


# ---------------------------------------------------------------- Philox4x32-10

def philox4x32(counter, seed):
    """Philox4x32-10 of 64-bit counters {lo, hi, 0, 0} under key {seed lo,
    seed hi}: the four 32-bit output words (uint32 arrays)."""
    c = np.asarray(counter, U64)
    low = U64(0xFFFFFFFF)
    x0, x1 = c & low, c >> U64(32)
    x2, x3 = np.zeros_like(x0), np.zeros_like(x0)
    k0, k1 = seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = U64(0xD2511F53) * x0, U64(0xCD9E8D57) * x2
        x0, x1, x2, x3 = ((p1 >> U64(32)) ^ x1 ^ U64(k0), p1 & low,
                          (p0 >> U64(32)) ^ x3 ^ U64(k1), p0 & low)
        k0, k1 = (k0 + 0x9E3779B9) & 0xFFFFFFFF, (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return [w.astype(U32) for w in (x0, x1, x2, x3)]


def stream_words(positions, seed):
    """Word s of the stream of `seed`: word (s % 64) / 16 of counter
    (s / 64) * 16 + s % 16."""
    s = np.asarray(positions, U64)
    words = philox4x32((s // U64(64)) * U64(16) + s % U64(16), seed)
    return np.choose(((s % U64(64)) // U64(16)).astype(np.int64), words)


def stream_positions(offset, first, count):
    """offset + [first, first + count) as uint64 (mod 2^64)."""
    return np.arange(first, first + count, dtype=U64) + U64(offset)


def rrelu_slopes(positions, seed, lower, upper, ct):
    """r = lower + u * (upper - lower) in the compute type: u = (w >> 8) *
    2^-24 in f32, w * 2^-32 in f64."""
    w = stream_words(positions, seed)
    if ct == F64:
        u = w.astype(F64) * F64(2.0 ** -32)
    else:
        u = (w >> U32(8)).astype(F32) * F32(2.0 ** -24)
    lo, hi = ct(lower), ct(upper)
    return lo + u * (hi - lo)


def dropout_bits(positions, seed):
    """16 bits per stream position s: the low half (s % 128 < 64) or the
    high half of word 64 * (s / 128) + s % 64."""
    s = np.asarray(positions, U64)
    w = stream_words(U64(64) * (s // U64(128)) + s % U64(64), seed)
    high = (s % U64(128)) >= U64(64)
    return np.where(high, w >> U32(16), w & U32(0xFFFF))


def keep_threshold(p):
    return math.ceil(float(p) * 65536.0)


def dropout_scale(p, ct):
    """1 / (1 - p) in the compute type from 1 - p rounded to it."""
    return ct(1) / ct(1.0 - float(p))


# ---------------------------------------------------------------- per-tile math

def expm1_ct(t):
    """expm1 in the compute type, rounded once (f32 from f64); a zero gives
    +0 (as PyTorch's elu and the library: ELU(-0) = +0)."""
    if t.dtype == F32:
        return np.expm1(t.astype(F64)).astype(F32) + F32(0)
    return np.expm1(t) + t.dtype.type(0)


def exp_ct(t):
    if t.dtype == F32:
        return np.exp(t.astype(F64)).astype(F32)
    return np.exp(t)


def elu_values(xs, alpha, scale, input_scale):
    """ELU of a tile in the compute type (not yet rounded to the dtype)."""
    ct = compute_type(xs.dtype)
    w = xs.astype(ct)
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    return np.where(w <= 0, expm1_ct(w * i) * (a * s), w * s)


def elu_grad_values(gs, xs, alpha, scale, input_scale):
    """ELU's gradient from the input, in the compute type."""
    ct = compute_type(xs.dtype)
    g, w = gs.astype(ct), xs.astype(ct)
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    return np.where(w <= 0, g * i * (a * s) * exp_ct(w * i), g * s)


def elu_grad_from_result(gs, ys, alpha, scale, input_scale):
    ct = compute_type(ys.dtype)
    g, y = gs.astype(ct), ys.astype(ct)
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    return np.where(y <= 0, g * i * (y + a * s), g * s)


def bias_act_scalars(act, alpha, gain, clamp):
    """StyleGAN's defaults for the scalars not given; clamp None: none."""
    act = "lrelu" if act is None else str(act)
    if alpha is None:
        alpha = 0.2
    if gain is None:
        gain = 1.0 if act == "linear" else math.sqrt(2.0)
    clamp = -1.0 if clamp is None else float(clamp)
    return act, float(alpha), float(gain), clamp


def bias_slice(b, first, count, channels, inner, ct):
    if b is None:
        return ct(0)
    return np.asarray(b).astype(ct)[channel_of(first, count, channels, inner)]


def activation(v, act, alpha, ct):
    if act == "lrelu":
        return np.where(v > 0, v, v * ct(alpha))
    if act == "relu":
        return np.where(v < 0, ct(0), v)
    return v


def bias_act_values(xs, bs, act, alpha, gain, clamp, ct):
    """clamp(act(x + b) * gain, -clamp, clamp) in the compute type."""
    v = xs.astype(ct) + bs
    y = activation(v, act, alpha, ct) * ct(gain)
    if clamp >= 0:
        y = np.clip(y, -ct(clamp), ct(clamp))
    return y


def bias_act_grad_values(gs, xs, bs, act, alpha, gain, clamp, ct):
    """bias_act's dx in the compute type (PyTorch's autograd order: the
    clamp's pass mask, then gain, then the activation's derivative)."""
    v = xs.astype(ct) + bs
    a = activation(v, act, alpha, ct)
    g = gs.astype(ct)
    if clamp >= 0:
        pre = a * ct(gain)
        g = np.where((pre >= -ct(clamp)) & (pre <= ct(clamp)), g, ct(0))
    g = g * ct(gain)
    if act == "lrelu":
        g = np.where(v > 0, g, g * ct(alpha))
    elif act == "relu":
        g = np.where(a <= 0, ct(0), g)
    return g


def channel_sums(values, channels, inner):
    """Per channel, the sum in double over (outer, inner) in that order,
    one element after another (the library's fixed order). PReLU's dweight
    sums the products in the compute type; bias_act's db sums dx as stored
    (rounded to the dtype)."""
    v = np.asarray(values, F64).reshape(-1, channels, inner).transpose(1, 0, 2)
    v = v.reshape(channels, -1)
    if v.shape[1] == 0:
        return np.zeros(channels, F64)
    return np.cumsum(v, axis=1)[:, -1]


def round_reduction(sums, dtype):
    """Rounded once: f64 stays f64; f32 and half types to float, then to
    the type."""
    if np.dtype(dtype) == F64:
        return sums.astype(F64)
    return sums.astype(F32).astype(dtype)


def split_bias_mask(b, mask):
    """bias_act_dropout's backward takes (b, mask) in family.h's order and
    leaky.numpy's takes (mask, b): whichever came first, the uint8 one is
    the mask."""
    if b is not None and np.asarray(b).dtype == np.uint8:
        return mask, b
    return b, mask


def unpack_mask(mask, first, count):
    """The keep bits of elements [first, first + count): bit i % 8 of byte i // 8."""
    bits = np.unpackbits(np.asarray(mask, np.uint8), bitorder="little")
    return bits[first:first + count].astype(bool)


# ================================================================ PReLU

@plan(split="even", cores=6, tile_elems=512, buffers=2)
def prelu_nhwc_channel_stride(x, weight, axis=1):
    """PReLU forward ported from the engineer's first (channels-last) kernel:
    the channel of each element is taken as its flat index modulo the
    channel count, the NHWC stride, which is right only when inner == 1;
    for NCHW data the weights land on the wrong elements."""
    cores, tile = 6, 512
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).astype(ct).reshape(-1)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            xs = flat[first:first + count].astype(ct)
            c = np.arange(first, first + count) % channels  # FAULT: NHWC stride, NCHW needs (i // inner) % channels
            y[first:first + count] = np.where(xs > 0, xs, w[c] * xs).astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=4, tile_elems=1024, buffers=2)
def prelu_shared_slope_fast_path(x, weight, axis=1):
    """PReLU forward with a fast path for the single shared slope
    (num_parameters=1: one scalar broadcast into a register, no per-element
    weight gather). The guard tests the weight's rank instead of its size,
    so every 1-D weight takes the fast path and weight[0] scales the
    negative inputs of every channel."""
    cores, tile = 4, 1024
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).astype(ct)
    shared = w.ndim <= 1  # FAULT: meant w.size == 1; every 1-D weight is taken as one shared slope
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            xs = flat[first:first + count].astype(ct)
            if shared:
                slope = w.reshape(-1)[0]
                out = np.where(xs > 0, xs, slope * xs)
            else:
                out = np.where(xs > 0, xs, w.reshape(-1)[channel_of(first, count, channels, inner)] * xs)
            y[first:first + count] = out.astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=8, tile_elems=256, buffers=2)
def prelu_backward_core_partials_stored(dy, x, weight, axis=1):
    """PReLU backward: dx tile by tile; dweight from per-core partial sums
    (in double, per channel) that each core stores into the output instead
    of adding to it (the atomic add of the device port became a plain
    store): each channel keeps only the partial of the last core that
    touched it, the other cores' contributions are never reduced in."""
    cores, tile = 8, 256
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).astype(ct).reshape(-1)
    fx, fg = x.reshape(-1), dy.reshape(-1)
    dx = np.zeros_like(fx)
    dweight = np.zeros(channels, F64)
    for core, begin, end in core_ranges(fx.size, cores):
        partial = np.zeros(channels, F64)
        touched = np.zeros(channels, bool)
        for first, count in tiles(begin, end, tile):
            xs, gs = fx[first:first + count].astype(ct), fg[first:first + count].astype(ct)
            c = channel_of(first, count, channels, inner)
            dx[first:first + count] = np.where(xs > 0, gs, w[c] * gs).astype(x.dtype)
            np.add.at(partial, c, np.where(xs > 0, ct(0), xs * gs).astype(F64))
            touched[c] = True
        dweight[touched] = partial[touched]  # FAULT: stored, not added to the other cores' partials
    return dx.reshape(x.shape), round_reduction(dweight, x.dtype)


@plan(split="even", cores=7, tile_elems=2048, buffers=2)
def prelu_backward_workspace_reshaped(dy, x, weight, axis=1):
    """PReLU backward in two passes: the cores write dx and each element's
    dweight term (x * dy where x <= 0) to a workspace laid out like x, then
    one pass reduces the workspace per channel. That reduction was copied
    from the engineer's channels-last kernel: it views the workspace as
    [outer * inner, channels] and sums down the columns, so for NCHW data
    "channel" k collects the elements whose flat index is k modulo the
    channel count, whatever their channel (right only when inner == 1)."""
    cores, tile = 7, 2048
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).astype(ct).reshape(-1)
    fx, fg = x.reshape(-1), dy.reshape(-1)
    dx = np.zeros_like(fx)
    work = np.zeros(fx.size, F64)
    for core, begin, end in core_ranges(fx.size, cores):
        for first, count in tiles(begin, end, tile):
            xs, gs = fx[first:first + count].astype(ct), fg[first:first + count].astype(ct)
            c = channel_of(first, count, channels, inner)
            dx[first:first + count] = np.where(xs > 0, gs, w[c] * gs).astype(x.dtype)
            work[first:first + count] = np.where(xs > 0, ct(0), xs * gs)
    columns = work.reshape(-1, channels).T  # FAULT: memory is [outer, channels, inner]: reduce reshape(outer, channels, inner) over axes 0 and 2
    dweight = np.cumsum(columns, axis=1)[:, -1] if columns.shape[1] else np.zeros(channels)
    return dx.reshape(x.shape), round_reduction(dweight, x.dtype)


@plan(split="even", cores=3, tile_elems=1536, buffers=2)
def prelu_backward_half_accumulator(dy, x, weight, axis=1):
    """PReLU backward in float16: dx right (computed in f32, rounded once);
    dweight accumulated in the weight's own type, as the vector unit's
    reduce instruction takes it: each tile's products of a channel summed by
    np.add.reduce with dtype=float16 and added to a float16 running sum, so
    every partial sum is rounded to f16 (and large sums lose their low
    digits) instead of accumulating in double and rounding once."""
    cores, tile = 3, 1536
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).astype(ct).reshape(-1)
    fx, fg = x.reshape(-1), dy.reshape(-1)
    dx = np.zeros_like(fx)
    acc = np.zeros(channels, x.dtype)
    for core, begin, end in core_ranges(fx.size, cores):
        for first, count in tiles(begin, end, tile):
            xs, gs = fx[first:first + count].astype(ct), fg[first:first + count].astype(ct)
            c = channel_of(first, count, channels, inner)
            dx[first:first + count] = np.where(xs > 0, gs, w[c] * gs).astype(x.dtype)
            terms = np.where(xs > 0, ct(0), xs * gs)
            for k in np.unique(c):
                acc[k] = acc[k] + np.add.reduce(terms[c == k], dtype=x.dtype)  # FAULT: accumulated in the half dtype
    return dx.reshape(x.shape), acc


@plan(split="even", cores=5, tile_elems=384, buffers=2)
def prelu_rows_cores_reversed(x, weight, axis=1):
    """Correct, written differently: the cores are issued last to first and
    each walks its tiles from its end back to its start; inside a tile the
    elements are split at channel-row boundaries (runs of `inner` elements
    share one weight), so each run is scaled by one scalar weight instead of
    a per-element gather."""
    cores, tile = 5, 384
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    w = np.asarray(weight).astype(ct).reshape(-1)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in reversed(list(core_ranges(flat.size, cores))):
        for first, count in reversed(list(tiles(begin, end, tile))):
            pos, stop = first, first + count
            while pos < stop:
                row = pos // inner
                run_end = min(stop, (row + 1) * inner)
                slope = w[row % channels] if w.size > 1 else w[0]
                seg = flat[pos:run_end].astype(ct)
                y[pos:run_end] = np.where(seg > 0, seg, slope * seg).astype(x.dtype)
                pos = run_end
    return y.reshape(x.shape)


# ================================================================ ELU

@plan(split="even", cores=4, tile_elems=2048, buffers=2)
def elu_exp_minus_one(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward with the negative branch written from the textbook
    formula alpha * (exp(x) - 1): exp, then 1 subtracted in the compute
    type. For small negative inputs the subtraction cancels: elu(-1e-9) is
    0 or a multiple of f32's ulp at 1 instead of -1e-9."""
    cores, tile = 4, 2048
    ct = compute_type(x.dtype)
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            w = flat[first:first + count].astype(ct)
            negative = (exp_ct(w * i) - ct(1)) * (a * s)  # FAULT: exp(t) - 1, not expm1(t)
            y[first:first + count] = np.where(w <= 0, negative, w * s).astype(x.dtype)
    return y.reshape(x.shape)


def _selu_tile(w, alpha, scale, input_scale):
    """The engineer's tile helper: (alpha, scale) in that order."""
    ct = w.dtype.type
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    return np.where(w <= 0, expm1_ct(w * i) * (a * s), w * s)


@plan(split="even", cores=7, tile_elems=1024, buffers=2)
def selu_helper_arguments_swapped(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU/SELU forward through a tile helper taking (alpha, scale), called
    positionally with (scale, alpha) copied from the caller's (x, scale,
    alpha) order of another code base. The negative side multiplies by
    alpha * scale either way; the positive side comes out x * alpha instead
    of x * scale."""
    cores, tile = 7, 1024
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            w = flat[first:first + count].astype(ct)
            out = _selu_tile(w, scale, alpha, input_scale)  # FAULT: helper takes (alpha, scale)
            y[first:first + count] = out.astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=2, tile_elems=4096, buffers=2)
def elu_backward_chain_factor_dropped(dy, x, alpha=1.0, scale=1.0, input_scale=1.0,
                                      saved_is_result=False):
    """ELU backward: the derivative of expm1(input_scale * x) * alpha * scale
    written as alpha * scale * exp(input_scale * x), the chain rule's inner
    factor input_scale dropped (from the result: dy * (y + alpha * scale),
    the same factor missing). Invisible with input_scale = 1."""
    cores, tile = 2, 4096
    ct = compute_type(x.dtype)
    a, s, i = ct(alpha), ct(scale), ct(input_scale)
    fg, fx = dy.reshape(-1), x.reshape(-1)
    dx = np.zeros_like(fg)
    for core, begin, end in core_ranges(fg.size, cores):
        for first, count in tiles(begin, end, tile):
            g, w = fg[first:first + count].astype(ct), fx[first:first + count].astype(ct)
            if saved_is_result:
                negative = g * (w + a * s)  # FAULT: dy * input_scale * (y + alpha * scale)
            else:
                negative = g * (a * s) * exp_ct(w * i)  # FAULT: dy * input_scale * (alpha * scale) * exp(x * input_scale)
            dx[first:first + count] = np.where(w <= 0, negative, g * s).astype(x.dtype)
    return dx.reshape(dy.shape)


@plan(split="even", cores=16, tile_elems=128, buffers=2)
def elu_remainder_never_walked(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """ELU forward where every core's length is step = total // cores: the
    last core was meant to take the total % cores elements left over as
    well, but the length is computed once for all cores, so those last
    elements are never walked and keep the output buffer's zeros."""
    cores, tile = 16, 128
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    step = flat.size // cores
    for core in range(cores):
        begin = core * step
        end = begin + step  # FAULT: the last core must end at flat.size
        for first in range(begin, end, tile):
            count = min(tile, end - first)
            y[first:first + count] = elu_values(flat[first:first + count], alpha, scale,
                                                input_scale).astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=3, tile_elems=4096, buffers=2)
def elu_half_lookup_table(x, alpha=1.0, scale=1.0, input_scale=1.0):
    """Correct, written differently (float16 only): with 65536 possible
    inputs the kernel builds ELU's whole table once per call (each entry
    computed in f32 and rounded once to f16, as a tile would be), and each
    core's tiles gather their results from it by the inputs' bit patterns."""
    assert x.dtype == F16, "the table form is for float16 data"
    cores, tile = 3, 4096
    every_half = np.arange(65536, dtype=np.uint16).view(F16)
    table = elu_values(every_half, alpha, scale, input_scale).astype(F16)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            y[first:first + count] = table[flat[first:first + count].view(np.uint16)]
    return y.reshape(x.shape)


# ================================================================ RReLU

@plan(split="even", cores=4, tile_elems=512, buffers=2)
def rrelu_tile_local_stream(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward returning (y, noise). The generator call inside the tile
    loop is given the loop's tile-local index as the stream position, so
    each tile restarts the stream at `offset`: every tile draws the same
    slopes, where element i must take position offset + i."""
    cores, tile = 4, 512
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y, noise = np.zeros_like(flat), np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            w = flat[first:first + count].astype(ct)
            if training:
                r = rrelu_slopes(stream_positions(offset, 0, count), seed, lower, upper, ct)  # FAULT: tile-local positions, not offset + first + j
                y[first:first + count] = np.where(w <= 0, w * r, w).astype(x.dtype)
                noise[first:first + count] = np.where(w <= 0, r, ct(1)).astype(x.dtype)
            else:
                slope = ct((lower + upper) / 2)
                y[first:first + count] = np.where(w > 0, w, w * slope).astype(x.dtype)
    return (y.reshape(x.shape), noise.reshape(x.shape)) if training else y.reshape(x.shape)


@plan(split="even", cores=10, tile_elems=128, buffers=2)
def rrelu_backward_mean_slope(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU backward written without the noise tensor: instead of drawing
    each element's slope again from (seed, offset) it scales every
    non-positive input's gradient by the expected slope (lower + upper) / 2,
    evaluation's rule, in training too."""
    cores, tile = 10, 128
    ct = compute_type(x.dtype)
    slope = ct((lower + upper) / 2)  # FAULT: training must redraw r from (seed, offset)
    fg, fx = dy.reshape(-1), x.reshape(-1)
    dx = np.zeros_like(fg)
    for core, begin, end in core_ranges(fg.size, cores):
        for first, count in tiles(begin, end, tile):
            g, w = fg[first:first + count].astype(ct), fx[first:first + count].astype(ct)
            dx[first:first + count] = np.where(w > 0, g, g * slope).astype(dy.dtype)
    return dx.reshape(dy.shape)


@plan(split="even", cores=3, tile_elems=4096, buffers=2)
def rrelu_f64_uniform_24_bits(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """RReLU forward whose f64 path reuses the f32 kernel's conversion of a
    stream word to a uniform, u = (w >> 8) * 2^-24 (24 bits), where f64
    takes all 32: u = w * 2^-32. The right words at the right positions,
    slopes off in their low bits."""
    cores, tile = 3, 4096
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            w = flat[first:first + count].astype(ct)
            if training:
                words = stream_words(stream_positions(offset, first, count), seed)
                u = (words >> U32(8)).astype(ct) * ct(2.0 ** -24)  # FAULT: f64 takes u = w * 2^-32
                r = ct(lower) + u * (ct(upper) - ct(lower))
                y[first:first + count] = np.where(w <= 0, w * r, w).astype(x.dtype)
            else:
                slope = ct((lower + upper) / 2)
                y[first:first + count] = np.where(w > 0, w, w * slope).astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=9, tile_elems=640, buffers=2)
def rrelu_counter_blocks(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0):
    """Correct, written differently: RReLU forward returning (y, noise) in
    training. Per tile, Philox runs once per 64-word block of the stream
    that the tile's positions touch (16 consecutive counters, 4 words each,
    laid out word-major as the stream defines: position 64g + 16w + j is
    word w of counter 16g + j), and the tile's words are sliced out of the
    blocks instead of being addressed one position at a time."""
    cores, tile = 9, 640
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y, noise = np.zeros_like(flat), np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            w = flat[first:first + count].astype(ct)
            if not training:
                slope = ct((lower + upper) / 2)
                y[first:first + count] = np.where(w > 0, w, w * slope).astype(x.dtype)
                continue
            s0 = int(offset) + first  # offset + n <= 2^64: no wrap
            g0, g1 = s0 // 64, (s0 + count - 1) // 64 + 1
            counters = (np.arange(g1 - g0, dtype=U64)[:, None] + U64(g0)) * U64(16) \
                + np.arange(16, dtype=U64)[None, :]
            blocks = np.stack([part.reshape(-1, 16)
                               for part in philox4x32(counters.reshape(-1), seed)], axis=1)
            stream = blocks.reshape(-1)[s0 - 64 * g0:][:count]
            if ct == F64:
                u = stream.astype(F64) * F64(2.0 ** -32)
            else:
                u = (stream >> U32(8)).astype(F32) * F32(2.0 ** -24)
            r = ct(lower) + u * (ct(upper) - ct(lower))
            y[first:first + count] = np.where(w <= 0, w * r, w).astype(x.dtype)
            noise[first:first + count] = np.where(w <= 0, r, ct(1)).astype(x.dtype)
    return (y.reshape(x.shape), noise.reshape(x.shape)) if training else y.reshape(x.shape)


# ================================================================ bias_act

@plan(split="even", cores=5, tile_elems=768, buffers=2)
def bias_act_resized_bias(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """bias_act forward where the tile's bias vector is made with
    np.resize(b, count), expecting NumPy to spread the per-channel bias over
    the tile; np.resize repeats b cyclically, so element j of every tile
    gets b[j % channels] whatever its channel."""
    cores, tile = 5, 768
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            bs = ct(0) if b is None else np.resize(np.asarray(b).astype(ct), count)  # FAULT: cyclic, not b[(i // inner) % channels]
            y[first:first + count] = bias_act_values(flat[first:first + count], bs, act, alpha,
                                                     gain, clamp, ct).astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=6, tile_elems=1536, buffers=2)
def bias_act_gain_after_clamp(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """bias_act forward with its epilogue in the order the engineer read the
    name 'act, clamp, gain': the activation clamped to [-clamp, clamp] and
    then multiplied by the gain, where StyleGAN multiplies first and clamps
    the product."""
    cores, tile = 6, 1536
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct) + bias_slice(b, first, count, channels, inner, ct)
            a = activation(v, act, alpha, ct)
            if clamp >= 0:
                a = np.clip(a, -ct(clamp), ct(clamp))  # FAULT: clamped before the gain
            y[first:first + count] = (a * ct(gain)).astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=8, tile_elems=1024, buffers=2)
def bias_act_clamp_upper_only(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """bias_act forward clamping with np.minimum(y, clamp) alone: written
    for ReLU, whose output is never negative, and kept for LeakyReLU and
    linear, whose outputs below -clamp now pass unclamped."""
    cores, tile = 8, 1024
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct) + bias_slice(b, first, count, channels, inner, ct)
            out = activation(v, act, alpha, ct) * ct(gain)
            if clamp >= 0:
                out = np.minimum(out, ct(clamp))  # FAULT: the lower bound -clamp is missing
            y[first:first + count] = out.astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=4, tile_elems=512, buffers=2)
def bias_act_pipeline_lag(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """bias_act forward as a two-stage software pipeline per core: each
    iteration computes its tile into `ready` and copies out `pending`, the
    previous iteration's result, but to the current tile's place (the copy
    was meant to target the previous tile). Every tile holds its
    predecessor's results; each core's first tile the zeroed staging
    buffer."""
    cores, tile = 4, 512
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        pending = np.zeros(tile, ct)
        for first, count in tiles(begin, end, tile):
            ready = np.zeros(tile, ct)
            ready[:count] = bias_act_values(flat[first:first + count],
                                            bias_slice(b, first, count, channels, inner, ct),
                                            act, alpha, gain, clamp, ct)
            y[first:first + count] = pending[:count].astype(x.dtype)  # FAULT: the previous tile's result, stored at this tile
            pending = ready
    return y.reshape(x.shape)


@plan(split="even", cores=11, tile_elems=64, buffers=2)
def bias_act_max_form(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None, axis=1):
    """Correct, written differently: LeakyReLU as np.maximum(v, alpha * v)
    (valid for 0 <= alpha <= 1; NaN propagates, -0 stays -0), the clamp by
    np.clip, and the bias added run by run: a tile is cut where the channel
    changes and each run adds one scalar bias."""
    cores, tile = 11, 64
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    assert act != "lrelu" or 0 <= alpha <= 1, "the max form needs 0 <= alpha <= 1"
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    bias = None if b is None else np.asarray(b).astype(ct).reshape(-1)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            v = flat[first:first + count].astype(ct)
            pos = first
            while pos < first + count and bias is not None:
                run_end = min(first + count, (pos // inner + 1) * inner)
                v[pos - first:run_end - first] += bias[(pos // inner) % channels]
                pos = run_end
            if act == "lrelu":
                v = np.maximum(v, ct(alpha) * v)
            elif act == "relu":
                v = np.where(v < 0, ct(0), v)
            v = v * ct(gain)
            if clamp >= 0:
                v = np.clip(v, -ct(clamp), ct(clamp))
            y[first:first + count] = v.astype(x.dtype)
    return y.reshape(x.shape)


@plan(split="even", cores=12, tile_elems=96, buffers=2)
def bias_act_backward_db_before_act(dy, x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                    axis=1):
    """bias_act backward: dx right; db summed (in double, in the library's
    order, through a workspace) from the gradient as it reaches the
    activation, (dy through the clamp's mask) * gain, instead of from dx,
    the gradient after the activation's derivative: wherever x + b <= 0
    LeakyReLU's alpha (ReLU's zero) is missing from db's terms."""
    cores, tile = 12, 96
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    fg, fx = dy.reshape(-1), x.reshape(-1)
    dx = np.zeros_like(fx)
    work = np.zeros(fx.size, F64)
    for core, begin, end in core_ranges(fx.size, cores):
        for first, count in tiles(begin, end, tile):
            g, xs = fg[first:first + count].astype(ct), fx[first:first + count]
            bs = bias_slice(b, first, count, channels, inner, ct)
            dx[first:first + count] = bias_act_grad_values(g, xs, bs, act, alpha, gain, clamp,
                                                           ct).astype(x.dtype)
            if clamp >= 0:
                pre = activation(xs.astype(ct) + bs, act, alpha, ct) * ct(gain)
                g = np.where((pre >= -ct(clamp)) & (pre <= ct(clamp)), g, ct(0))
            work[first:first + count] = (g * ct(gain)).astype(x.dtype)  # FAULT: db's terms must be dx (after the activation's derivative)
    return dx.reshape(x.shape), round_reduction(channel_sums(work, channels, inner), x.dtype)


# ================================================================ bias_act_dropout

def _dropout_forward_tile(flat, b, first, count, channels, inner, act, alpha, gain, clamp,
                          dropout_p, seed, offset, ct):
    """The shared part of the dropout kernels: a tile's bias_act values and
    keep decisions."""
    u = bias_act_values(flat[first:first + count], bias_slice(b, first, count, channels, inner, ct),
                        act, alpha, gain, clamp, ct)
    kept = dropout_bits(stream_positions(offset, first, count), seed) >= keep_threshold(dropout_p)
    return u, kept


@plan(split="even", cores=4, tile_elems=256, buffers=2)
def bias_act_dropout_packbits_default(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                      dropout_p=0.5, seed=0, offset=0, axis=1):
    """bias_act_dropout forward: y right; the keep decisions gathered per
    tile into a bool buffer and packed at the end with np.packbits, whose
    default bit order is big-endian: element i lands in bit 7 - i % 8 of
    byte i // 8, where the mask layout puts it in bit i % 8."""
    cores, tile = 4, 256
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    keep = np.zeros(flat.size, bool)
    scale = dropout_scale(dropout_p, ct)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            u, kept = _dropout_forward_tile(flat, b, first, count, channels, inner, act, alpha,
                                            gain, clamp, dropout_p, seed, offset, ct)
            y[first:first + count] = (u * np.where(kept, scale, ct(0))).astype(x.dtype)
            keep[first:first + count] = kept
    mask = np.packbits(keep)  # FAULT: bitorder="big" by default; the layout is little (bit i % 8)
    return y.reshape(x.shape), mask


@plan(split="even", cores=7, tile_elems=1024, buffers=2)
def bias_act_dropout_core_packs_own_bytes(x, b=None, act="lrelu", alpha=None, gain=None,
                                          clamp=None, dropout_p=0.5, seed=0, offset=0, axis=1):
    """bias_act_dropout forward: y right; each core packs the keep bits of
    its own range (bit order right) and stores the bytes from byte
    begin // 8, as if its range began on a byte boundary. When
    step = total // cores is not a multiple of 8 a core's first element
    belongs in bit begin % 8 of that byte: every core after the first has
    its mask bits shifted, and the byte two cores share keeps only the later
    core's store."""
    cores, tile = 7, 1024
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    mask = np.zeros((flat.size + 7) // 8, np.uint8)
    scale = dropout_scale(dropout_p, ct)
    for core, begin, end in core_ranges(flat.size, cores):
        core_keep = np.zeros(end - begin, bool)
        for first, count in tiles(begin, end, tile):
            u, kept = _dropout_forward_tile(flat, b, first, count, channels, inner, act, alpha,
                                            gain, clamp, dropout_p, seed, offset, ct)
            y[first:first + count] = (u * np.where(kept, scale, ct(0))).astype(x.dtype)
            core_keep[first - begin:first - begin + count] = kept
        packed = np.packbits(core_keep, bitorder="little")
        mask[begin // 8:begin // 8 + packed.size] = packed  # FAULT: ignores begin % 8, the bit the core's first element belongs in
    return y.reshape(x.shape), mask


@plan(split="even", cores=2, tile_elems=2048, buffers=2)
def bias_act_dropout_halves_swapped(x, b=None, act="lrelu", alpha=None, gain=None, clamp=None,
                                    dropout_p=0.5, seed=0, offset=0, axis=1):
    """bias_act_dropout forward with the 16-bit draw unpacked by hand: the
    right word for each position, but the halves swapped - positions with
    s % 128 < 64 take the high half and the others the low half. The mask
    and y agree with each other, and both keep the wrong elements."""
    cores, tile = 2, 2048
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    flat = x.reshape(-1)
    y = np.zeros_like(flat)
    keep = np.zeros(flat.size, bool)
    scale = dropout_scale(dropout_p, ct)
    threshold = keep_threshold(dropout_p)
    for core, begin, end in core_ranges(flat.size, cores):
        for first, count in tiles(begin, end, tile):
            u = bias_act_values(flat[first:first + count],
                                bias_slice(b, first, count, channels, inner, ct),
                                act, alpha, gain, clamp, ct)
            s = stream_positions(offset, first, count)
            words = stream_words(U64(64) * (s // U64(128)) + s % U64(64), seed)
            low_half = (s % U64(128)) < U64(64)
            bits = np.where(low_half, words >> U32(16), words & U32(0xFFFF))  # FAULT: halves swapped
            kept = bits >= threshold
            y[first:first + count] = (u * np.where(kept, scale, ct(0))).astype(x.dtype)
            keep[first:first + count] = kept
    return y.reshape(x.shape), np.packbits(keep, bitorder="little")


@plan(split="even", cores=8, tile_elems=1024, buffers=2)
def bias_act_dropout_backward_unscaled(dy, x, b=None, mask=None, act="lrelu", alpha=None,
                                       gain=None, clamp=None, dropout_p=0.5, seed=0, offset=0,
                                       axis=1):
    """bias_act_dropout backward: the incoming gradient multiplied by the
    keep bit (0 or 1) from the mask, then bias_act's backward - the
    forward's 1 / (1 - p) on kept elements is missing from dx and db.
    (seed and offset are the forward's; the mask already holds its draws.)"""
    cores, tile = 8, 1024
    b, mask = split_bias_mask(b, mask)
    act, alpha, gain, clamp = bias_act_scalars(act, alpha, gain, clamp)
    outer, channels, inner = layout(x)
    ct = compute_type(x.dtype)
    fg, fx = dy.reshape(-1), x.reshape(-1)
    dx = np.zeros_like(fx)
    work = np.zeros(fx.size, F64)
    for core, begin, end in core_ranges(fx.size, cores):
        for first, count in tiles(begin, end, tile):
            kept = unpack_mask(mask, first, count)
            g = fg[first:first + count].astype(ct) * kept.astype(ct)  # FAULT: kept elements need * 1 / (1 - p)
            d = bias_act_grad_values(g, fx[first:first + count],
                                     bias_slice(b, first, count, channels, inner, ct),
                                     act, alpha, gain, clamp, ct)
            dx[first:first + count] = d.astype(x.dtype)
            work[first:first + count] = dx[first:first + count]
    return dx.reshape(x.shape), round_reduction(channel_sums(work, channels, inner), x.dtype)

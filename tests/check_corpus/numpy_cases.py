"""The corpus's NumPy cases: LeakyReLU kernels as an engineer porting them to
a CPU (SIMD loops, threads, hand-made conversions) would write them, each
with one mistake, emulated with NumPy; and a few correct ones written
differently, which a diagnosis must pass. tests/check_corpus/cases.json says
which function runs with which dtype, op, data and plan, and the finding
expected.

Every function has check_op's signature: forward fn(x, slope) -> y, backward
fn(dy, x, slope) -> dx, on float16/float32/float64 arrays or uint16 arrays
holding bfloat16 bits. Outputs start as zeros (np.zeros_like), as the device
harness's do: what a kernel never writes reads as 0.

A function that models cores or tiles says so with @plan(...); the runner
checks that its case passes check_op the same plan, so the diagnosis maps
the output to the cores and tiles the function really used.
"""
import numpy as np

F32 = np.float32


def plan(**geometry):
    """Records the cores/tiles a function models (checked against its case)."""
    def mark(fn):
        fn.plan = geometry
        return fn
    return mark


# ---------------------------------------------------------------- helpers
# bf16 is the top half of an f32: widening is exact; narrowing rounds.

def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(F32)


def f32_to_bf16(values):
    """To nearest even; a NaN stays a quiet NaN."""
    u = np.asarray(values, F32).view(np.uint32)
    rounded = (u + np.uint32(0x7FFF) + ((u >> 16) & np.uint32(1))) >> 16
    quiet_nan = (u >> 16) | np.uint32(0x0040)
    return np.where(np.isnan(values), quiet_nan, rounded).astype(np.uint16)


def exact_forward(x, slope):
    """The correct result, computed in the dtype's compute type (f32 for
    f16), rounded once: what the faulty functions start from."""
    if x.dtype == np.uint16:
        w = bf16_to_f32(x)
        return f32_to_bf16(np.where(w > 0, w, w * F32(slope)))
    wide = x.astype(F32) if x.dtype == np.float16 else x
    s = np.float64(slope).astype(wide.dtype)
    return np.where(wide > 0, wide, wide * s).astype(x.dtype)


# ---------------------------------------------------------------- indexing and tiling

LANES = 16  # an AVX-512 vector of f32


def simd_tail_dropped(x, slope):
    """A 16-lane vector loop over n // 16 full vectors; the scalar loop for
    the last n % 16 elements was never written."""
    y = np.zeros_like(x)
    body = len(x) // LANES * LANES
    y[:body] = exact_forward(x[:body], slope)
    return y


def tail_mask_off_by_one(x, slope):
    """The tail as one masked vector, with the mask built as lane < rem - 1
    (the engineer's 'last index' instead of the count): the array's very last
    element is never written."""
    y = np.zeros_like(x)
    n = len(x)
    body = n // LANES * LANES
    y[:body] = exact_forward(x[:body], slope)
    rem = n - body
    lanes = np.arange(LANES)
    mask = lanes < rem - 1
    tail = np.zeros(LANES, x.dtype)
    tail[:rem] = x[body:]
    out = exact_forward(tail, slope)
    y[body:] = np.where(mask[:rem], out[:rem], y[body:])
    return y


def tail_from_wrong_offset(x, slope):
    """The masked tail loads from the start of the array (x[:rem], the
    pointer never advanced past the body) and stores at the tail: the last
    n % 16 results are the first n % 16 elements' results."""
    y = np.zeros_like(x)
    n = len(x)
    body = n // LANES * LANES
    y[:body] = exact_forward(x[:body], slope)
    rem = n - body
    y[body:] = exact_forward(x[:rem], slope)
    return y


THREADS = 8


@plan(split="even", cores=THREADS)
def thread_chunks_wrong_offset(x, slope):
    """Eight threads, each a chunk: the input offset is thread * ceil(n / 8)
    (the chunk size used for the input pointer) but the output offset thread
    * floor(n / 8) (the even split's): thread t's results land t elements
    before their inputs' indices, and the last elements are never written.
    Threads run in order, so where two chunks overlap the later one wins."""
    y = np.zeros_like(x)
    n = len(x)
    ceil_chunk, floor_chunk = -(-n // THREADS), n // THREADS
    for t in range(THREADS):
        start_in, start_out = t * ceil_chunk, t * floor_chunk
        length = min(ceil_chunk, n - start_in)
        y[start_out:start_out + length] = exact_forward(x[start_in:start_in + length], slope)
    return y


def aligned_peel_shift(x, slope):
    """A scalar peel of one element to align the vector body, then the body
    stored from the peel's output pointer that had already been advanced:
    every result after the first lands one element later than its input
    (the last one is lost)."""
    y = np.zeros_like(x)
    y[0] = exact_forward(x[:1], slope)[0]
    y[1:] = exact_forward(x[:-1], slope)
    return y


@plan(split="even", cores=8, tile_elems=256, buffers=2)
def staging_ring_stale(x, slope):
    """A CPU emulation of the device kernel (used to debug the host code):
    per core, tiles staged through two output buffers, each tile's copy-out
    taken from the other buffer, which still holds the previous tile's
    results (the first tile's from a buffer holding zeros)."""
    y = np.zeros_like(x)
    n = len(x)
    cores, tile = 8, 256
    step = n // cores
    for core in range(cores):
        begin = core * step
        end = n if core == cores - 1 else begin + step
        staging = [np.zeros(tile, x.dtype), np.zeros(tile, x.dtype)]
        for t, first in enumerate(range(begin, end, tile)):
            count = min(tile, end - first)
            slot = t % 2
            staging[slot][:count] = exact_forward(x[first:first + count], slope)
            y[first:first + count] = staging[1 - slot][:count]  # the other slot
    return y


# ---------------------------------------------------------------- rounding and flushing

def bf16_truncate(x, slope):
    """bf16 results by dropping the low 16 bits of the f32 result (toward
    zero) instead of rounding to nearest even."""
    w = bf16_to_f32(x)
    result = np.where(w > 0, w, w * F32(slope))
    return (result.view(np.uint32) >> 16).astype(np.uint16)


def f16_slope_from_python_float(x, slope):
    """The textbook line np.where(x > 0, x, x * slope) on float16 arrays:
    NumPy casts the Python float slope to float16 (0.2 -> 0.199951171875)
    and multiplies in float16, so the negative side is x * slope16 rounded
    once - the slope rounded to f16, or f16 arithmetic: the same bits."""
    return np.where(x > 0, x, x * slope)


def f16_product_flushed(x, slope):
    """Emulates an NPU computing the product in f16 with flush-to-zero: the
    f32 product rounded to f16, and below f16's smallest normal (2^-14)
    flushed to a signed zero."""
    product = (x.astype(F32) * F32(slope)).astype(np.float16)
    tiny = np.abs(product) < np.finfo(np.float16).tiny
    product = np.where(tiny, np.copysign(np.float16(0), product), product)
    return np.where(x > 0, x, product)


def daz_inputs_f32(x, slope):
    """Built with -ffast-math, whose start-up code sets DAZ: subnormal inputs
    are read as zeros of their sign (positive ones then fail x > 0 and come
    out +0; results are not flushed)."""
    tiny = np.abs(x) < np.finfo(x.dtype).tiny
    read = np.where(tiny, np.copysign(x.dtype.type(0), x), x)
    return np.where(read > 0, read, read * x.dtype.type(slope))


def ftz_results_f64(x, slope):
    """FTZ on the product only (MXCSR.FZ without DAZ): subnormal products
    become zeros of their sign; inputs pass through untouched."""
    product = x * np.float64(slope)
    tiny = np.abs(product) < np.finfo(np.float64).tiny
    product = np.where(tiny, np.copysign(0.0, product), product)
    return np.where(x > 0, x, product)


# ---------------------------------------------------------------- NaN, sign, select, slope

def max_trick(x, slope):
    """Correct, written differently: max(x, slope * x), valid for 0 <= slope
    <= 1. np.maximum propagates NaN, so NaN stays NaN; -0 stays -0."""
    return np.maximum(x, x * x.dtype.type(slope))


def max_trick_slope_above_one(x, slope):
    """max(x, slope * x) used with a slope above 1 (1.5): it then picks
    slope * x for positive x and x for negative x, the two sides swapped."""
    return np.maximum(x, x * x.dtype.type(slope))


def masks_lose_nan(x, slope):
    """The positive part plus slope times the negative part, both by masks
    (computed in f32, rounded once to f16): a NaN fails both x > 0 and x < 0
    and comes out as 0."""
    w = x.astype(F32)
    y = np.where(w > 0, w, F32(0)) + F32(slope) * np.where(w < 0, w, F32(0))
    return y.astype(x.dtype)


def blend_by_multiplying(x, slope):
    """Branch-free: x * p + slope * x * (1 - p) with p = (x > 0) as 0 or 1:
    for +inf and -inf one term is inf * 0 = NaN."""
    p = (x > 0).astype(x.dtype)
    with np.errstate(invalid="ignore"):
        return x * p + x.dtype.type(slope) * x * (1 - p)


def select_missing_f32(x, slope):
    """y = slope * x everywhere (the select lost in a refactor)."""
    return x * F32(slope)


def exact_f16_backward(dy, x, slope):
    """Correct, written differently: the backward in f32 with the mask taken
    first, then rounded once to f16."""
    positive = x.astype(F32) > 0
    return np.where(positive, dy.astype(F32), dy.astype(F32) * F32(slope)).astype(np.float16)


def backward_ge(dy, x, slope):
    """Backward with x >= 0: at x == 0 (either sign) dx = dy instead of
    dy * slope."""
    return np.where(x >= 0, dy, dy * x.dtype.type(slope))


def backward_compares_dy(dy, x, slope):
    """Backward selecting on dy > 0 instead of x > 0 (the arguments of the
    helper swapped), in bf16."""
    g, w = bf16_to_f32(dy), bf16_to_f32(x)
    del w  # never used: that is the fault
    return f32_to_bf16(np.where(g > 0, g, g * F32(slope)))


def backward_from_result(dy, x, slope):
    """Correct for slope >= 0, written differently: the mask from the
    forward's result y (PyTorch's self_is_result form), recomputed here;
    y > 0 exactly when x > 0 if the slope is not negative."""
    y = np.where(x > 0, x, x * F32(slope))
    return np.where(y > 0, dy, dy * F32(slope))


def backward_from_result_negative_slope(dy, x, slope):
    """The same y > 0 mask used with a negative slope (-0.5): y = -0.5 * x
    is positive for negative x, so dx = dy for every nonzero x - the
    gradient passes through unscaled on the negative side."""
    y = np.where(x > 0, x, x * F32(slope))
    return np.where(y > 0, dy, dy * F32(slope))

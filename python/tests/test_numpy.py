"""leaky.numpy: exact results for every dtype (bfloat16 as uint16 bits),
out= and in-place, layouts, and errors that leave `out` untouched. Checked
against NumPy float32 arithmetic, independent of PyTorch."""
import threading

import numpy as np
import pytest

import leaky.numpy as lnp


def reference(x, slope):
    """The documented semantics in NumPy: widen half types to float32,
    multiply by the slope rounded once, round once."""
    with np.errstate(all="ignore"):  # inf * slope, NaN compares: intended
        return _reference(x, slope)


def _reference(x, slope):
    if x.dtype == np.float64:
        return np.where(x > 0, x, x * slope)
    if x.dtype == np.uint16:  # bfloat16 bits
        x32 = (x.astype(np.uint32) << 16).view(np.float32)
        y32 = np.where(x32 > 0, x32, x32 * np.float32(slope))
        return bf16_round(y32)
    x32 = x.astype(np.float32)
    return np.where(x32 > 0, x32, x32 * np.float32(slope)).astype(x.dtype)


def bf16_round(y32):
    b = y32.view(np.uint32)
    nan = np.isnan(y32)
    rounded = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    quiet = ((b >> 16) | 0x40).astype(np.uint16)
    return np.where(nan, quiet, rounded)


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    if a.dtype == np.uint16:
        nan_a = (a & 0x7FFF) > 0x7F80
        nan_b = (b & 0x7FFF) > 0x7F80
    else:
        nan_a, nan_b = np.isnan(a), np.isnan(b)
    assert np.array_equal(nan_a, nan_b)
    ia = a.view(np.dtype(f"u{a.itemsize}"))[~nan_a]
    ib = b.view(np.dtype(f"u{b.itemsize}"))[~nan_b]
    bad = np.nonzero(ia != ib)[0]
    assert bad.size == 0, f"{bad.size} differ, first at {bad[0]}: {ia[bad[0]]:#x} vs {ib[bad[0]]:#x}"


def all_patterns(dtype):
    raw = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    return raw if dtype == np.uint16 else raw.view(np.float16)


@pytest.mark.parametrize("dtype", [np.float16, np.uint16])
@pytest.mark.parametrize("slope", [0.0, 0.01, 0.2, 1.5, -0.5])
def test_every_half_pattern(dtype, slope):
    x = all_patterns(dtype)
    same(lnp.leaky_relu(x, slope), reference(x, slope))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_wide_types(dtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(100003) * 4).astype(dtype)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).smallest_subnormal * -3]
    for slope in (0.01, 0.2, -0.5):
        same(lnp.leaky_relu(x, slope), reference(x, slope))


def test_backward_and_saved_result():
    rng = np.random.default_rng(2)
    x = rng.standard_normal(1001).astype(np.float32)
    dy = rng.standard_normal(1001).astype(np.float32)
    expected = np.where(x > 0, dy, dy * np.float32(0.2))
    same(lnp.leaky_relu_backward(dy, x, 0.2), expected)
    y = lnp.leaky_relu(x, 0.2)
    same(lnp.leaky_relu_backward(dy, y, 0.2, saved_is_result=True), expected)
    with pytest.raises(ValueError, match="negative"):
        lnp.leaky_relu_backward(dy, y, -0.2, saved_is_result=True)


def test_out_in_place_and_layouts():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 8)).astype(np.float32)
    out = np.empty_like(x)
    assert lnp.leaky_relu(x, 0.2, out=out) is out
    same(out, reference(x, 0.2))
    y = x.copy()
    lnp.leaky_relu(y, 0.2, out=y)  # in place
    same(y, reference(x, 0.2))
    # A non-contiguous input is copied first; the result is C-contiguous.
    t = x.T
    same(lnp.leaky_relu(t, 0.2), reference(np.ascontiguousarray(t), 0.2))
    same(lnp.leaky_relu(x[:, ::3], 0.2), reference(np.ascontiguousarray(x[:, ::3]), 0.2))
    # Lists are accepted as arrays.
    same(lnp.leaky_relu([-1.0, 2.0], 0.5), np.array([-0.5, 2.0]))


def test_errors_leave_out_untouched():
    x = np.ones(8, dtype=np.float32) * -1
    out = np.full(8, 7.0, dtype=np.float32)
    with pytest.raises(ValueError, match="not finite"):
        lnp.leaky_relu(x, float("nan"), out=out)
    with pytest.raises(TypeError, match="int64"):
        lnp.leaky_relu(np.arange(4), 0.2)
    with pytest.raises(TypeError, match="out has dtype float64"):
        lnp.leaky_relu(x, 0.2, out=np.zeros(8))
    with pytest.raises(ValueError, match="shape"):
        lnp.leaky_relu(x, 0.2, out=np.zeros(9, dtype=np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        lnp.leaky_relu(x[::2], 0.2, out=np.zeros(8, dtype=np.float32)[::2])
    big = np.zeros(16, dtype=np.float32)
    with pytest.raises(ValueError, match="overlaps"):
        lnp.leaky_relu(big[:8], 0.2, out=big[4:12])
    with pytest.raises(ValueError, match="num_threads"):
        lnp.leaky_relu(x, 0.2, out=out, num_threads=-1)
    # Beyond the plan's 65536 cores: refused (it once returned garbage).
    for threads in (65537, 2**31 - 1):
        with pytest.raises(ValueError, match="num_threads %d is not in" % threads):
            lnp.leaky_relu(x, 0.2, out=out, num_threads=threads)
    assert np.all(out == 7.0)
    assert np.array_equal(lnp.leaky_relu(x, 0.2, num_threads=65536), reference(x, 0.2))


def test_an_input_whose_contiguous_copy_cannot_be_made_raises_memory_error():
    # A zero-stride view of 2^40 elements: NumPy cannot copy it either (this
    # once segfaulted: pybind11's ensure() returned an empty array).
    view = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), shape=(1 << 40,), strides=(0,))
    with pytest.raises(MemoryError, match="x: no memory for a contiguous copy"):
        lnp.leaky_relu(view, 0.2)
    with pytest.raises(MemoryError, match="dy: no memory"):
        lnp.leaky_relu_backward(view, view, 0.2)


def test_threads_run_concurrently_with_the_gil_released():
    # Each call releases the GIL; several Python threads calling at once must
    # all get exact results.
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(1 << 18).astype(np.float32) for _ in range(4)]
    results = [None] * 4

    def work(i):
        for _ in range(20):
            results[i] = lnp.leaky_relu(xs[i], 0.2)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for x, r in zip(xs, results):
        same(r, reference(x, 0.2))

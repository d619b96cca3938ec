"""leaky.testing on 8-bit data: NumPy kernels written the way their bugs are
written (a truncating cast, no clip, E5M2 taken as f16's top byte, a
non-saturating conversion) checked byte for byte against the library's
exact golden, each diagnosed in its words; a correct kernel passes; bad
arguments raise one one-line ValueError before the kernel is called."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import leaky.testing as lt

SPLIT = dict(split="even", cores=8, tile_elems=256, buffers=2)


def requantize(q, dtype, slope, p, rounding=np.rint, clip=True):
    """A qu8/qs8 LeakyReLU in NumPy: dequantize, apply, requantize."""
    v = p["input_scale"] * (q.astype(np.float64) - p["input_zero_point"])
    y = np.where(v > 0, v, v * slope)
    r = rounding(y / p["output_scale"]) + p["output_zero_point"]
    if clip:
        r = np.clip(r, p["output_min"], p["output_max"])
    return r.astype(np.int64).astype(q.dtype)  # astype wraps, as a C cast does


@pytest.mark.parametrize("dtype", ["qu8", "qs8"])
def test_a_correct_kernel_passes(dtype):
    # slope 0.25: every double step is exact with the default binary scales.
    p = lt.golden_q8_defaults(dtype)
    d = lt.check_q8_op(lambda q, s: requantize(q, dtype, s, p), dtype=dtype, slope=0.25, **SPLIT)
    assert d.passed and d.mismatches == 0 and d.findings == [], str(d)


def test_truncating_cast_is_a_rounding_rule():
    p = lt.golden_q8_defaults("qu8")
    d = lt.check_q8_op(lambda q, s: requantize(q, "qu8", s, p, rounding=np.trunc), dtype="qu8",
                       slope=0.25, **SPLIT)
    assert not d.passed
    assert d.kinds() == ["rounding_rule"], str(d)
    assert "truncated toward zero (an (int) cast" in d.findings[0].message
    assert d.findings[0].details["rounding"] == "toward_zero"
    assert d.findings[0].first is not None


def test_no_clip_wraps():
    p = dict(lt.golden_q8_defaults("qu8"), output_scale=0.03125)
    d = lt.check_q8_op(lambda q, s: requantize(q, "qu8", s, p, clip=False), dtype="qu8",
                       slope=0.25, output_scale=0.03125, **SPLIT)
    assert d.kinds() == ["clamp_missing"], str(d)
    assert "without clamping it to [0, 255], so it wrapped around" in d.findings[0].message


def test_default_slope_catches_double_requantization():
    p = lt.golden_q8_defaults("qs8")
    d = lt.check_q8_op(lambda q, s: requantize(q, "qs8", s, p), dtype="qs8", **SPLIT)
    assert d.kinds() == ["float_arithmetic"], str(d)
    assert "lies a rounding error from halfway" in d.findings[0].message


def e5m2_kernel(x, slope):
    """E5M2 is f16's top byte: decode by shifting, encode by taking it back
    (which cuts the mantissa: rounds toward zero)."""
    h = (x.astype(np.uint16) << 8).view(np.float16).astype(np.float32)
    with np.errstate(invalid="ignore"):  # NaN inputs are passed back below
        y = np.where(h > 0, h, h * np.float32(slope))
    out = (y.astype(np.float16).view(np.uint16) >> 8).astype(np.uint8)
    return np.where(np.isnan(h), x, out)  # a NaN gives its own byte back


def test_e5m2_as_f16_top_byte_truncates():
    d = lt.check_q8_op(e5m2_kernel, dtype="fp8_e5m2", slope=0.3, saturate=False, **SPLIT)
    assert d.kinds() == ["rounding_rule"], str(d)
    assert "cuts the mantissa bits" in d.findings[0].message


def e5m2_rounded(x, slope):
    """Round-to-nearest-even from f16 by the bias trick: correct, but an
    overflow carries into the infinity code (no saturation)."""
    h = (x.astype(np.uint16) << 8).view(np.float16)
    with np.errstate(invalid="ignore"):  # NaN inputs are passed back below
        y = np.where(h > 0, h, h * np.float16(slope))  # slope 0.5: exact in f16
    u = y.view(np.uint16).astype(np.uint32)
    out = ((u + 0x7F + ((u >> 8) & 1)) >> 8).astype(np.uint8)
    return np.where(np.isnan(h), x, out)


def test_e5m2_without_saturation():
    d = lt.check_q8_op(e5m2_rounded, dtype="fp8_e5m2", slope=0.5, saturate=False, **SPLIT)
    assert d.passed, str(d)  # the kernel is right where no saturation is asked for
    d = lt.check_q8_op(e5m2_rounded, dtype="fp8_e5m2", slope=0.5, **SPLIT)
    assert d.kinds() == ["saturation"], str(d)
    assert "came out as infinity where saturate = 1 asks for the largest finite value" in d.findings[0].message


def test_fp8_backward_identity_of_the_golden():
    x, dy, g = lt.golden_q8("fp8_e4m3", elems=512, op="backward")
    assert x.dtype == np.uint8 and dy.dtype == np.uint8 and g.shape == (512,)
    assert sorted(x[:256].tolist()) == list(range(256))
    d = lt.check_q8_op(lambda dy_, x_, s: g.copy(), dtype="fp8_e4m3", elems=512, op="backward",
                       split=None)
    assert d.passed, str(d)


def test_qs8_arrays_are_int8():
    x, dy, g = lt.golden_q8("qs8", elems=300)
    assert x.dtype == np.int8 and dy is None and g.dtype == np.int8


def never_called(*args):
    raise AssertionError("the kernel must not be called on bad arguments")


@pytest.mark.parametrize("kwargs, words", [
    (dict(dtype="qu8", input_scale=-1), "input_scale must be a finite number above 0, not -1"),
    (dict(dtype="qu8", output_scale=float("nan")), "output_scale must be a finite number"),
    (dict(dtype="qu8", input_zero_point=300), "input_zero_point must be within qu8's range 0..255, not 300"),
    (dict(dtype="qs8", output_zero_point=-129), "output_zero_point must be within qs8's range -128..127"),
    (dict(dtype="qu8", output_min=10, output_max=5), "output_min 10 is above output_max 5"),
    (dict(dtype="qu8", output_max=2 ** 40), "output_max must be at most 2147483647"),
    (dict(dtype="qu8", input_zero_point=1.5), "input_zero_point must be a whole number"),
    (dict(dtype="qu8", saturate=True), "saturate applies to fp8 data, not qu8"),
    (dict(dtype="fp8_e4m3", input_scale=0.5), "input_scale applies to qu8/qs8 data, not fp8_e4m3"),
    (dict(dtype="fp8_e4m3", saturate=1), "saturate must be True or False"),
    (dict(dtype="qu8", op="backward"), "qu8 data has no backward"),
    (dict(dtype="qu9"), "dtype must be one of qu8, qs8, fp8_e4m3, fp8_e5m2"),
    (dict(dtype="qu8", elems=0), "elems must be at least 1"),
    (dict(dtype="qu8", slope=float("inf")), "slope must be a finite number"),
    (dict(dtype="qu8", cores=0), "cores must be at least 1"),
])
def test_bad_arguments_raise_one_line(kwargs, words):
    with pytest.raises(ValueError) as e:
        lt.check_q8_op(never_called, **kwargs)
    message = str(e.value)
    assert words in message, message
    assert "\n" not in message and len(message) < 200, message


def test_check_op_points_8_bit_dtypes_to_check_q8_op():
    with pytest.raises(ValueError, match="8-bit: use check_q8_op"):
        lt.check_op(never_called, dtype="qu8")


def test_command_line_exit_codes(tmp_path):
    (tmp_path / "kernels8.py").write_text(textwrap.dedent("""
        import numpy as np
        def requantize(q, slope, rounding):
            v = 0.09375 * (q.astype(np.float64) - 128)
            t = np.where(v > 0, v, v * slope) / 0.0625
            return np.clip(rounding(t) + 40, 0, 255).astype(np.uint8)
        def good(q, s):
            return requantize(q, s, np.rint)
        def truncating(q, s):
            return requantize(q, s, np.trunc)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))

    def run(*args):
        return subprocess.run([sys.executable, "-m", "leaky.testing", *args], capture_output=True,
                              text=True, env=env, timeout=120)
    good = run("kernels8:good", "--dtype", "qu8", "--slope", "0.25")
    assert good.returncode == 0 and good.stdout.startswith("PASS"), good.stdout + good.stderr
    bad = run("kernels8:truncating", "--dtype", "qu8", "--slope", "0.25", "--input-scale", "0.09375")
    assert bad.returncode == 1 and "- rounding_rule:" in bad.stdout, bad.stdout + bad.stderr
    for args, words in ((["--dtype", "qu8", "--input-scale", "0"], "input_scale must be a finite number above 0"),
                        (["--dtype", "qu8", "--dist", "hard"], "--dist does not apply to qu8 data"),
                        (["--dtype", "qu8", "--max-ulp", "1"], "--max-ulp does not apply to qu8 data"),
                        (["--dtype", "f16", "--output-zero-point", "3"], "--output-zero-point applies to qu8/qs8 data, not f16"),
                        (["--dtype", "qu8", "--saturate", "1"], "saturate applies to fp8 data, not qu8"),
                        (["--dtype", "qs8", "--output-min", "x"], "argument --output-min: must be a whole number")):
        unusable = run("kernels8:good", *args)
        assert unusable.returncode == 2, (args, unusable.stdout, unusable.stderr)
        assert len(unusable.stderr.strip().splitlines()) == 1, unusable.stderr
        assert words in unusable.stderr, (words, unusable.stderr)

"""leaky.testing: any callable checked against exact golden data and
diagnosed in the caller's split and tiles, on normal and hard data; bad
arguments and misbehaving callables raise one clear exception naming the
argument; `python3 -m leaky.testing` keeps leaky check's exit codes."""
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import leaky.testing as lt

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SPLIT = dict(split="even", cores=8, tile_elems=256, buffers=2)


def exact(x, slope):
    w = x.astype(np.float32)
    return np.where(w > 0, w, w * np.float32(slope)).astype(x.dtype)


def step_and_start(n, cores=8):
    step = n // cores
    return step, [c * step for c in range(cores)]


@pytest.fixture(params=["normal", "hard"])
def dist(request):
    return request.param


def test_an_exact_kernel_passes(dist):
    d = lt.check_op(exact, dist=dist, **SPLIT)
    assert d.passed and d.mismatches == 0 and d.findings == [], str(d)


def test_the_library_itself_passes_in_every_dtype(dist):
    import leaky.numpy
    for dtype in ("f16", "bf16", "f32", "f64"):
        d = lt.check_op(lambda x, s: leaky.numpy.leaky_relu(x, s), dtype=dtype, dist=dist, **SPLIT)
        assert d.passed, (dtype, str(d))
        d = lt.check_op(lambda dy, x, s: leaky.numpy.leaky_relu_backward(dy, x, s), dtype=dtype,
                        dist=dist, op="backward", **SPLIT)
        assert d.passed, (dtype, str(d))


def test_select_missing(dist):
    d = lt.check_op(lambda x, s: (x.astype(np.float32) * np.float32(s)).astype(x.dtype),
                    dist=dist, **SPLIT)
    assert d.kinds() == ["select_missing"], str(d)


def test_per_core_offset_names_the_core_starts(dist):
    def kernel(x, s):
        y = exact(x, s)
        _, starts = step_and_start(x.size)
        for start in starts:
            y[start:start + 16] = exact(x[start + 5:start + 21], s)
        return y
    d = lt.check_op(kernel, dist=dist, **SPLIT)
    assert d.kinds() == ["misplaced"], str(d)
    assert d.findings[0].details["shift"] == 5


def test_remainder_dropped_is_the_last_cores_tail(dist):
    def kernel(x, s):
        y = exact(x, s)
        step, _ = step_and_start(x.size)
        y[8 * step:] = x[8 * step:]  # in place, never written
        return y
    d = lt.check_op(kernel, dist=dist, **SPLIT)
    # x left there is also what slope 1 gives: both named, the dropped
    # remainder first.
    assert d.kinds() == ["ambiguous"], str(d)
    assert d.findings[0].details["candidates"] == ["not_written", "slope_mismatch"]
    assert d.findings[0].details["region"] == "remainder"
    assert d.findings[0].first == 8 * (10007 // 8) and d.findings[0].core == 7


def test_zero_block_by_extent(dist):
    def kernel(x, s):
        y = exact(x, s)
        y[2080:2288] = 0
        return y
    d = lt.check_op(kernel, dist=dist, **SPLIT)
    assert d.kinds() == ["not_written"], str(d)
    f = d.findings[0]
    assert f.core == 1 and 2070 <= f.first <= 2080 and 2287 <= f.last <= 2300, f


def test_stale_tile(dist):
    def kernel(x, s):
        y = exact(x, s)
        start = 1250 + 2 * 256  # core 1, tile 2 repeats tile 1
        y[start:start + 256] = y[start - 256:start]
        return y
    d = lt.check_op(kernel, dist=dist, **SPLIT)
    assert d.kinds() == ["stale_tile"], str(d)
    assert (d.findings[0].core, d.findings[0].tile) == (1, 2)


def test_a_torch_op_on_any_device_is_accepted():
    torch = pytest.importorskip("torch")
    import leaky  # noqa: F401
    d = lt.check_op(lambda x, s: torch.ops.leaky.leaky_relu(torch.from_numpy(x), s), **SPLIT)
    assert d.passed, str(d)


@pytest.mark.parametrize("kwargs, names", [
    (dict(cores=0), "cores"), (dict(tile_elems=0), "tile_elems"), (dict(split="diagonal"), "split"),
    (dict(buffers=-1), "buffers"), (dict(dtype="f8"), "dtype"), (dict(elems=0), "elems"),
    (dict(dist="lognormal"), "dist"), (dict(tile_elems=1 << 62, dtype="f64"), "overflow"),
])
def test_bad_arguments_raise_naming_them(kwargs, names):
    with pytest.raises((ValueError, TypeError)) as error:
        lt.check_op(exact, **{**SPLIT, **kwargs})
    assert names in str(error.value), str(error.value)


def test_misbehaving_callables_raise_one_clear_exception():
    with pytest.raises(ValueError, match="returned shape"):
        lt.check_op(lambda x, s: exact(x, s)[:-1], **SPLIT)
    with pytest.raises(TypeError, match="returned dtype float32"):
        lt.check_op(lambda x, s: x.astype(np.float32), **SPLIT)
    def boom(x, s):
        raise KeyError("nope")
    with pytest.raises(RuntimeError, match="boom.*KeyError"):
        lt.check_op(boom, **SPLIT)
    with pytest.raises(TypeError, match="callable"):
        lt.check_op(42)


def test_command_line_exit_codes(tmp_path):
    (tmp_path / "kernels.py").write_text(textwrap.dedent("""
        import numpy as np
        def good(x, s):
            w = x.astype(np.float32)
            return np.where(w > 0, w, w * np.float32(s)).astype(x.dtype)
        def no_select(x, s):
            return (x.astype(np.float32) * np.float32(s)).astype(x.dtype)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    def run(*args):
        return subprocess.run([sys.executable, "-m", "leaky.testing", *args], capture_output=True,
                              text=True, env=env, timeout=120)
    good = run("kernels:good", "--split", "even", "--cores", "8", "--tile-elems", "4096")
    assert good.returncode == 0 and good.stdout.startswith("PASS"), good.stdout + good.stderr
    bad = run("kernels:no_select", "--dist", "normal")
    assert bad.returncode == 1 and "select_missing" in bad.stdout, bad.stdout + bad.stderr
    for args in (["kernels:missing"], ["kernels"], ["kernels:good", "--cores", "0"]):
        unusable = run(*args)
        assert unusable.returncode == 2, (args, unusable.stdout, unusable.stderr)
        assert len(unusable.stderr.strip().splitlines()) == 1, unusable.stderr


def test_main_help_describes_every_option_with_its_default():
    help_text = subprocess.run([sys.executable, "-m", "leaky.testing", "--help"],
                               capture_output=True, text=True, timeout=60).stdout
    options = re.findall(r"^  (--[a-z-]+)", help_text, re.M)
    assert len(options) >= 20, help_text
    # Every option has words after it (argparse leaves them out when help is None).
    blocks = re.split(r"\n  (?=--)", help_text.split("options:")[1])
    for block in blocks[1:]:
        assert len(block.split()) > 2, block
    for want in ("(default: f16)", "(default: 10007)", "(default: even)", "(default: npu)",
                 "(default: hard)", "granule split, this CPU"):
        assert want in " ".join(help_text.split()), want
    assert "(default: None)" not in help_text and "(default: False)" not in help_text


def test_the_example_names_the_missing_select():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "check_my_kernel.py")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "select_missing" in result.stdout


def test_the_prelu_example_names_each_cores_last_tile():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python",
                                                          "check_my_prelu.py")],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "the last tile of each of cores 0-3" in result.stdout and not result.stderr


def test_the_opencl_kernel_through_the_harness():
    try:
        clean = lt.opencl_leaky_relu(cores=8, tile_elems=256)
        d = lt.check_op(clean, **SPLIT)
    except RuntimeError as e:
        pytest.skip("no OpenCL device: %s" % e)
    assert d.passed, str(d)
    broken = lt.check_op(lt.opencl_leaky_relu(cores=8, tile_elems=256, fault="select-missing"), **SPLIT)
    assert broken.kinds() == ["select_missing"], str(broken)
    remainder = lt.check_op(lt.opencl_leaky_relu(cores=8, tile_elems=256, fault="remainder-dropped"),
                            **SPLIT)
    assert remainder.kinds() == ["not_written"] and remainder.findings[0].core == 7, str(remainder)

"""leaky.testing.opencl_leaky_relu(source=..., build_options=...): a kernel of
the caller's own runs on the library's host, plan and tiling data. The
library's own kernel text given as `source` must give the built-in kernel's
bits exactly (so the harness adds nothing of its own), and a source that does
not build must say why, with the build log."""
import os

import numpy as np
import pytest

import leaky.testing as lt

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY_KERNEL = os.path.join(HERE, "..", "..", "src", "device", "opencl", "leaky_relu.cl")
PLAN = dict(cores=8, split="even", tile_elems=256, buffers=2)
BROKEN = "__kernel void leaky_relu_tiles(__global float* dst) { dst[0] = undeclared_name; }"


@pytest.fixture(scope="module")
def library_source():
    """The library's kernel text, or a skip where the build or the machine
    has no OpenCL device."""
    try:
        lt.opencl_leaky_relu(**PLAN)(np.zeros(4, np.float32), 0.2)
    except RuntimeError as e:
        pytest.skip("no OpenCL device: %s" % e)
    with open(LIBRARY_KERNEL) as f:
        return f.read()


@pytest.mark.parametrize("op", ["forward", "backward"])
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
@pytest.mark.parametrize("buffers", [1, 2])
def test_the_library_kernel_as_source_is_bit_identical(library_source, dtype, op, buffers):
    x, dy, _ = lt.golden(dtype, elems=10007, slope=0.2, dist="hard", op=op)
    plan = dict(PLAN, buffers=buffers)
    built_in = lt.opencl_leaky_relu(op=op, **plan)
    own = lt.opencl_leaky_relu(op=op, source=library_source, **plan)
    args = (x, 0.2) if op == "forward" else (dy, x, 0.2)
    expected, got = built_in(*args), own(*args)
    # Bits, NaN payloads included: the same kernel on the same device.
    assert expected.tobytes() == got.tobytes(), "%s %s buffers=%d" % (dtype, op, buffers)
    assert lt.check_op(own, dtype, 10007, 0.2, "hard", op, **plan).passed


def test_build_options_reach_the_compiler(library_source):
    # A flag the compiler refuses proves the options are passed, whatever the
    # device does with the valid ones.
    fn = lt.opencl_leaky_relu(source=library_source, build_options="-no-such-option", **PLAN)
    with pytest.raises(RuntimeError, match="did not build.*-no-such-option"):
        fn(np.ones(16, np.float32), 0.2)


def test_a_source_that_does_not_build_reports_the_build_log(library_source):
    fn = lt.opencl_leaky_relu(source=BROKEN, **PLAN)
    with pytest.raises(RuntimeError) as raised:
        fn(np.ones(16, np.float32), 0.2)
    message = str(raised.value)
    assert "caller's kernel" in message and "did not build" in message, message
    assert "undeclared_name" in message, message  # the compiler's own words


def test_a_source_without_the_kernel_says_so(library_source):
    fn = lt.opencl_leaky_relu(source="__kernel void other(__global float* a) { a[0] = 1; }", **PLAN)
    with pytest.raises(RuntimeError, match="no kernel leaky_relu_tiles"):
        fn(np.ones(16, np.float32), 0.2)


@pytest.mark.parametrize("kwargs, words", [
    (dict(source=""), "source must be"),
    (dict(source=b"__kernel"), "source must be"),
    (dict(build_options=3), "build_options must be"),
    (dict(op="sideways"), "op must be one of"),
])
def test_bad_arguments_are_one_line_value_errors(kwargs, words):
    with pytest.raises(ValueError, match=words) as raised:
        lt.opencl_leaky_relu(**kwargs)
    assert "\n" not in str(raised.value)

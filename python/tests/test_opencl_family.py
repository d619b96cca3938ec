"""The device's family ops (leaky.testing.opencl_<op>) through check_op:
every op and direction passes against the CPU library's golden, bit for
bit (ELU within its bound), f32 and f16, on an even split with small
tiles; a device output that is wrong is caught. Skipped without OpenCL."""
import numpy as np
import pytest

import leaky.testing as lt

OPS = [op for op in lt.OPS if op != "leaky_relu"]


def device_or_skip(op, direction, **kw):
    try:
        fn = getattr(lt, "opencl_" + op)(direction=direction, **kw)
        fn(*([np.zeros((2, 2, 2), np.float32)] * (1 if direction == "forward" else 2)
             + ([np.zeros(2, np.float32)] if op in ("prelu", "bias_act", "bias_act_dropout") else [])
             + ([np.zeros(1, np.uint8)] if op == "bias_act_dropout" and direction == "backward"
                else [])))
    except RuntimeError as e:
        pytest.skip("no OpenCL device: %s" % e)
    return fn


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("direction", ["forward", "backward"])
@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_the_device_passes_check_op(op, direction, dtype):
    fn = device_or_skip(op, direction, cores=3, split="even", tile_elems=64)
    d = lt.check_op(fn, op=op, direction=direction, dtype=dtype, elems=3000, split="even",
                    cores=3, tile_elems=64)
    assert d.passed and not d.findings, str(d)


def test_a_wrong_device_result_is_caught():
    fn = device_or_skip("prelu", "forward", cores=3, split="even", tile_elems=64)

    def first_weight_for_all(x, weight):
        return fn(x, np.full_like(weight, weight[0]))
    d = lt.check_op(first_weight_for_all, op="prelu", dtype="f32", elems=3000, split="even",
                    cores=3, tile_elems=64)
    assert not d.passed and d.kinds() == ["weight_broadcast"], str(d)

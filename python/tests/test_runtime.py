"""The PyTorch operators as ordinary PyTorch citizens: they run on PyTorch's
intra-op threads (no second pool in the process), their outputs come from
PyTorch's allocator and behave like any tensor (resize_, share_memory_,
pickling, a DataLoader worker round trip), Meta kernels propagate shapes and
dtypes without data, and bias_act's alpha/gain default by activation."""
import math
import os
import pickle
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import leaky
from conftest import assert_same_bits, random_tensor

ops = torch.ops.leaky

# Every op once on a tensor large enough that a call splits over 2 threads
# (the planner wakes a core per 256 KiB of traffic).
EVERY_OP = """
import torch, leaky
ops = torch.ops.leaky
torch.set_num_threads(2)
x = torch.randn(1 << 20); g = torch.randn(1 << 20)
x4 = torch.randn(64, 16, 32, 32); b = torch.randn(16); w = torch.rand(16)
ops.leaky_relu(x, 0.2); ops.leaky_relu_(x.clone(), 0.2); ops.leaky_relu_backward(g, x, 0.2, False)
ops.relu(x); ops.relu_(x.clone()); ops.relu_backward(g, x)
ops.elu(x); ops.elu_(x.clone()); ops.elu_backward(g, 1.0, 1.0, 1.0, False, x)
ops.prelu(x4, w); ops.prelu_backward(x4, x4, w)
ops.rrelu(x, training=True); ops.rrelu_with_noise(x, training=True)
ops.rrelu_backward(g, x, 0.125, 0.3, True, 0, 0)
y, mask = ops.bias_act_dropout(x4, b, 1, "lrelu", None, None, None, 0.5, 1, 0)
ops.bias_act(x4, b); ops.bias_act_backward(x4, x4, b, 1, "lrelu", 0.2, 1.4, None, mask, 0.5)
import leaky.numpy
print(ops.pool_threads(), leaky.numpy.pool_threads())
"""


def test_no_pool_of_the_library_under_pytorch():
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-c", EVERY_OP], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    # The operators' copy of the library never started its pool; the NumPy
    # module's copy (its own entry points keep the internal pool) did not
    # either, as nothing called it.
    assert result.stdout.split() == ["0", "0"], result.stdout


def test_numpy_entry_points_keep_the_internal_pool():
    import numpy as np
    import leaky.numpy
    leaky.numpy.leaky_relu(np.ones(1 << 22, dtype=np.float32), 0.1, num_threads=2)
    assert leaky.numpy.pool_threads() >= 1


@pytest.mark.parametrize("threads", [1, 2])
def test_results_do_not_depend_on_torch_threads(threads):
    old = torch.get_num_threads()
    try:
        torch.set_num_threads(threads)
        x = random_tensor((1 << 20,), torch.float32)
        assert_same_bits(ops.leaky_relu(x, 0.2), F.leaky_relu(x, 0.2))
        b = torch.randn(8)
        x4 = random_tensor((16, 8, 64, 64), torch.float32)
        assert_same_bits(ops.bias_act(x4, b, 1, "lrelu", 0.2, 1.0),
                         F.leaky_relu(x4 + b.view(1, -1, 1, 1), 0.2))
    finally:
        torch.set_num_threads(old)


def test_outputs_are_ordinary_tensors(tmp_path):
    x = random_tensor((1 << 20,), torch.float32)  # 4 MiB
    y = ops.leaky_relu(x, 0.2)
    expected = F.leaky_relu(x, 0.2)
    y.resize_(1 << 22)  # grows like any tensor from PyTorch's allocator
    assert y.numel() == 1 << 22
    assert_same_bits(y[: 1 << 20], expected)
    z = ops.relu(x).share_memory_()
    assert z.is_shared()
    restored = pickle.loads(pickle.dumps(ops.elu(x)))
    assert_same_bits(restored, ops.elu(x))
    torch.save(ops.leaky_relu(x, 0.3), tmp_path / "y.pt")
    assert_same_bits(torch.load(tmp_path / "y.pt"), F.leaky_relu(x, 0.3))


class _LeakyDataset(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return ops.leaky_relu(torch.full((1000,), -float(i + 1)), 0.5)


def test_dataloader_worker_round_trip():
    loader = torch.utils.data.DataLoader(_LeakyDataset(), batch_size=2, num_workers=2)
    batches = [b for b in loader]
    assert [float(b[r, 0]) for b in batches for r in range(2)] == [-0.5, -1.0, -1.5, -2.0]


def test_meta_kernels_propagate_shapes_and_dtypes():
    meta = dict(device="meta")
    x = torch.empty(2, 3, 4, 5, dtype=torch.bfloat16, **meta)
    g = torch.empty_like(x)
    w = torch.empty(3, dtype=torch.bfloat16, **meta)
    b = torch.empty(3, dtype=torch.bfloat16, **meta)
    for y in (ops.leaky_relu(x, 0.1), ops.relu(x), ops.elu(x), ops.prelu(x, w),
              ops.rrelu(x, 0.1, 0.3, True, 0, 0), ops.bias_act(x, b),
              ops.leaky_relu_backward(g, x, 0.1, False), ops.relu_backward(g, x),
              ops.elu_backward(g, 1.0, 1.0, 1.0, False, x), ops.rrelu_backward(g, x, 0.1, 0.3, True, 0, 0)):
        assert y.device.type == "meta" and y.shape == x.shape and y.dtype == x.dtype
    assert ops.leaky_relu_(x, 0.1) is x
    y, noise = ops.rrelu_with_noise(x, 0.1, 0.3, True, 0, 0)
    assert noise.shape == x.shape
    y, mask = ops.bias_act_dropout(x, b, 1, "lrelu", None, None, None, 0.5, 0, 0)
    assert mask.shape == ((x.numel() + 7) // 8,) and mask.dtype == torch.uint8
    dx, db = ops.bias_act_backward(g, x, b, 1, "lrelu", 0.2, 1.4, None, mask, 0.5)
    assert dx.shape == x.shape and db.shape == (3,)
    dx, dw = ops.prelu_backward(g, x, w)
    assert dw.shape == (3,)
    with pytest.raises(RuntimeError, match="does not match"):
        ops.leaky_relu_backward(torch.empty(2, **meta), x, 0.1, False)
    with pytest.raises(RuntimeError, match="not supported"):
        ops.relu(torch.empty(3, dtype=torch.int32, **meta))


@pytest.mark.parametrize("act,alpha,gain", [("linear", 0.0, 1.0), ("relu", 0.0, math.sqrt(2)),
                                            ("lrelu", 0.2, math.sqrt(2))])
def test_bias_act_defaults_follow_the_activation(act, alpha, gain):
    x = random_tensor((4, 3, 5), torch.float32)
    b = torch.randn(3)
    assert_same_bits(ops.bias_act(x, b, 1, act), ops.bias_act(x, b, 1, act, alpha, gain))
    assert_same_bits(leaky.functional.bias_act(x, b, act=act),
                     ops.bias_act(x, b, 1, act, alpha, gain))
    m = leaky.nn.BiasAct(3, act=act)
    with torch.no_grad():
        m.bias.copy_(b)
    assert_same_bits(m(x), ops.bias_act(x, b, 1, act, alpha, gain))
    # Given values win.
    assert_same_bits(ops.bias_act(x, b, 1, act, 0.3, 2.0), ops.bias_act(x, b, 1, act, 0.3, 2.0))
    if act == "linear":
        assert_same_bits(ops.bias_act(x, b, 1, act), x + b.view(1, 3, 1))


def test_one_version_everywhere():
    """leaky.__version__ is the library's leaky_version(), and the wheel's
    metadata (pyproject.toml) and the C header say the same."""
    import os
    import re
    root = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir)
    header = open(os.path.join(root, "include", "leaky", "leaky.h")).read()
    parts = [re.search(r"#define LEAKY_VERSION_%s (\d+)" % k, header).group(1)
             for k in ("MAJOR", "MINOR", "PATCH")]
    pyproject = open(os.path.join(root, "python", "pyproject.toml")).read()
    wheel = re.search(r'^version = "([^"]+)"', pyproject, re.M).group(1)
    assert leaky.__version__ == ".".join(parts) == wheel, (leaky.__version__, parts, wheel)


def test_without_numpy_leaky_numpy_says_what_to_install():
    code = ("import sys; sys.modules['numpy'] = None\n"
            "try:\n    import leaky.numpy\nexcept ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ)).stdout
    assert "NumPy is not importable from this interpreter (%s)" % sys.executable in out, out
    assert "python3-numpy" in out, out


@pytest.mark.parametrize("module", ["leaky.nn", "leaky.functional"])
def test_without_torch_the_import_names_the_interpreter(module):
    """An interpreter without PyTorch gets the promised one-sentence
    ImportError from leaky.nn and leaky.functional, not a bare
    ModuleNotFoundError for 'torch'."""
    code = ("import sys; sys.modules['torch'] = None\n"
            "try:\n    import %s\nexcept ImportError as e:\n    print(e)\n" % module)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ)).stdout
    assert "PyTorch is not importable from this interpreter (%s)" % sys.executable in out, out
    # The advice fits the interpreter: on Debian's own, install the package.
    if os.path.realpath(sys.executable) == os.path.realpath("/usr/bin/python3"):
        assert "apt install python3-torch" in out and "is for /usr/bin/python3" not in out, out
    else:
        assert "run this with /usr/bin/python3" in out, out

"""leaky: exact, fast LeakyReLU for PyTorch and NumPy.

    import leaky
    y = leaky.functional.leaky_relu(x, 0.2)      # torch.ops.leaky.leaky_relu
    model = torch.nn.Sequential(..., leaky.nn.LeakyReLU(0.2), ...)
    leaky.numpy.leaky_relu(array, 0.2)            # no PyTorch needed

`import leaky` loads the PyTorch operators when PyTorch is importable;
`leaky.numpy` alone needs only NumPy.
"""
from . import _library

try:
    import torch as _torch  # noqa: F401
except ImportError:
    _torch = None

if _torch is not None:
    ops = _library.load_torch_ops()
    from . import functional, nn  # noqa: E402,F401


def __getattr__(name):
    if name == "__version__":  # the library's own (leaky_version()), never a copy
        return _library.load_native().version()
    if name == "numpy":
        import importlib
        return importlib.import_module("leaky.numpy")
    if name in ("functional", "nn", "ops"):
        _library.load_torch_ops()  # raises the clear ImportError
    raise AttributeError(f"module 'leaky' has no attribute {name!r}")

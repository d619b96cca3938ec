"""NumPy entry points, without PyTorch.

dtypes: float32, float64, float16, and bfloat16 passed as a uint16 view of
its bit patterns. Inputs go through numpy.asarray; a non-C-contiguous one is
copied first. `out` must be a C-contiguous array of the input's dtype and
shape (it may be the input itself: in place). num_threads=0 uses every core.
The GIL is released while the kernels run."""
import numpy as _np

from . import _library

_native = _library.load_native()


def leaky_relu(x, negative_slope=0.01, out=None, num_threads=0):
    """y = x if x > 0 else x * negative_slope (half types computed in float32)."""
    return _native.leaky_relu(_np.asarray(x), negative_slope, out, num_threads)


def leaky_relu_backward(dy, saved, negative_slope, saved_is_result=False, out=None,
                        num_threads=0):
    """dx = dy if saved > 0 else dy * negative_slope; `saved` is the forward
    input, or its result with saved_is_result (needs negative_slope >= 0)."""
    return _native.leaky_relu_backward(_np.asarray(dy), _np.asarray(saved), negative_slope,
                                       saved_is_result, out, num_threads)


simd_target = _native.simd_target
version = _native.version
pool_threads = _native.pool_threads  # threads of the library's own pool started so far

__all__ = ["leaky_relu", "leaky_relu_backward", "simd_target", "version"]

"""NumPy entry points, without PyTorch.

dtypes: float32, float64, float16, and bfloat16 passed as a uint16 view of
its bit patterns. Inputs go through numpy.asarray; a non-C-contiguous one is
copied first. `out` must be a C-contiguous array of the input's dtype and
shape (it may be the input itself: in place). num_threads=0 uses every core.
The GIL is released while the kernels run."""
import sys as _sys

from . import _library

try:
    import numpy as _np
except ImportError as _error:  # one sentence with the remedy, not a bare ModuleNotFoundError
    raise ImportError(_library.not_importable("NumPy", "python3-numpy", _sys.executable,
                                              prefix="leaky.numpy")) from _error

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


# 8-bit data (leaky/eight_bit.h; docs/eight_bit.md): the type names and
# their codes in leaky_type8, with each type's range.
TYPES8 = {"qu8": (0, 0, 255), "qs8": (1, -128, 127), "fp8_e4m3": (2, 0, 255),
          "fp8_e5m2": (3, 0, 255)}


def _quant(type, input_scale, input_zero_point, output_scale, output_zero_point, output_min,
           output_max, saturate):
    if type not in TYPES8:
        raise ValueError(f"type must be one of {', '.join(TYPES8)} (got {type!r})")
    code, lo, hi = TYPES8[type]
    return (code, float(input_scale), int(input_zero_point),
            float(input_scale if output_scale is None else output_scale),
            int(input_zero_point if output_zero_point is None else output_zero_point),
            int(lo if output_min is None else output_min),
            int(hi if output_max is None else output_max), 1 if saturate else 0)


def q8_leaky_relu(x, negative_slope=0.01, type="qu8", input_scale=1.0, input_zero_point=0,
                  output_scale=None, output_zero_point=None, output_min=None, output_max=None,
                  saturate=True, out=None, num_threads=0):
    """LeakyReLU on 8-bit data, correctly rounded (leaky/eight_bit.h): qu8
    (uint8) and qs8 (int8) with per-tensor scales and zero points (the
    output's default to the input's) and an optional output clamp; fp8_e4m3
    and fp8_e5m2 as uint8 arrays of their bits (saturate: overflow to the
    largest finite value, else to OCP's inf/NaN)."""
    q = _quant(type, input_scale, input_zero_point, output_scale, output_zero_point, output_min,
               output_max, saturate)
    return _native.q8_leaky_relu(_np.asarray(x), negative_slope, q, out, num_threads)


def q8_relu(x, type="qu8", input_scale=1.0, input_zero_point=0, output_scale=None,
            output_zero_point=None, output_min=None, output_max=None, saturate=True, out=None,
            num_threads=0):
    """ReLU on 8-bit data (as q8_leaky_relu)."""
    q = _quant(type, input_scale, input_zero_point, output_scale, output_zero_point, output_min,
               output_max, saturate)
    return _native.q8_relu(_np.asarray(x), q, out, num_threads)


def q8_elu(x, alpha=1.0, scale=1.0, input_scale_elu=1.0, type="qu8", input_scale=1.0,
           input_zero_point=0, output_scale=None, output_zero_point=None, output_min=None,
           output_max=None, saturate=True, out=None, num_threads=0):
    """ELU on 8-bit data (input_scale_elu is ELU's own input scale)."""
    q = _quant(type, input_scale, input_zero_point, output_scale, output_zero_point, output_min,
               output_max, saturate)
    return _native.q8_elu(_np.asarray(x), alpha, scale, input_scale_elu, q, out, num_threads)


def q8_leaky_relu_backward(dy, saved, negative_slope, type="fp8_e4m3", saved_is_result=False,
                           saturate=True, out=None, num_threads=0):
    """fp8 LeakyReLU backward: dx = dy if saved > 0 else round(dy * slope)."""
    q = _quant(type, 1.0, 0, None, None, None, None, saturate)
    return _native.q8_leaky_relu_backward(_np.asarray(dy), _np.asarray(saved), negative_slope,
                                          saved_is_result, q, out, num_threads)


def q8_rrelu_eval_backward(dy, x, lower=1 / 8, upper=1 / 3, type="fp8_e4m3", saturate=True,
                           out=None, num_threads=0):
    """fp8 RReLU backward in evaluation: q8_leaky_relu_backward from the
    input with the slope (lower + upper) / 2."""
    q = _quant(type, 1.0, 0, None, None, None, None, saturate)
    return _native.q8_rrelu_eval_backward(_np.asarray(dy), _np.asarray(x), lower, upper, q, out,
                                          num_threads)


def q8_elu_backward(dy, saved, alpha=1.0, scale=1.0, input_scale_elu=1.0, type="fp8_e4m3",
                    saved_is_result=False, saturate=True, out=None, num_threads=0):
    """fp8 ELU backward (leaky/eight_bit.h): from the input, dx =
    round(dy * input_scale * alpha * scale * exp(x * input_scale)) where
    x <= 0, else round(dy * scale); from the result (alpha >= 0),
    round(dy * input_scale * (y + alpha * scale)) where y <= 0."""
    q = _quant(type, 1.0, 0, None, None, None, None, saturate)
    return _native.q8_elu_backward(_np.asarray(dy), _np.asarray(saved), alpha, scale,
                                   input_scale_elu, saved_is_result, q, out, num_threads)


def q8_prelu_backward(dy, x, weight, axis=1, type="fp8_e4m3", saturate=True, num_threads=0):
    """fp8 PReLU backward over the channel axis `axis`: returns (dx, dweight),
    dx = dy where x > 0 else round(weight[c] * dy), dweight (float32) the
    exact per-channel sum of x * dy where x <= 0, rounded once."""
    q = _quant(type, 1.0, 0, None, None, None, None, saturate)
    return _native.q8_prelu_backward(_np.asarray(dy), _np.asarray(x), _np.asarray(weight), axis,
                                     q, num_threads)


def fp8_from_f32(x, type="fp8_e4m3", saturate=True):
    """float32 values to fp8 bits (uint8), to nearest with ties to even."""
    if type not in ("fp8_e4m3", "fp8_e5m2"):
        raise ValueError(f"type must be fp8_e4m3 or fp8_e5m2 (got {type!r})")
    return _native.fp8_from_f32(_np.asarray(x, dtype=_np.float32), TYPES8[type][0], saturate)


def fp8_to_f32(x, type="fp8_e4m3"):
    """fp8 bits (uint8) to their exact float32 values."""
    if type not in ("fp8_e4m3", "fp8_e5m2"):
        raise ValueError(f"type must be fp8_e4m3 or fp8_e5m2 (got {type!r})")
    return _native.fp8_to_f32(_np.ascontiguousarray(x, dtype=_np.uint8), TYPES8[type][0])


simd_target = _native.simd_target
version = _native.version
pool_threads = _native.pool_threads  # threads of the library's own pool started so far

__all__ = ["leaky_relu", "leaky_relu_backward", "q8_leaky_relu", "q8_relu", "q8_elu",
           "q8_leaky_relu_backward", "q8_rrelu_eval_backward", "q8_elu_backward",
           "q8_prelu_backward", "fp8_from_f32", "fp8_to_f32", "simd_target", "version"]

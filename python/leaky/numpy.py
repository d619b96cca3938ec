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
    return _native.leaky_relu(_np.asarray(x), float(negative_slope), out, int(num_threads))


def leaky_relu_backward(dy, saved, negative_slope, saved_is_result=False, out=None,
                        num_threads=0):
    """dx = dy if saved > 0 else dy * negative_slope; `saved` is the forward
    input, or its result with saved_is_result (needs negative_slope >= 0)."""
    return _native.leaky_relu_backward(_np.asarray(dy), _np.asarray(saved), float(negative_slope),
                                       bool(saved_is_result), out, int(num_threads))


def relu(x, out=None, num_threads=0):
    """y = 0 if x < 0 else x, as torch.relu (NaN propagates, -0 stays -0)."""
    return _native.relu(_np.asarray(x), out, int(num_threads))


def relu_backward(dy, saved, out=None, num_threads=0):
    """dx = 0 if saved <= 0 else dy; `saved` is the forward input or its
    result (the same answer from either)."""
    return _native.relu_backward(_np.asarray(dy), _np.asarray(saved), out, int(num_threads))


def elu(x, alpha=1.0, scale=1.0, input_scale=1.0, out=None, num_threads=0):
    """y = expm1(x * input_scale) * alpha * scale if x <= 0 else x * scale,
    as F.elu (SELU: its alpha and scale); expm1 within the ulp bounds of
    leaky/reference.hpp."""
    return _native.elu(_np.asarray(x), float(alpha), float(scale), float(input_scale), out,
                       int(num_threads))


def elu_backward(dy, saved, alpha=1.0, scale=1.0, input_scale=1.0, saved_is_result=False,
                 out=None, num_threads=0):
    """ELU's gradient from the forward input, or from its result with
    saved_is_result (needs alpha >= 0); leaky.h gives the formulas."""
    return _native.elu_backward(_np.asarray(dy), _np.asarray(saved), float(alpha), float(scale),
                                float(input_scale), bool(saved_is_result), out, int(num_threads))


def prelu(x, weight, axis=1, out=None, num_threads=0):
    """y = x if x > 0 else weight[c] * x, c the index along `axis` (a
    one-element weight is shared by every element), as F.prelu."""
    return _native.prelu(_np.asarray(x), _np.asarray(weight), int(axis), out, int(num_threads))


def prelu_backward(dy, x, weight, axis=1, out=None, num_threads=0):
    """Returns (dx, dweight): dx = dy if x > 0 else weight[c] * dy; dweight
    per channel the sum of x * dy where x <= 0, accumulated in double and
    rounded once (the same bits for any thread count)."""
    return _native.prelu_backward(_np.asarray(dy), _np.asarray(x), _np.asarray(weight), int(axis),
                                  out, int(num_threads))


def rrelu(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0, out=None,
          num_threads=0):
    """F.rrelu: in training each x <= 0 gets a slope from U(lower, upper)
    drawn by the Philox stream (seed, offset) in memory order, the same for
    any thread count (advance offset by x.size per call for fresh slopes); in
    evaluation the slope is (lower + upper) / 2."""
    return _native.rrelu(_np.asarray(x), float(lower), float(upper), bool(training), int(seed),
                         int(offset), out, False, int(num_threads))


def rrelu_with_noise(x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0, out=None,
                     num_threads=0):
    """rrelu returning (y, noise): each element's slope (1 where x > 0), as
    PyTorch's rrelu_with_noise."""
    return _native.rrelu(_np.asarray(x), float(lower), float(upper), bool(training), int(seed),
                         int(offset), out, True, int(num_threads))


def rrelu_backward(dy, x, lower=1 / 8, upper=1 / 3, training=False, seed=0, offset=0, out=None,
                   num_threads=0):
    """dx = dy * r where x <= 0, else dy: r drawn again from (seed, offset)
    exactly as the forward drew it (no noise array needed)."""
    return _native.rrelu_backward(_np.asarray(dy), _np.asarray(x), float(lower), float(upper),
                                  bool(training), int(seed), int(offset), out, int(num_threads))


def _opt_float(v):
    return None if v is None else float(v)


def bias_act(x, b=None, axis=1, act="lrelu", alpha=None, gain=None, clamp=None, dropout_p=0.0,
             seed=0, offset=0, out=None, num_threads=0):
    """clamp(act(x + b) * gain, -clamp, clamp) in one pass, as StyleGAN's
    bias_act (act: "lrelu", "relu", "linear"; b along `axis`). alpha and gain
    not given take StyleGAN's defaults: linear gain 1; relu gain sqrt(2);
    lrelu alpha 0.2, gain sqrt(2). Equals the unfused sequence bit for bit in
    float32/float64. dropout_p > 0 also drops out, as bias_act_dropout."""
    return _native.bias_act(_np.asarray(x), None if b is None else _np.asarray(b), int(axis),
                            str(act), _opt_float(alpha), _opt_float(gain), _opt_float(clamp),
                            float(dropout_p), int(seed), int(offset), False, out,
                            int(num_threads))


def bias_act_backward(dy, x, b=None, axis=1, act="lrelu", alpha=None, gain=None, clamp=None,
                      out=None, num_threads=0):
    """Returns (dx, db): bias_act's gradients (clamp passes the gradient where
    -clamp <= the pre-clamp value <= clamp); db per channel, accumulated in
    double and rounded once."""
    return _native.bias_act_backward(_np.asarray(dy), _np.asarray(x),
                                     None if b is None else _np.asarray(b), int(axis), str(act),
                                     _opt_float(alpha), _opt_float(gain), _opt_float(clamp), None,
                                     0.0, out, int(num_threads))


def bias_act_dropout(x, b=None, axis=1, act="lrelu", alpha=None, gain=None, clamp=None,
                     dropout_p=0.5, seed=0, offset=0, out=None, num_threads=0):
    """bias_act then dropout, returning (y, mask): kept elements scaled by
    1 / (1 - p), the keep decisions drawn from the Philox stream (seed,
    offset) in memory order; mask is uint8 with one bit per element (bit
    i % 8 of byte i // 8 set when element i was kept)."""
    return _native.bias_act(_np.asarray(x), None if b is None else _np.asarray(b), int(axis),
                            str(act), _opt_float(alpha), _opt_float(gain), _opt_float(clamp),
                            float(dropout_p), int(seed), int(offset), True, out,
                            int(num_threads))


def bias_act_dropout_backward(dy, x, mask, b=None, axis=1, act="lrelu", alpha=None, gain=None,
                              clamp=None, dropout_p=0.5, out=None, num_threads=0):
    """Returns (dx, db): dy times (kept ? 1 / (1 - p) : 0) from the forward's
    mask, then as bias_act_backward."""
    return _native.bias_act_backward(_np.asarray(dy), _np.asarray(x),
                                     None if b is None else _np.asarray(b), int(axis), str(act),
                                     _opt_float(alpha), _opt_float(gain), _opt_float(clamp),
                                     _np.asarray(mask), float(dropout_p), out, int(num_threads))


def family():
    """The rows of leaky/family.h: one dict per op and direction (op,
    direction, the C and C++ names, operands, scalars, exactness, random)."""
    return _native.family()


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

__all__ = ["leaky_relu", "leaky_relu_backward", "relu", "relu_backward", "elu", "elu_backward",
           "prelu", "prelu_backward", "rrelu", "rrelu_with_noise", "rrelu_backward", "bias_act",
           "bias_act_backward", "bias_act_dropout", "bias_act_dropout_backward", "family",
           "q8_leaky_relu", "q8_relu", "q8_elu",
           "q8_leaky_relu_backward", "q8_rrelu_eval_backward", "q8_elu_backward",
           "q8_prelu_backward", "fp8_from_f32", "fp8_to_f32", "simd_target", "version"]

/* leaky/family.h: the operator family, one row per op and direction.
 *
 * The one public list every layer is checked against: the C entry points
 * (leaky.h), C++ (leaky.hpp), NumPy (leaky.numpy), PyTorch (torch.ops.leaky,
 * leaky.functional), the toolkit (golden, check, diagnosis) and the device
 * backend (leaky/opencl.h). tests/family_test.cc takes the address of every
 * row's C and C++ entry points; python/tests/test_family_layers.py fails when a
 * layer lacks a row (or still lists as missing a row it has); docs/semantics.md's
 * table is generated from it (scripts/family_table.py). Plain C99: no
 * types, no functions, no ABI.
 *
 * LEAKY_FAMILY(X) calls, for each row,
 *   X(op, direction, c_name, cpp_name, inputs, outputs, scalars, exactness, random)
 * op         the family's name in every layer: leaky.numpy.<op>,
 *            torch.ops.leaky.<op>, `leaky golden --op <op>`; the backward is
 *            <op>_backward in Python and PyTorch.
 * direction  forward or backward.
 * c_name     the C entry point is <c_name>_<direction>, and
 * cpp_name   the C++ one leaky::<cpp_name>_<direction> (leaky.hpp). Only
 *            ReLU's differ from op: leaky_relu_* is LeakyReLU's, so ReLU's
 *            are leaky_plain_relu_* and leaky::plain_relu_*.
 * inputs     the operands read, comma-separated; [channels] marks a
 *            per-channel operand of an op viewed as [outer, channels, inner];
 *            ? marks an optional one (NULL / None).
 * outputs    the operands written, the same way; mask is one bit per element.
 * scalars    "name range" pairs separated by "; ".
 * exactness  "exact": bit-exact against leaky/reference.hpp for every dtype,
 *            target and thread count; otherwise where the measured bound is.
 * random     1 when the op draws from the Philox stream (seed, offset).
 */
#ifndef LEAKY_FAMILY_H_
#define LEAKY_FAMILY_H_

#define LEAKY_FAMILY(X)                                                                            \
  X(leaky_relu, forward, leaky_relu, leaky_relu, "x", "y", "negative_slope finite", "exact", 0)    \
  X(leaky_relu, backward, leaky_relu, leaky_relu, "dy, saved", "dx",                               \
    "negative_slope finite; saved_is_result 0 or 1 (1 needs negative_slope >= 0)", "exact", 0)     \
  X(relu, forward, leaky_plain_relu, plain_relu, "x", "y", "", "exact", 0)                         \
  X(relu, backward, leaky_plain_relu, plain_relu, "dy, saved", "dx", "", "exact", 0)               \
  X(elu, forward, leaky_elu, elu, "x", "y", "alpha finite; scale finite; input_scale finite",      \
    "ulp bound in leaky/reference.hpp", 0)                                                         \
  X(elu, backward, leaky_elu, elu, "dy, saved", "dx",                                              \
    "alpha finite; scale finite; input_scale finite; saved_is_result 0 or 1 (1 needs "             \
    "alpha >= 0)",                                                                                 \
    "ulp bound in leaky/reference.hpp", 0)                                                         \
  X(prelu, forward, leaky_prelu, prelu, "x, weight[channels]", "y", "", "exact", 0)                \
  X(prelu, backward, leaky_prelu, prelu, "dy, x, weight[channels]", "dx, dweight[channels]?", "",  \
    "exact", 0)                                                                                    \
  X(rrelu, forward, leaky_rrelu, rrelu, "x", "y, noise?",                                          \
    "lower finite; upper finite, >= lower; training (0: evaluation); seed; offset (offset + n <= " \
    "2^64)",                                                                                       \
    "exact", 1)                                                                                    \
  X(rrelu, backward, leaky_rrelu, rrelu, "dy, x", "dx",                                            \
    "lower finite; upper finite, >= lower; training (0: evaluation); seed; offset (offset + n <= " \
    "2^64)",                                                                                       \
    "exact", 1)                                                                                    \
  X(bias_act, forward, leaky_bias_act, bias_act, "x, bias[channels]?", "y",                        \
    "activation linear, relu or lrelu; alpha finite; gain finite; clamp finite (< 0: none)",       \
    "exact", 0)                                                                                    \
  X(bias_act, backward, leaky_bias_act, bias_act, "dy, x, bias[channels]?", "dx, db[channels]?",   \
    "activation linear, relu or lrelu; alpha finite; gain finite; clamp finite (< 0: none)",       \
    "exact", 0)                                                                                    \
  X(bias_act_dropout, forward, leaky_bias_act_dropout, bias_act_dropout, "x, bias[channels]?",     \
    "y, mask",                                                                                     \
    "activation linear, relu or lrelu; alpha finite; gain finite; clamp finite (< 0: none); "      \
    "p in [0, 1); seed; offset (offset + n <= 2^64)",                                              \
    "exact", 1)                                                                                    \
  X(bias_act_dropout, backward, leaky_bias_act_dropout, bias_act_dropout,                          \
    "dy, x, bias[channels]?, mask", "dx, db[channels]?",                                           \
    "activation linear, relu or lrelu; alpha finite; gain finite; clamp finite (< 0: none); "      \
    "p in [0, 1)",                                                                                 \
    "exact", 0)

#endif /* LEAKY_FAMILY_H_ */

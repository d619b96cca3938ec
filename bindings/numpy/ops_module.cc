// leaky._native's float family: every row of leaky/family.h over the C API,
// for float32, float64, float16 and bfloat16 (a uint16 view of its bits)
// arrays, under the same rules for every op: every array operand has the
// first input's dtype; inputs that are not C-contiguous are copied; `out` is
// checked (it may be an input: in place); num_threads is leaky_options'; the
// GIL is released while the library runs. leaky/numpy.py gives each its
// signature and documentation.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "../bias_act_names.h"
#include "leaky/family.h"
#include "leaky/leaky.h"
#include "leaky/leaky.hpp"
#include "leaky/reference.hpp"
#include "numpy_common.h"

namespace py = pybind11;

namespace {

using leaky::numpy::AroundAxis;
using leaky::numpy::ChannelView;
using leaky::numpy::CheckPerChannel;
using leaky::numpy::Contiguous;
using leaky::numpy::DtypeName;
using leaky::numpy::DtypeOf;
using leaky::numpy::SameShape;

using Maybe = std::optional<py::array>;

// The dtype every operand of a call shares: the first input's.
struct Call {
  py::array first;
  const char* first_name;
  leaky_dtype dtype;
  leaky_options options;

  Call(const py::array& x, const char* name, int num_threads)
      : first(Contiguous(x, name)),
        first_name(name),
        dtype(DtypeOf(x, name)),
        options{num_threads, -1, nullptr} {}

  void CheckDtype(const py::array& a, const char* what) const {
    if (DtypeOf(a, what) != dtype || a.dtype().kind() != first.dtype().kind()) {
      throw py::type_error(std::string(what) + " has dtype " + DtypeName(a.dtype()) + " but " +
                           first_name + " has " + DtypeName(first.dtype()));
    }
  }
  // Another elementwise input: the first's dtype and shape.
  py::array Input(const py::array& a, const char* what) const {
    CheckDtype(a, what);
    if (!SameShape(a, first)) {
      throw py::value_error(std::string(what) + " has a different shape than " + first_name);
    }
    return Contiguous(a, what);
  }
  // A per-channel input (weight, bias): the first's dtype, `channels` long.
  py::array PerChannel(const py::array& a, size_t channels, const char* what) const {
    CheckDtype(a, what);
    CheckPerChannel(a, channels, what);
    return Contiguous(a, what);
  }
  // A new array shaped like the first, or the caller's `out` after checking it.
  py::array Output(const Maybe& out) const {
    if (!out) return New(Shape());
    CheckDtype(*out, "out");
    leaky::numpy::CheckOut(*out, first);
    return *out;
  }
  std::vector<py::ssize_t> Shape() const {
    return std::vector<py::ssize_t>(first.shape(), first.shape() + first.ndim());
  }
  py::array New(const std::vector<py::ssize_t>& shape) const {
    return py::array(first.dtype(), shape);
  }
  size_t n() const { return static_cast<size_t>(first.size()); }
};

// Runs `call` without the GIL and raises on its status.
template <class F>
void Run(const F& call) {
  leaky_status status;
  {
    py::gil_scoped_release no_gil;
    status = call();
  }
  leaky::numpy::Check(status);
}

// (py::array() is an empty array, not a null handle: optional says "none".)
const void* DataOrNull(const Maybe& a) { return a ? a->data() : nullptr; }

// An elementwise op of one input (x -> y) or two (dy, saved -> dx): the
// call's checks, its output, and `op(call, inputs..., output)` run without
// the GIL.
template <class Op>
py::array Unary(const py::array& x, const Maybe& out, int threads, const Op& op) {
  const Call c(x, "x", threads);
  py::array y = c.Output(out);
  const void* src = c.first.data();
  void* dst = y.mutable_data();
  Run([&] { return op(c, src, dst); });
  return y;
}

template <class Op>
py::array Binary(const py::array& dy, const py::array& saved, const char* saved_name,
                 const Maybe& out, int threads, const Op& op) {
  const Call c(dy, "dy", threads);
  const py::array s = c.Input(saved, saved_name);
  py::array dx = c.Output(out);
  const void *g = c.first.data(), *v = s.data();
  void* d = dx.mutable_data();
  Run([&] { return op(c, g, v, d); });
  return dx;
}

py::array LeakyRelu(const py::array& x, double negative_slope, const Maybe& out, int threads) {
  return Unary(x, out, threads, [&](const Call& c, const void* src, void* dst) {
    return leaky_relu_forward(c.dtype, c.n(), src, dst, negative_slope, &c.options);
  });
}

py::array LeakyReluBackward(const py::array& dy, const py::array& saved, double negative_slope,
                            bool saved_is_result, const Maybe& out, int threads) {
  return Binary(dy, saved, "saved", out, threads,
                [&](const Call& c, const void* g, const void* v, void* d) {
                  return leaky_relu_backward(c.dtype, c.n(), g, v, saved_is_result ? 1 : 0, d,
                                             negative_slope, &c.options);
                });
}

py::array Relu(const py::array& x, const Maybe& out, int threads) {
  return Unary(x, out, threads, [](const Call& c, const void* src, void* dst) {
    return leaky_plain_relu_forward(c.dtype, c.n(), src, dst, &c.options);
  });
}

py::array ReluBackward(const py::array& dy, const py::array& saved, const Maybe& out, int threads) {
  return Binary(dy, saved, "saved", out, threads,
                [](const Call& c, const void* g, const void* v, void* d) {
                  return leaky_plain_relu_backward(c.dtype, c.n(), g, v, d, &c.options);
                });
}

py::array Elu(const py::array& x, double alpha, double scale, double input_scale, const Maybe& out,
              int threads) {
  return Unary(x, out, threads, [&](const Call& c, const void* src, void* dst) {
    return leaky_elu_forward(c.dtype, c.n(), src, dst, alpha, scale, input_scale, &c.options);
  });
}

py::array EluBackward(const py::array& dy, const py::array& saved, double alpha, double scale,
                      double input_scale, bool saved_is_result, const Maybe& out, int threads) {
  return Binary(dy, saved, "saved", out, threads,
                [&](const Call& c, const void* g, const void* v, void* d) {
                  return leaky_elu_backward(c.dtype, c.n(), g, v, saved_is_result ? 1 : 0, d, alpha,
                                            scale, input_scale, &c.options);
                });
}

// PReLU's view: a one-element weight is shared by every element (as
// F.prelu's); otherwise one weight per position along `axis`.
ChannelView PreluView(const py::array& x, const py::array& weight, int axis) {
  if (weight.ndim() <= 1 && weight.size() == 1) return {static_cast<size_t>(x.size()), 1, 1};
  return AroundAxis(x, axis);
}

// A 0-d weight as one element.
py::array OneDimensional(py::array weight) {
  return weight.ndim() == 0 ? weight.reshape({1}) : weight;
}

py::array Prelu(const py::array& x, const py::array& weight, int axis, const Maybe& out,
                int threads) {
  const Call c(x, "x", threads);
  const ChannelView v = PreluView(c.first, weight, axis);
  const py::array w = c.PerChannel(OneDimensional(weight), v.channels, "weight");
  py::array y = c.Output(out);
  const void *src = c.first.data(), *ws = w.data();
  void* dst = y.mutable_data();
  Run([&] {
    return leaky_prelu_forward(c.dtype, v.outer, v.channels, v.inner, src, ws, dst, &c.options);
  });
  return y;
}

py::tuple PreluBackward(const py::array& dy, const py::array& x, const py::array& weight, int axis,
                        const Maybe& out, int threads) {
  const Call c(dy, "dy", threads);
  const py::array xs = c.Input(x, "x");
  const ChannelView v = PreluView(xs, weight, axis);
  const py::array w = c.PerChannel(OneDimensional(weight), v.channels, "weight");
  py::array dx = c.Output(out);
  py::array dweight = c.New({static_cast<py::ssize_t>(v.channels)});
  const void *g = c.first.data(), *xv = xs.data(), *ws = w.data();
  void *d = dx.mutable_data(), *dw = dweight.mutable_data();
  Run([&] {
    return leaky_prelu_backward(c.dtype, v.outer, v.channels, v.inner, g, xv, ws, d, dw,
                                &c.options);
  });
  return py::make_tuple(dx, dweight.reshape(std::vector<py::ssize_t>(
                                weight.shape(), weight.shape() + weight.ndim())));
}

// RReLU returning y and, with `with_noise`, each element's slope (1 where
// x > 0). The library writes no noise in evaluation, where every slope is
// (lower + upper) / 2: a training call with lower = upper = that mean draws
// r = lower exactly, so its noise is evaluation's.
py::object Rrelu(const py::array& x, double lower, double upper, bool training, uint64_t seed,
                 uint64_t offset, const Maybe& out, bool with_noise, int threads) {
  const Call c(x, "x", threads);
  py::array y = c.Output(out);
  const void* src = c.first.data();
  void* dst = y.mutable_data();
  const leaky_rrelu_params p{lower, upper, training ? 1 : 0, seed, offset};
  if (!with_noise) {
    Run([&] { return leaky_rrelu_forward(c.dtype, c.n(), src, dst, nullptr, &p, &c.options); });
    return y;
  }
  py::array noise = c.New(c.Shape());
  void* r = noise.mutable_data();
  Run([&] {
    return leaky_rrelu_forward(c.dtype, c.n(), src, dst, training ? r : nullptr, &p, &c.options);
  });
  if (!training) {
    const double mean = (lower + upper) / 2;
    const leaky_rrelu_params same{mean, mean, 1, seed, offset};
    py::array scratch = c.New({static_cast<py::ssize_t>(c.n())});
    void* s = scratch.mutable_data();
    Run([&] { return leaky_rrelu_forward(c.dtype, c.n(), src, s, r, &same, &c.options); });
  }
  return py::make_tuple(y, noise);
}

py::array RreluBackward(const py::array& dy, const py::array& x, double lower, double upper,
                        bool training, uint64_t seed, uint64_t offset, const Maybe& out,
                        int threads) {
  const leaky_rrelu_params p{lower, upper, training ? 1 : 0, seed, offset};
  return Binary(dy, x, "x", out, threads,
                [&](const Call& c, const void* g, const void* v, void* d) {
                  return leaky_rrelu_backward(c.dtype, c.n(), g, v, d, &p, &c.options);
                });
}

// bias_act's activation by name and StyleGAN's defaults for an alpha or
// gain not given (bindings/bias_act_names.h, the PyTorch binding's rule
// too), its errors as ValueError.
leaky_bias_act_params BiasActParams(const std::string& act, std::optional<double> alpha,
                                    std::optional<double> gain, std::optional<double> clamp) {
  try {
    return leaky::bindings::BiasActParams(act,
                                          alpha.value_or(leaky::bindings::DefaultAlpha(act)),
                                          gain.value_or(leaky::bindings::DefaultGain(act)), clamp);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

struct BiasActOperands {
  ChannelView view;
  Maybe bias;
};

BiasActOperands BiasOperands(const Call& c, const py::array& x, const Maybe& b, int axis) {
  BiasActOperands o{AroundAxis(x, axis), std::nullopt};
  if (b) o.bias = c.PerChannel(*b, o.view.channels, "b");
  return o;
}

py::object BiasAct(const py::array& x, const Maybe& b, int axis, const std::string& act,
                   std::optional<double> alpha, std::optional<double> gain,
                   std::optional<double> clamp, double dropout_p, uint64_t seed, uint64_t offset,
                   bool with_mask, const Maybe& out, int threads) {
  const Call c(x, "x", threads);
  const leaky_bias_act_params p = BiasActParams(act, alpha, gain, clamp);
  const auto [v, bias] = BiasOperands(c, c.first, b, axis);
  py::array y = c.Output(out);
  const void *src = c.first.data(), *bs = DataOrNull(bias);
  void* dst = y.mutable_data();
  if (!with_mask && dropout_p == 0.0) {
    Run([&] {
      return leaky_bias_act_forward(c.dtype, v.outer, v.channels, v.inner, src, bs, dst, &p,
                                    &c.options);
    });
    return y;
  }
  py::array_t<uint8_t> mask(static_cast<py::ssize_t>(leaky::dropout_mask_bytes(c.n())));
  uint8_t* m = mask.mutable_data();
  // The last byte's bits past n are the caller's (leaky.h): zero, so that
  // one call gives one set of mask bytes.
  std::fill_n(m, mask.size(), uint8_t{0});
  const leaky_dropout_params dropout{dropout_p, seed, offset};
  Run([&] {
    return leaky_bias_act_dropout_forward(c.dtype, v.outer, v.channels, v.inner, src, bs, dst, m,
                                          &p, &dropout, &c.options);
  });
  if (!with_mask) return y;
  return py::make_tuple(y, mask);
}

py::tuple BiasActBackward(const py::array& dy, const py::array& x, const Maybe& b, int axis,
                          const std::string& act, std::optional<double> alpha,
                          std::optional<double> gain, std::optional<double> clamp,
                          const Maybe& mask_in, double dropout_p, const Maybe& out, int threads) {
  const Call c(dy, "dy", threads);
  const py::array xs = c.Input(x, "x");
  const leaky_bias_act_params p = BiasActParams(act, alpha, gain, clamp);
  const auto [v, bias] = BiasOperands(c, xs, b, axis);
  Maybe mask;
  if (mask_in) {
    const py::array& m = *mask_in;
    if (m.dtype().kind() != 'u' || m.dtype().itemsize() != 1 || m.ndim() != 1 ||
        static_cast<size_t>(m.size()) != leaky::dropout_mask_bytes(c.n())) {
      throw py::value_error("mask must be a 1-D uint8 array of " +
                            std::to_string(leaky::dropout_mask_bytes(c.n())) +
                            " bytes (one bit per element), as bias_act_dropout returns");
    }
    mask = Contiguous(m, "mask");
  }
  py::array dx = c.Output(out);
  py::array db = c.New({static_cast<py::ssize_t>(v.channels)});
  const void *g = c.first.data(), *xv = xs.data(), *bs = DataOrNull(bias);
  void *d = dx.mutable_data(), *dbs = db.mutable_data();
  if (!mask) {
    Run([&] {
      return leaky_bias_act_backward(c.dtype, v.outer, v.channels, v.inner, g, xv, bs, d, dbs, &p,
                                     &c.options);
    });
  } else {
    const auto* m = static_cast<const uint8_t*>(mask->data());
    Run([&] {
      return leaky_bias_act_dropout_backward(c.dtype, v.outer, v.channels, v.inner, g, xv, bs, m, d,
                                             dbs, &p, dropout_p, &c.options);
    });
  }
  return py::make_tuple(dx, db);
}

// The rows of leaky/family.h, as dicts.
py::list Family() {
  py::list rows;
#define LEAKY_ROW(op, direction, c_name, cpp_name, inputs, outputs, scalars, exactness, random) \
  rows.append(py::dict(py::arg("op") = #op, py::arg("direction") = #direction,                  \
                       py::arg("c_name") = #c_name "_" #direction,                              \
                       py::arg("cpp_name") = "leaky::" #cpp_name "_" #direction,                \
                       py::arg("inputs") = inputs, py::arg("outputs") = outputs,                \
                       py::arg("scalars") = scalars, py::arg("exactness") = exactness,          \
                       py::arg("random") = static_cast<bool>(random)));
  LEAKY_FAMILY(LEAKY_ROW)
#undef LEAKY_ROW
  return rows;
}

// ELU's measured ulp bound against a correctly rounded reference
// (leaky/reference.hpp) for a dtype as leaky.testing spells it.
int EluMaxUlp(const std::string& dtype, bool backward, bool negative_input_scale) {
  namespace r = leaky::reference;
  if (dtype == "f64") {
    if (backward) return r::kEluBackwardMaxUlpF64;
    return negative_input_scale ? r::kEluForwardMaxUlpF64NegativeInputScale
                                : r::kEluForwardMaxUlpF64;
  }
  if (dtype == "f32") return backward ? r::kEluBackwardMaxUlpF32 : r::kEluForwardMaxUlpF32;
  if (dtype == "f16" || dtype == "bf16") {
    return backward ? r::kEluBackwardMaxUlpHalf : r::kEluForwardMaxUlpHalf;
  }
  throw py::value_error("dtype must be one of f32, f64, f16, bf16, not '" + dtype + "'");
}

}  // namespace

void AddOps(py::module_& m) {
  m.def("family", &Family, "the rows of leaky/family.h");
  m.def("elu_max_ulp", &EluMaxUlp, py::arg("dtype"), py::arg("backward"),
        py::arg("negative_input_scale"));
  m.def("leaky_relu", &LeakyRelu, py::arg("x"), py::arg("negative_slope"), py::arg("out"),
        py::arg("num_threads"));
  m.def("leaky_relu_backward", &LeakyReluBackward, py::arg("dy"), py::arg("saved"),
        py::arg("negative_slope"), py::arg("saved_is_result"), py::arg("out"),
        py::arg("num_threads"));
  m.def("relu", &Relu, py::arg("x"), py::arg("out"), py::arg("num_threads"));
  m.def("relu_backward", &ReluBackward, py::arg("dy"), py::arg("saved"), py::arg("out"),
        py::arg("num_threads"));
  m.def("elu", &Elu, py::arg("x"), py::arg("alpha"), py::arg("scale"), py::arg("input_scale"),
        py::arg("out"), py::arg("num_threads"));
  m.def("elu_backward", &EluBackward, py::arg("dy"), py::arg("saved"), py::arg("alpha"),
        py::arg("scale"), py::arg("input_scale"), py::arg("saved_is_result"), py::arg("out"),
        py::arg("num_threads"));
  m.def("prelu", &Prelu, py::arg("x"), py::arg("weight"), py::arg("axis"), py::arg("out"),
        py::arg("num_threads"));
  m.def("prelu_backward", &PreluBackward, py::arg("dy"), py::arg("x"), py::arg("weight"),
        py::arg("axis"), py::arg("out"), py::arg("num_threads"));
  m.def("rrelu", &Rrelu, py::arg("x"), py::arg("lower"), py::arg("upper"), py::arg("training"),
        py::arg("seed"), py::arg("offset"), py::arg("out"), py::arg("with_noise"),
        py::arg("num_threads"));
  m.def("rrelu_backward", &RreluBackward, py::arg("dy"), py::arg("x"), py::arg("lower"),
        py::arg("upper"), py::arg("training"), py::arg("seed"), py::arg("offset"), py::arg("out"),
        py::arg("num_threads"));
  m.def("bias_act", &BiasAct, py::arg("x"), py::arg("b"), py::arg("axis"), py::arg("act"),
        py::arg("alpha"), py::arg("gain"), py::arg("clamp"), py::arg("dropout_p"), py::arg("seed"),
        py::arg("offset"), py::arg("with_mask"), py::arg("out"), py::arg("num_threads"));
  m.def("bias_act_backward", &BiasActBackward, py::arg("dy"), py::arg("x"), py::arg("b"),
        py::arg("axis"), py::arg("act"), py::arg("alpha"), py::arg("gain"), py::arg("clamp"),
        py::arg("mask"), py::arg("dropout_p"), py::arg("out"), py::arg("num_threads"));
}

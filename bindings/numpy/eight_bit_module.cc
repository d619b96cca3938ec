// leaky._native's 8-bit entry points (leaky/eight_bit.h): uint8 arrays hold
// qu8 values or fp8 bits, int8 arrays qs8 values. leaky/numpy.py builds the
// parameters tuple (type, input scale and zero point, output scale and zero
// point, output clamp, saturate) from keyword arguments.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <string>
#include <tuple>

#include "leaky/eight_bit.h"
#include "numpy_common.h"

namespace py = pybind11;

namespace {

using Quant = std::tuple<int, double, int32_t, double, int32_t, int32_t, int32_t, int>;

leaky_q8_params ParamsOf(const Quant& t) {
  leaky_q8_params q{};
  q.type = static_cast<leaky_type8>(std::get<0>(t));
  q.input = {std::get<1>(t), std::get<2>(t)};
  q.output = {std::get<3>(t), std::get<4>(t)};
  q.output_min = std::get<5>(t);
  q.output_max = std::get<6>(t);
  q.saturate = std::get<7>(t);
  return q;
}

// int8 for qs8, uint8 for every other type; C-contiguous (copied if not).
py::array Bytes(const py::array& a, const leaky_q8_params& q, const char* what) {
  const bool signed_type = q.type == LEAKY_QS8;
  const char kind = a.dtype().kind();
  if (a.dtype().itemsize() != 1 || kind != (signed_type ? 'i' : 'u')) {
    throw py::type_error(std::string(what) + " has dtype " + leaky::numpy::DtypeName(a.dtype()) +
                         "; this type needs " + (signed_type ? "int8" : "uint8"));
  }
  return leaky::numpy::Contiguous(a, what);
}

py::array OutputLike(const py::array& x, const std::optional<py::array>& out) {
  if (!out) return py::array(x.dtype(), std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  const py::array& o = *out;
  if (!o.dtype().is(x.dtype())) throw py::type_error("out has another dtype than the input");
  leaky::numpy::CheckOut(o, x);
  return o;
}

template <class Call>
py::array Forward(const py::array& x_in, const Quant& quant, const std::optional<py::array>& out,
                  const Call& call) {
  const leaky_q8_params q = ParamsOf(quant);
  const py::array x = Bytes(x_in, q, "x");
  py::array y = OutputLike(x, out);
  const void* src = x.data();
  void* dst = y.mutable_data();
  const auto n = static_cast<size_t>(x.size());
  leaky_status status;
  {
    py::gil_scoped_release no_gil;
    status = call(q, n, src, dst);
  }
  leaky::numpy::Check(status);
  return y;
}

void CheckSameShape(const py::array& dy, const py::array& saved, const char* name) {
  if (dy.ndim() != saved.ndim() || !std::equal(dy.shape(), dy.shape() + dy.ndim(), saved.shape())) {
    throw py::value_error(std::string("dy and ") + name + " have different shapes");
  }
}

// dx = call(dy, saved) for the fp8 backward ops, dx shaped as dy.
template <class Call>
py::array Backward(const py::array& dy_in, const py::array& saved_in, const Quant& quant,
                   const std::optional<py::array>& out, const Call& call) {
  const leaky_q8_params q = ParamsOf(quant);
  const py::array dy = Bytes(dy_in, q, "dy"), saved = Bytes(saved_in, q, "saved");
  if (dy.size() != saved.size()) throw py::value_error("dy and saved have different sizes");
  py::array dx = OutputLike(dy, out);
  const void *g = dy.data(), *s = saved.data();
  void* d = dx.mutable_data();
  const auto n = static_cast<size_t>(dy.size());
  leaky_status status;
  {
    py::gil_scoped_release no_gil;
    status = call(q, n, g, s, d);
  }
  leaky::numpy::Check(status);
  return dx;
}

}  // namespace

void AddEightBit(py::module_& m) {
  m.def("q8_leaky_relu", [](const py::array& x, double slope, const Quant& quant,
                            std::optional<py::array> out, int threads) {
    const leaky_options o{threads, -1, nullptr};
    return Forward(x, quant, out, [&](const leaky_q8_params& q, size_t n, const void* s, void* d) {
      return leaky_q8_leaky_relu_forward(&q, n, s, d, slope, &o);
    });
  });
  m.def("q8_relu", [](const py::array& x, const Quant& quant, std::optional<py::array> out,
                      int threads) {
    const leaky_options o{threads, -1, nullptr};
    return Forward(x, quant, out, [&](const leaky_q8_params& q, size_t n, const void* s, void* d) {
      return leaky_q8_plain_relu_forward(&q, n, s, d, &o);
    });
  });
  m.def("q8_elu", [](const py::array& x, double alpha, double scale, double input_scale,
                     const Quant& quant, std::optional<py::array> out, int threads) {
    const leaky_options o{threads, -1, nullptr};
    return Forward(x, quant, out, [&](const leaky_q8_params& q, size_t n, const void* s, void* d) {
      return leaky_q8_elu_forward(&q, n, s, d, alpha, scale, input_scale, &o);
    });
  });
  m.def("q8_leaky_relu_backward", [](const py::array& dy, const py::array& saved, double slope,
                                     bool saved_is_result, const Quant& quant,
                                     std::optional<py::array> out, int threads) {
    const leaky_options o{threads, -1, nullptr};
    return Backward(dy, saved, quant, out,
                    [&](const leaky_q8_params& q, size_t n, const void* g, const void* s, void* d) {
                      return leaky_q8_leaky_relu_backward(&q, n, g, s, saved_is_result ? 1 : 0, d,
                                                          slope, &o);
                    });
  });
  m.def("q8_rrelu_eval_backward", [](const py::array& dy, const py::array& x, double lower,
                                     double upper, const Quant& quant, std::optional<py::array> out,
                                     int threads) {
    const leaky_options o{threads, -1, nullptr};
    return Backward(dy, x, quant, out,
                    [&](const leaky_q8_params& q, size_t n, const void* g, const void* s, void* d) {
                      return leaky_q8_rrelu_eval_backward(&q, n, g, s, d, lower, upper, &o);
                    });
  });
  m.def("q8_elu_backward", [](const py::array& dy, const py::array& saved, double alpha,
                              double scale, double input_scale, bool saved_is_result,
                              const Quant& quant, std::optional<py::array> out, int threads) {
    const leaky_options o{threads, -1, nullptr};
    return Backward(dy, saved, quant, out,
                    [&](const leaky_q8_params& q, size_t n, const void* g, const void* s, void* d) {
                      return leaky_q8_elu_backward(&q, n, g, s, saved_is_result ? 1 : 0, d, alpha,
                                                   scale, input_scale, &o);
                    });
  });
  // PReLU: the channel axis of x (leaky.h's [outer, channels, inner] view);
  // returns (dx, dweight), dweight float32 of the weight's length.
  m.def("q8_prelu_backward",
        [](const py::array& dy_in, const py::array& x_in,
           const py::array_t<float, py::array::c_style | py::array::forcecast>& weight, int axis,
           const Quant& quant, int threads) {
          const leaky_q8_params q = ParamsOf(quant);
          const py::array dy = Bytes(dy_in, q, "dy"), x = Bytes(x_in, q, "x");
          CheckSameShape(dy, x, "x");
          const auto [outer, channels, inner] = leaky::numpy::AroundAxis(x, axis);
          leaky::numpy::CheckPerChannel(weight, channels, "weight");
          py::array dx = OutputLike(dy, std::nullopt);
          py::array_t<float> dweight(static_cast<py::ssize_t>(channels));
          const leaky_options o{threads, -1, nullptr};
          const void *g = dy.data(), *v = x.data();
          const float* w = weight.data();
          void* d = dx.mutable_data();
          float* dw = dweight.mutable_data();
          leaky_status status;
          {
            py::gil_scoped_release no_gil;
            status = leaky_q8_prelu_backward(&q, outer, channels, inner, g, v, w, d, dw, &o);
          }
          leaky::numpy::Check(status);
          return py::make_tuple(dx, dweight);
        });
  m.def("fp8_from_f32", [](const py::array_t<float, py::array::c_style | py::array::forcecast>& x,
                           int type, bool saturate) {
    py::array_t<uint8_t> y(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    leaky::numpy::Check(leaky_fp8_from_f32(static_cast<leaky_type8>(type),
                                           static_cast<size_t>(x.size()), x.data(),
                                           y.mutable_data(), saturate ? 1 : 0));
    return y;
  });
  m.def("fp8_to_f32", [](const py::array_t<uint8_t, py::array::c_style>& x, int type) {
    py::array_t<float> y(std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
    leaky::numpy::Check(leaky_fp8_to_f32(
        static_cast<leaky_type8>(type), static_cast<size_t>(x.size()), x.data(), y.mutable_data()));
    return y;
  });
}

// leaky._native: NumPy entry points over the C API, without PyTorch.
// float32, float64 and float16 arrays map to their dtypes; uint16 arrays are
// bfloat16 bit patterns (NumPy has no bfloat16). The GIL is released while
// the library runs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "leaky/leaky.h"
#include "numpy_common.h"

namespace py = pybind11;

namespace {

using leaky::numpy::Check;
using leaky::numpy::Contiguous;
using leaky::numpy::DtypeName;
using leaky::numpy::DtypeOf;
using leaky::numpy::SameShape;

// A new array like `like`, or the caller's `out` after checking it.
py::array Output(const py::array& like, leaky_dtype dtype, const std::optional<py::array>& out) {
  if (!out) return py::array(like.dtype(), std::vector<py::ssize_t>(like.shape(), like.shape() + like.ndim()));
  const py::array& o = *out;
  if (DtypeOf(o, "out") != dtype || o.dtype().kind() != like.dtype().kind()) {
    throw py::type_error("out has dtype " + DtypeName(o.dtype()) + " but the input has " +
                         DtypeName(like.dtype()));
  }
  leaky::numpy::CheckOut(o, like);
  return o;
}

py::array LeakyRelu(const py::array& x_in, double negative_slope, std::optional<py::array> out,
                    int num_threads) {
  const leaky_dtype dtype = DtypeOf(x_in, "x");
  const py::array x = Contiguous(x_in, "x");
  py::array y = Output(x, dtype, out);
  const leaky_options options{num_threads, -1, nullptr};
  const void* src = x.data();
  void* dst = y.mutable_data();
  const auto n = static_cast<size_t>(x.size());
  leaky_status status;
  {
    py::gil_scoped_release no_gil;
    status = leaky_relu_forward(dtype, n, src, dst, negative_slope, &options);
  }
  Check(status);
  return y;
}

py::array LeakyReluBackward(const py::array& dy_in, const py::array& saved_in,
                            double negative_slope, bool saved_is_result,
                            std::optional<py::array> out, int num_threads) {
  const leaky_dtype dtype = DtypeOf(dy_in, "dy");
  if (DtypeOf(saved_in, "saved") != dtype || dy_in.dtype().kind() != saved_in.dtype().kind()) {
    throw py::type_error("dy and saved have different dtypes");
  }
  if (!SameShape(dy_in, saved_in)) throw py::value_error("dy and saved have different shapes");
  const py::array dy = Contiguous(dy_in, "dy");
  const py::array saved = Contiguous(saved_in, "saved");
  py::array dx = Output(dy, dtype, out);
  const leaky_options options{num_threads, -1, nullptr};
  const void* a = dy.data();
  const void* b = saved.data();
  void* dst = dx.mutable_data();
  const auto n = static_cast<size_t>(dy.size());
  leaky_status status;
  {
    py::gil_scoped_release no_gil;
    status = leaky_relu_backward(dtype, n, a, b, saved_is_result ? 1 : 0, dst, negative_slope,
                                 &options);
  }
  Check(status);
  return dx;
}

}  // namespace

void AddEightBit(py::module_& m);  // eight_bit_module.cc
#ifdef LEAKY_WITH_TOOLKIT
void AddToolkit(py::module_& m);  // toolkit_module.cc
#endif
#ifdef LEAKY_WITH_OPENCL
void AddDevice(py::module_& m);  // device_module.cc
#endif

PYBIND11_MODULE(_native, m) {
  m.doc() = "leaky's NumPy entry points (see leaky.numpy)";
  AddEightBit(m);
#ifdef LEAKY_WITH_TOOLKIT
  AddToolkit(m);
#endif
#ifdef LEAKY_WITH_OPENCL
  AddDevice(m);
#endif
  m.def("leaky_relu", &LeakyRelu, py::arg("x"), py::arg("negative_slope") = 0.01,
        py::arg("out") = py::none(), py::arg("num_threads") = 0);
  m.def("leaky_relu_backward", &LeakyReluBackward, py::arg("dy"), py::arg("saved"),
        py::arg("negative_slope"), py::arg("saved_is_result") = false,
        py::arg("out") = py::none(), py::arg("num_threads") = 0);
  m.def("simd_target", [] { return std::string(leaky_simd_target()); });
  m.def("version", [] { return std::string(leaky_version()); });
  m.def("pool_threads", [] { return leaky_pool_threads(); },
        "threads of the library's own pool (this module's copy) started so far");
}

// leaky._native's device half: the OpenCL backend (leaky/opencl.h) on NumPy
// arrays, so leaky.testing.check_op can check the device kernel like any
// other callable. Devices are opened once per (index, fault) and kept.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

#include "leaky/opencl.h"
#include "numpy_common.h"

namespace py = pybind11;

namespace {

leaky_cl_device* DeviceFor(int index, int fault) {
  static std::map<std::pair<int, int>, leaky_cl_device*> open;  // kept for the process
  auto found = open.find({index, fault});
  if (found != open.end()) return found->second;
  leaky_cl_options options{index, fault};
  leaky_cl_device* device = nullptr;
  if (leaky_cl_open(&options, &device) != LEAKY_OK) throw std::runtime_error(leaky_last_error());
  open[{index, fault}] = device;
  return device;
}

py::array DeviceLeakyRelu(const py::array& x_in, double slope, uint32_t cores,
                          const std::string& split, uint32_t tile_elems, uint32_t buffers,
                          int device, int fault) {
  if (split != "even" && split != "balanced") throw py::value_error("split must be 'even' or 'balanced'");
  const leaky_dtype dtype = leaky::numpy::DtypeOf(x_in, "x");
  const py::array x = py::array::ensure(x_in, py::array::c_style);
  py::array y(x.dtype(), std::vector<py::ssize_t>(x.shape(), x.shape() + x.ndim()));
  std::memset(y.mutable_data(), 0, static_cast<size_t>(y.nbytes()));
  const leaky_cl_plan plan{cores, split == "even" ? 0u : 1u, tile_elems, buffers};
  leaky_cl_device* d = DeviceFor(device, fault);
  const leaky_status status = leaky_cl_leaky_relu_forward(d, dtype, static_cast<size_t>(x.size()),
                                                          x.data(), y.mutable_data(), slope, &plan,
                                                          nullptr);
  leaky::numpy::Check(status);
  return y;
}

}  // namespace

void AddDevice(py::module_& m) {
  m.def("device_leaky_relu", &DeviceLeakyRelu, py::arg("x"), py::arg("negative_slope"),
        py::arg("cores") = 8, py::arg("split") = "even", py::arg("tile_elems") = 4096,
        py::arg("buffers") = 2, py::arg("device") = -1, py::arg("fault") = 0,
        "LeakyReLU forward by the OpenCL device kernel (the output starts as zeros)");
}

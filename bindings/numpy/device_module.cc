// leaky._native's device half: the OpenCL backend (leaky/opencl.h) on NumPy
// arrays, so leaky.testing.check_op can check the device kernel like any
// other callable - the library's kernel, with a planted fault, or a kernel
// source of the caller's own. Devices are opened once per (index, fault,
// source, build options) and kept: opening builds the layout probe, and a
// device keeps its built programs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "leaky/opencl.h"
#include "numpy_common.h"
#include "golden_io.h"
#include "plan_options.h"
#include "user_message.h"

namespace py = pybind11;

namespace {

// What a device is opened with; an empty source or build_options: none.
struct Opened {
  int index = -1;
  int fault = 0;
  std::string source, build_options;
  bool operator<(const Opened& o) const {
    return std::tie(index, fault, source, build_options) <
           std::tie(o.index, o.fault, o.source, o.build_options);
  }
};

leaky_cl_device* DeviceFor(const Opened& key) {
  static std::map<Opened, leaky_cl_device*> open;  // kept for the process
  auto found = open.find(key);
  if (found != open.end()) return found->second;
  const leaky_cl_options options{key.index, key.fault,
                                 key.source.empty() ? nullptr : key.source.c_str(),
                                 key.build_options.empty() ? nullptr : key.build_options.c_str()};
  leaky_cl_device* device = nullptr;
  if (leaky_cl_open(&options, &device) != LEAKY_OK) throw std::runtime_error(leaky::toolkit::LastErrorForUser());
  open[key] = device;
  return device;
}

// The device's own plan request with the caller's cores, split, tile
// (0: sized from local memory) and buffers.
leaky_plan_request RequestFor(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                              uint32_t streams, uint32_t cores, const std::string& split,
                              uint32_t tile_elems, uint32_t buffers) {
  leaky_plan_request request;
  leaky::numpy::Check(leaky_cl_plan_request(device, dtype, n, streams, &request));
  request.split = leaky::toolkit::SplitCode(split);  // std::invalid_argument: a ValueError
  request.max_cores = cores;
  request.tile_length = tile_elems;
  request.buffer_count = buffers;
  return request;
}

// Zeros shaped and typed as `like`: what a faulty kernel never writes stays 0.
py::array ZerosLike(const py::array& like) {
  py::array out(like.dtype(), std::vector<py::ssize_t>(like.shape(), like.shape() + like.ndim()));
  std::memset(out.mutable_data(), 0, static_cast<size_t>(out.nbytes()));
  return out;
}

py::array DeviceLeakyRelu(const py::array& x_in, double slope, uint32_t cores,
                          const std::string& split, uint32_t tile_elems, uint32_t buffers,
                          int device, int fault, const std::string& source,
                          const std::string& build_options) {
  const leaky_dtype dtype = leaky::numpy::DtypeOf(x_in, "x");
  const py::array x = leaky::numpy::Contiguous(x_in, "x");
  py::array y = ZerosLike(x);
  leaky_cl_device* d = DeviceFor({device, fault, source, build_options});
  const size_t n = static_cast<size_t>(x.size());
  const leaky_plan_request request = RequestFor(d, dtype, n, 2, cores, split, tile_elems, buffers);
  leaky::numpy::Check(
      leaky_cl_leaky_relu_forward(d, dtype, n, x.data(), y.mutable_data(), slope, &request, nullptr));
  return y;
}

py::array DeviceLeakyReluBackward(const py::array& dy_in, const py::array& x_in, double slope,
                                  uint32_t cores, const std::string& split, uint32_t tile_elems,
                                  uint32_t buffers, int device, int fault,
                                  const std::string& source, const std::string& build_options) {
  const leaky_dtype dtype = leaky::numpy::DtypeOf(dy_in, "dy");
  if (leaky::numpy::DtypeOf(x_in, "x") != dtype) throw py::type_error("dy and x differ in dtype");
  const py::array dy = leaky::numpy::Contiguous(dy_in, "dy");
  const py::array x = leaky::numpy::Contiguous(x_in, "x");
  if (dy.size() != x.size()) throw py::value_error("dy and x differ in size");
  py::array dx = ZerosLike(dy);
  leaky_cl_device* d = DeviceFor({device, fault, source, build_options});
  const size_t n = static_cast<size_t>(dy.size());
  const leaky_plan_request request = RequestFor(d, dtype, n, 3, cores, split, tile_elems, buffers);
  leaky::numpy::Check(leaky_cl_leaky_relu_backward(d, dtype, n, dy.data(), x.data(),
                                                   dx.mutable_data(), slope, &request, nullptr));
  return dx;
}

// The target facts of the device's own plan request that check_op's plan
// must share (the granule alignment and the local memory a tile is sized
// from): {"align_bytes", "buffer_bytes"} for `dtype` (f32, f64, f16, bf16).
py::dict DevicePlanFacts(const std::string& dtype, int device, int fault,
                         const std::string& source, const std::string& build_options) {
  leaky_cl_device* d = DeviceFor({device, fault, source, build_options});
  leaky_plan_request request;
  leaky::numpy::Check(leaky_cl_plan_request(d, leaky::toolkit::ParseDtype(dtype), 1, 2, &request));
  py::dict facts;
  facts["align_bytes"] = request.align_bytes;
  facts["buffer_bytes"] = request.buffer_bytes;
  return facts;
}

}  // namespace

void AddDevice(py::module_& m) {
  m.def("device_plan_facts", &DevicePlanFacts, py::arg("dtype"), py::arg("device") = -1,
        py::arg("fault") = 0, py::arg("source") = "", py::arg("build_options") = "",
        "The device plan request's alignment and local memory for dtype");
  m.def("device_leaky_relu", &DeviceLeakyRelu, py::arg("x"), py::arg("negative_slope"),
        py::arg("cores") = 8, py::arg("split") = "even", py::arg("tile_elems") = 4096,
        py::arg("buffers") = 2, py::arg("device") = -1, py::arg("fault") = 0,
        py::arg("source") = "", py::arg("build_options") = "",
        "LeakyReLU forward by the OpenCL device kernel (the output starts as zeros); source: "
        "a kernel of the caller's own (empty: the library's)");
  m.def("device_leaky_relu_backward", &DeviceLeakyReluBackward, py::arg("dy"), py::arg("x"),
        py::arg("negative_slope"), py::arg("cores") = 8, py::arg("split") = "even",
        py::arg("tile_elems") = 4096, py::arg("buffers") = 2, py::arg("device") = -1,
        py::arg("fault") = 0, py::arg("source") = "", py::arg("build_options") = "",
        "LeakyReLU backward (dx) by the OpenCL device kernel (the output starts as zeros)");
}

// leaky._native's device half: the OpenCL backend (leaky/opencl.h) on NumPy
// arrays, so leaky.testing.check_op can check the device kernel like any
// other callable - the library's kernel, with a planted fault, or a kernel
// source of the caller's own. Devices are opened once per (index, fault,
// source, build options) and kept: opening builds the layout probe, and a
// device keeps its built programs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "../bias_act_names.h"
#include "golden_io.h"
#include "leaky/opencl.hpp"
#include "numpy_common.h"
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

// One array argument of a family call, contiguous and of the call's dtype.
py::array Operand(const py::handle& a, leaky_dtype dtype, const char* what) {
  const py::array array = py::array::ensure(a);
  if (!array) throw py::type_error(std::string(what) + " must be an array");
  if (leaky::numpy::DtypeOf(array, what) != dtype) {
    throw py::type_error(std::string(what) + " differs in dtype from the first operand");
  }
  return leaky::numpy::Contiguous(array, what);
}

double Scalar(const py::dict& s, const char* name, double otherwise) {
  return s.contains(name) && !s[name].is_none() ? s[name].cast<double>() : otherwise;
}

// An op of leaky/family.h besides LeakyReLU on the device: `inputs` in
// family.h's order (x; dy, x; ... weight or bias; the dropout mask),
// `scalars` by their NumPy names (alpha, scale, input_scale; lower, upper,
// training, seed, offset; act, alpha, gain, clamp, dropout_p). Returns the
// outputs in family.h's order (RReLU's noise in training only). The
// per-channel ops take x as [outer, channels, inner...].
py::tuple DeviceFamily(const std::string& op, const std::string& direction, const py::list& inputs,
                       const py::dict& scalars, uint32_t cores, const std::string& split,
                       uint32_t tile_elems, uint32_t buffers, int device) {
  if (direction != "forward" && direction != "backward") {
    throw py::value_error("direction must be forward or backward, not '" + direction + "'");
  }
  const bool backward = direction == "backward";
  if (inputs.empty()) throw py::value_error("no inputs");
  const py::array first = py::array::ensure(inputs[0]);
  if (!first) throw py::type_error("the first input must be an array");
  const leaky_dtype dtype = leaky::numpy::DtypeOf(first, backward ? "dy" : "x");
  std::vector<py::array> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const bool mask = op == "bias_act_dropout" && backward && i == 3;
    in.push_back(mask ? leaky::numpy::Contiguous(py::array_t<uint8_t>::ensure(inputs[i]), "mask")
                      : Operand(inputs[i], dtype, "an input"));
  }
  const size_t n = static_cast<size_t>(in[0].size());
  const size_t need = op == "relu" || op == "elu" || op == "rrelu" ? (backward ? 2 : 1)
                      : op == "prelu" || op == "bias_act" ? (backward ? 3 : 2)
                      : op == "bias_act_dropout" ? (backward ? 4 : 2) : 0;
  if (need == 0) throw py::value_error("op '" + op + "' is not one the device runs");
  if (in.size() != need) {
    throw py::value_error(op + " " + direction + " takes " + std::to_string(need) + " arrays");
  }
  if (backward && in[1].size() != in[0].size()) throw py::value_error("dy and x differ in size");
  leaky_cl_device* d = DeviceFor({device, 0, "", ""});
  const leaky_plan_request request =
      RequestFor(d, dtype, n, backward ? 3 : 2, cores, split, tile_elems, buffers);
  const py::array& x = backward ? in[1] : in[0];
  py::array out = ZerosLike(x);
  const void* src0 = in[0].data();
  // The channel view: outer = shape[0], channels = shape[1], inner the rest.
  size_t outer = 1, channels = 1, inner = 1;
  if (op == "prelu" || op == "bias_act" || op == "bias_act_dropout") {
    if (x.ndim() < 2) throw py::value_error("x must be [outer, channels, ...]");
    outer = static_cast<size_t>(x.shape(0));
    channels = static_cast<size_t>(x.shape(1));
    inner = n / std::max<size_t>(1, outer * channels);
  }
  const bool channel_op = op == "prelu" || op == "bias_act" || op == "bias_act_dropout";
  const py::array* side = channel_op ? &in[backward ? 2 : 1] : nullptr;
  if (side && side->size() != 0 && static_cast<size_t>(side->size()) != channels) {
    throw py::value_error("the per-channel operand has " + std::to_string(side->size()) +
                          " values for " + std::to_string(channels) + " channels");
  }
  leaky::cl::FamilyArgs a;
  a.dtype = dtype;
  a.outer = outer;
  a.channels = channels;
  a.inner = channel_op ? inner : n;
  a.x = backward ? in[1].data() : src0;
  a.dy = backward ? src0 : nullptr;
  a.side = side && side->size() ? side->data() : nullptr;
  a.out = out.mutable_data();
  a.alpha = Scalar(scalars, "alpha", 1);
  a.scale = Scalar(scalars, "scale", 1);
  a.input_scale = Scalar(scalars, "input_scale", 1);
  a.rrelu = {Scalar(scalars, "lower", 1.0 / 8), Scalar(scalars, "upper", 1.0 / 3),
             scalars.contains("training") && scalars["training"].cast<bool>(),
             scalars.contains("seed") ? scalars["seed"].cast<uint64_t>() : 0,
             scalars.contains("offset") ? scalars["offset"].cast<uint64_t>() : 0};
  if (op == "bias_act" || op == "bias_act_dropout") {
    const std::string act = scalars.contains("act") ? scalars["act"].cast<std::string>() : "lrelu";
    try {
      const std::optional<double> clamp =
          scalars.contains("clamp") && !scalars["clamp"].is_none()
              ? std::optional<double>(scalars["clamp"].cast<double>())
              : std::nullopt;
      a.bias_act = leaky::bindings::BiasActParams(
          act, Scalar(scalars, "alpha", leaky::bindings::DefaultAlpha(act)),
          Scalar(scalars, "gain", leaky::bindings::DefaultGain(act)), clamp);
    } catch (const std::invalid_argument& e) {
      throw py::value_error(e.what());
    }
  }
  a.dropout = {Scalar(scalars, "dropout_p", 0.5), a.rrelu.seed, a.rrelu.offset};
  // The second output: the per-channel sums, RReLU's noise or the mask.
  py::array second;
  bool has_second = true;
  if (backward && channel_op) {
    second = py::array(x.dtype(), std::vector<py::ssize_t>{static_cast<py::ssize_t>(channels)});
  } else if (op == "rrelu" && !backward) {
    second = ZerosLike(x);
  } else if (op == "bias_act_dropout" && !backward) {
    py::array_t<uint8_t> mask(static_cast<py::ssize_t>((n + 7) / 8));
    std::memset(mask.mutable_data(), 0, static_cast<size_t>(mask.nbytes()));
    second = mask;
  } else {
    has_second = false;
  }
  if (has_second) a.second = second.mutable_data();
  if (op == "bias_act_dropout" && backward) {
    if (static_cast<size_t>(in[3].size()) != (n + 7) / 8) {
      throw py::value_error("the mask must have (n + 7) / 8 bytes");
    }
    a.mask = static_cast<const uint8_t*>(in[3].data());
  }
  leaky::numpy::Check(leaky::cl::RunFamily(d, op, backward, a, &request, nullptr));
  // RReLU's noise in training only.
  if (!has_second || (op == "rrelu" && !a.rrelu.training)) return py::make_tuple(out);
  return py::make_tuple(out, second);
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
  m.def("device_family", &DeviceFamily, py::arg("op"), py::arg("direction"), py::arg("inputs"),
        py::arg("scalars"), py::arg("cores") = 8, py::arg("split") = "even",
        py::arg("tile_elems") = 4096, py::arg("buffers") = 2, py::arg("device") = -1,
        "An op of leaky/family.h besides LeakyReLU by the OpenCL device (outputs start as zeros)");
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

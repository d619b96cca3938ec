// leaky._native's toolkit half, for leaky.testing: the golden data of
// `leaky golden` and the diagnosis of `leaky check`, in process (one
// implementation: toolkit/). Arrays cross as bytes of stored bit
// patterns; the plan and the verdict as JSON text.
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "diagnose.h"
#include "golden_data.h"
#include "layout.h"
#include "plan_options.h"

namespace py = pybind11;

namespace leaky::tools {
namespace {

GoldenDescription Describe(const std::string& dtype, uint64_t elements, double slope,
                           const std::string& op) {
  if (op != "forward" && op != "backward") throw py::value_error("op must be 'forward' or 'backward', not '" + op + "'");
  if (elements == 0 || elements > kMaxGoldenElements) {
    throw py::value_error("elems must be in [1, 2^32], not " + std::to_string(elements));
  }
  if (!std::isfinite(slope)) throw py::value_error("slope must be finite");
  GoldenDescription d;
  try {
    d.dtype = ParseDtype(dtype);
  } catch (const GoldenError& e) {
    throw py::value_error(std::string("dtype: ") + e.what());
  }
  d.op = op == "backward" ? "leaky_relu_backward" : "leaky_relu_forward";
  d.elements = elements;
  d.shape = {elements};
  d.negative_slope = slope;
  return d;
}

py::bytes Bytes(leaky_dtype dtype, const std::vector<uint64_t>& bits) {
  const std::vector<uint8_t> b = ToBytes(dtype, bits);
  return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

py::tuple Golden(const std::string& dtype, uint64_t elements, double slope, const std::string& dist,
                 uint64_t seed, const std::string& op) {
  GoldenDescription d = Describe(dtype, elements, slope, op);
  d.distribution = dist;
  d.seed = seed;
  GoldenArrays a;
  try {
    a = MakeGolden(d);
  } catch (const std::invalid_argument& e) {  // names the distribution and its form
    throw py::value_error(e.what());
  }
  return py::make_tuple(Bytes(d.dtype, a.x), Bytes(d.dtype, a.dy), Bytes(d.dtype, a.golden));
}

// A plan from Python's keyword options, each defaulting as on the CLI.
PlanOptions PlanFromJson(const nlohmann::json& j) {
  PlanOptions o;
  o.preset = j.value("preset", o.preset);
  o.cores = j.value("cores", o.cores);
  o.buffer_bytes = j.value("buffer_bytes", o.buffer_bytes);
  o.align_bytes = j.value("align_bytes", o.align_bytes);
  o.buffers = j.value("buffers", o.buffers);
  o.split = j.value("split", o.split);
  o.tile_elems = j.value("tile_elems", o.tile_elems);
  o.address_offset = j.value("address_offset", o.address_offset);
  return o;
}

// The plan `plan_json` describes for `d`, or ValueError in one line.
Layout PlanLayout(const GoldenDescription& d, const std::string& op, const std::string& plan_json) {
  PlanOptions plan;
  try {
    plan = PlanFromJson(nlohmann::json::parse(plan_json));
  } catch (const nlohmann::json::exception&) {  // leaky.testing writes it: not a user's error
    throw py::value_error("plan options must be a JSON object of strings and whole numbers");
  }
  plan.op = op;
  try {
    return MakeLayout(plan, d.dtype, d.elements);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("plan: ") + e.what());
  }
}

// check_op checks its plan before it calls the kernel.
void CheckPlan(const std::string& dtype, uint64_t elements, const std::string& op,
               const std::string& plan_json) {
  PlanLayout(Describe(dtype, elements, 0.0, op), op, plan_json);
}

std::string Check(const std::string& dtype, double slope, const std::string& op,
                  const py::bytes& x, const py::bytes& dy, const py::bytes& golden,
                  const py::bytes& output, uint64_t max_ulp, bool strict_zero_sign,
                  bool allow_rounding, const std::string& plan_json) {
  const std::string golden_bytes = golden;
  const size_t size = DtypeBytes(Describe(dtype, 1, slope, op).dtype);
  const GoldenDescription d = Describe(dtype, golden_bytes.size() / size, slope, op);
  auto array = [&](const char* what, const py::bytes& b) {
    const std::string s = b;
    return DecodeArray(what, std::vector<uint8_t>(s.begin(), s.end()), d.dtype, d.elements);
  };
  CheckInput in;
  in.dtype = d.dtype;
  in.backward = op == "backward";
  in.negative_slope = slope;
  in.max_ulp = max_ulp;
  in.strict_zero_sign = strict_zero_sign;
  in.allow_rounding = allow_rounding;
  try {
    in.input = array("x", x);
    if (in.backward) in.dy = array("dy", dy);
    in.golden = array("golden", golden);
    in.output = array("the output", output);
  } catch (const GoldenError& e) {
    throw py::value_error(e.what());
  }
  if (!plan_json.empty()) in.plan = PlanLayout(d, op, plan_json);
  nlohmann::json verdict;
  {
    py::gil_scoped_release release;
    verdict = Diagnose(in).ToJson();
  }
  verdict["tolerance_ulp"] = max_ulp;
  return verdict.dump();
}

}  // namespace
}  // namespace leaky::tools

void AddToolkit(py::module_& m) {
  m.def("toolkit_golden", &leaky::tools::Golden, py::arg("dtype"), py::arg("elements"),
        py::arg("slope"), py::arg("dist"), py::arg("seed"), py::arg("op"),
        "(x, dy, golden) as bytes of stored bit patterns, as `leaky golden` makes them");
  m.def("toolkit_check", &leaky::tools::Check, py::arg("dtype"), py::arg("slope"), py::arg("op"),
        py::arg("x"), py::arg("dy"), py::arg("golden"), py::arg("output"), py::arg("max_ulp"),
        py::arg("strict_zero_sign"), py::arg("allow_rounding"), py::arg("plan_json"),
        "`leaky check`'s verdict as JSON text");
  m.def("toolkit_check_plan", &leaky::tools::CheckPlan, py::arg("dtype"), py::arg("elements"),
        py::arg("op"), py::arg("plan_json"),
        "Raises ValueError unless the plan options make a plan for the problem");
}

// leaky._native's toolkit half, for leaky.testing: the golden data of
// `leaky golden` and the diagnosis of `leaky check`, in process (one
// implementation: toolkit/). Arrays cross as bytes of stored bit
// patterns; the plan and the verdict as JSON text.
#include <pybind11/pybind11.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>

#include "diagnose.h"
#include "eight_bit_data.h"
#include "family_check.h"
#include "family_golden.h"
#include "golden_data.h"
#include "layout.h"
#include "plan_options.h"

namespace py = pybind11;

namespace leaky::toolkit {
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
    return d.eight_bit ? MakeByteLayout(plan, d.elements) : MakeLayout(plan, d.dtype, d.elements);
  } catch (const std::invalid_argument& e) {
    throw py::value_error(std::string("plan: ") + e.what());
  }
}

// check_op checks its plan before it calls the kernel.
void CheckPlan(const std::string& dtype, uint64_t elements, const std::string& op,
               const std::string& plan_json) {
  PlanLayout(Describe(dtype, elements, 0.0, op), op, plan_json);
}

// The arrays decoded by `array` (what, its bytes, whether a result), the
// plan, and the diagnosis as JSON text: the float and the 8-bit check's.
template <class Decode>
std::string Verdict(CheckInput in, const GoldenDescription& d, const std::string& op,
                    const std::string& plan_json, uint64_t tolerance, const Decode& array,
                    const py::bytes& x, const py::bytes& dy, const py::bytes& golden,
                    const py::bytes& output) {
  in.backward = op == "backward";
  in.negative_slope = d.negative_slope;
  try {
    in.input = array("x", x, false);
    if (in.backward) in.dy = array("dy", dy, false);
    in.golden = array("golden", golden, true);
    in.output = array("the output", output, true);
  } catch (const GoldenError& e) {
    throw py::value_error(e.what());
  }
  if (!plan_json.empty()) in.plan = PlanLayout(d, op, plan_json);
  nlohmann::json verdict;
  {
    py::gil_scoped_release release;
    verdict = Diagnose(in).ToJson();
  }
  verdict["tolerance_ulp"] = tolerance;
  return verdict.dump();
}

std::string Check(const std::string& dtype, double slope, const std::string& op,
                  const py::bytes& x, const py::bytes& dy, const py::bytes& golden,
                  const py::bytes& output, uint64_t max_ulp, bool strict_zero_sign,
                  bool allow_rounding, const std::string& plan_json, bool leaky_relu_values) {
  const std::string golden_bytes = golden;
  const size_t size = DtypeBytes(Describe(dtype, 1, slope, op).dtype);
  const GoldenDescription d = Describe(dtype, golden_bytes.size() / size, slope, op);
  auto array = [&](const char* what, const py::bytes& b, bool) {
    const std::string s = b;
    return DecodeArray(what, std::vector<uint8_t>(s.begin(), s.end()), d.dtype, d.elements);
  };
  CheckInput in;
  in.dtype = d.dtype;
  in.max_ulp = max_ulp;
  in.strict_zero_sign = strict_zero_sign;
  in.allow_rounding = allow_rounding;
  in.leaky_relu_values = leaky_relu_values;
  return Verdict(in, d, op, plan_json, max_ulp, array, x, dy, golden, output);
}

// ---------------------------------------------------------------- the family

// An op of leaky/family.h besides LeakyReLU, described as leaky.testing's
// golden_op and check_op take it (params: the scalars as a JSON object).
FamilyProblem FamilyOf(const std::string& op, const std::string& direction,
                       const std::string& dtype, uint64_t elements, uint64_t channels,
                       const std::string& dist, uint64_t seed, const std::string& params_json,
                       nlohmann::ordered_json* resolved) {
  FamilyDescription d;
  d.op = op;
  d.backward = direction == "backward";
  d.elements = elements;
  d.channels = channels;
  d.distribution = dist;
  d.seed = seed;
  try {
    d.dtype = ParseDtype(dtype);
    d.scalars = nlohmann::json::parse(params_json);
    py::gil_scoped_release release;
    return MakeFamilyProblem(d, resolved);
  } catch (const nlohmann::json::exception&) {  // leaky.testing writes it: not a user's error
    throw py::value_error("params must be a JSON object");
  } catch (const GoldenError& e) {
    throw py::value_error(std::string("dtype: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

py::list Named(const Operands& operands) {
  py::list out;
  for (const Operand& o : operands) {
    const std::vector<uint8_t> b = OperandBytes(o);
    out.append(
        py::make_tuple(o.name, py::bytes(reinterpret_cast<const char*>(b.data()), b.size())));
  }
  return out;
}

// (inputs, outputs, scalars JSON, (outer, channels, inner)): the operands
// by name as bytes of stored patterns.
py::tuple FamilyGolden(const std::string& op, const std::string& direction,
                       const std::string& dtype, uint64_t elements, uint64_t channels,
                       const std::string& dist, uint64_t seed, const std::string& params_json) {
  nlohmann::ordered_json resolved;
  const FamilyProblem p =
      FamilyOf(op, direction, dtype, elements, channels, dist, seed, params_json, &resolved);
  return py::make_tuple(Named(p.inputs), Named(p.golden), resolved.dump(),
                        py::make_tuple(p.outer, p.channels, p.inner));
}

std::string FamilyDefaultsJson(const std::string& op, const std::string& direction) {
  try {
    return FamilyDefaults(op, direction == "backward").dump();
  } catch (const std::invalid_argument& e) {
    throw py::value_error(e.what());
  }
}

// The verdict as JSON text; results: (dtype name, bytes) per output, in
// the row's order (another of the toolkit's dtypes is named in the
// mismatch; a dtype it has no name for is refused).
std::string FamilyCheck(const std::string& op, const std::string& direction,
                        const std::string& dtype, uint64_t elements, uint64_t channels,
                        const std::string& dist, uint64_t seed, const std::string& params_json,
                        const py::list& results, uint64_t max_ulp, bool strict_zero_sign,
                        const std::string& plan_json) {
  const FamilyProblem p =
      FamilyOf(op, direction, dtype, elements, channels, dist, seed, params_json, nullptr);
  Operands got;
  for (size_t k = 0; k < results.size() && k < p.golden.size(); ++k) {
    const py::tuple t = results[k].cast<py::tuple>();
    const std::string type = t[0].cast<std::string>(), bytes = t[1].cast<std::string>();
    const Operand& want = p.golden[k];
    if (want.mask) {
      got.push_back(OperandFromBytes(want.name, want.dtype, true,
                                     reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
      if (type != "u8") got.back().bits.clear();  // another type: no bytes to compare
      continue;
    }
    // A dtype the toolkit names (f16 for f32, say) is a finding of the
    // check; one it does not (int32) cannot be read as values at all.
    leaky_dtype d = want.dtype;
    try {
      d = ParseDtype(type);
    } catch (const GoldenError&) {
      throw py::value_error(want.name + " must have dtype " + DtypeName(want.dtype) + ", not " +
                            type);
    }
    got.push_back(OperandFromBytes(want.name, d, false,
                                   reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  }
  std::optional<Layout> plan;
  if (!plan_json.empty())
    plan = PlanLayout(Describe(dtype, p.elements(), 0.0, direction), direction, plan_json);
  nlohmann::json verdict;
  try {
    py::gil_scoped_release release;
    verdict = CheckFamily(p, got, max_ulp, strict_zero_sign, plan).ToJson();
  } catch (const GoldenError& e) {
    throw py::value_error(e.what());
  }
  verdict["tolerance_ulp"] = std::max(max_ulp, FamilyMaxUlp(p));
  return verdict.dump();
}

// ---------------------------------------------------------------- 8-bit

// The parameters leaky.testing passes (already typed there), checked as the
// CLI checks them, named as Python spells them.
leaky_q8_params Q8Params(const std::string& type, double input_scale, int64_t input_zero_point,
                         double output_scale, int64_t output_zero_point, int64_t output_min,
                         int64_t output_max, bool saturate) {
  const std::optional<leaky_type8> t = ParseType8(type);
  if (!t) throw py::value_error("dtype must be one of qu8, qs8, fp8_e4m3, fp8_e5m2, not '" + type + "'");
  leaky_q8_params q = leaky_q8_params_init(*t);
  q.saturate = saturate ? 1 : 0;
  if (IsQuantized(*t)) {
    auto narrow = [](int64_t v) {  // past int32 is past every range: kept past it
      return static_cast<int32_t>(std::clamp<int64_t>(v, INT32_MIN, INT32_MAX));
    };
    q.input = {input_scale, narrow(input_zero_point)};
    q.output = {output_scale, narrow(output_zero_point)};
    q.output_min = narrow(output_min);
    q.output_max = narrow(output_max);
  }
  try {
    CheckQ8Params(q, Q8Spelling::kKeywords);
  } catch (const GoldenError& e) {
    throw py::value_error(e.what());
  }
  return q;
}

GoldenDescription DescribeQ8(const leaky_q8_params& q, uint64_t elements, double slope,
                             const std::string& op) {
  GoldenDescription d = Describe("f32", elements, slope, op);  // the shared checks
  if (IsQuantized(q.type) && op == "backward") {
    throw py::value_error(std::string(Type8Name(q.type)) + " data has no backward: op='forward'");
  }
  d.eight_bit = q;
  return d;
}

py::bytes ByteString(const std::vector<uint64_t>& bits) {
  const std::vector<uint8_t> b = ToBytes(size_t{1}, bits);
  return py::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

py::tuple GoldenQ8(const std::string& type, uint64_t elements, double slope, uint64_t seed,
                   const std::string& op, double input_scale, int64_t input_zero_point,
                   double output_scale, int64_t output_zero_point, int64_t output_min,
                   int64_t output_max, bool saturate) {
  GoldenDescription d = DescribeQ8(Q8Params(type, input_scale, input_zero_point, output_scale,
                                            output_zero_point, output_min, output_max, saturate),
                                   elements, slope, op);
  d.seed = seed;
  GoldenArrays a;
  try {
    a = MakeGolden(d);
  } catch (const GoldenError& e) {
    throw py::value_error(e.what());
  }
  return py::make_tuple(ByteString(a.x), ByteString(a.dy), ByteString(a.golden));
}

// The defaults of `leaky golden --dtype TYPE`, for leaky.testing's keywords.
py::dict DefaultsQ8(const std::string& type) {
  const std::optional<leaky_type8> t = ParseType8(type);
  if (!t) throw py::value_error("dtype must be one of qu8, qs8, fp8_e4m3, fp8_e5m2, not '" + type + "'");
  const leaky_q8_params q = DefaultQ8Params(*t);
  py::dict d;
  d["input_scale"] = q.input.scale;
  d["input_zero_point"] = q.input.zero_point;
  d["output_scale"] = q.output.scale;
  d["output_zero_point"] = q.output.zero_point;
  d["output_min"] = q.output_min;
  d["output_max"] = q.output_max;
  d["saturate"] = q.saturate != 0;
  return d;
}

void CheckPlanQ8(uint64_t elements, const std::string& op, const std::string& plan_json) {
  GoldenDescription d = Describe("f32", elements, 0.0, op);
  d.eight_bit = leaky_q8_params_init(LEAKY_QU8);
  PlanLayout(d, op, plan_json);
}

std::string CheckQ8(const std::string& type, double slope, const std::string& op,
                    double input_scale, int64_t input_zero_point, double output_scale,
                    int64_t output_zero_point, int64_t output_min, int64_t output_max,
                    bool saturate, const py::bytes& x, const py::bytes& dy,
                    const py::bytes& golden, const py::bytes& output, const std::string& plan_json) {
  const std::string golden_bytes = golden;
  const GoldenDescription d =
      DescribeQ8(Q8Params(type, input_scale, input_zero_point, output_scale, output_zero_point,
                          output_min, output_max, saturate),
                 golden_bytes.size(), slope, op);
  auto array = [&](const char* what, const py::bytes& b, bool result) {
    const std::string s = b;
    return DecodeBytes(what, std::vector<uint8_t>(s.begin(), s.end()), *d.eight_bit, result, d.elements);
  };
  CheckInput in;
  in.eight_bit = d.eight_bit;
  return Verdict(in, d, op, plan_json, 0, array, x, dy, golden, output);
}

}  // namespace
}  // namespace leaky::toolkit

void AddToolkit(py::module_& m) {
  // The diagnosis's finding kinds, from its one list (finding_kinds.inc).
  py::tuple kinds(std::size(leaky::toolkit::kFindingKinds));
  for (size_t k = 0; k < std::size(leaky::toolkit::kFindingKinds); ++k) {
    kinds[k] = py::str(leaky::toolkit::kFindingKinds[k]);
  }
  m.attr("toolkit_finding_kinds") = kinds;
  m.def("toolkit_golden", &leaky::toolkit::Golden, py::arg("dtype"), py::arg("elements"),
        py::arg("slope"), py::arg("dist"), py::arg("seed"), py::arg("op"),
        "(x, dy, golden) as bytes of stored bit patterns, as `leaky golden` makes them");
  m.def("toolkit_check", &leaky::toolkit::Check, py::arg("dtype"), py::arg("slope"), py::arg("op"),
        py::arg("x"), py::arg("dy"), py::arg("golden"), py::arg("output"), py::arg("max_ulp"),
        py::arg("strict_zero_sign"), py::arg("allow_rounding"), py::arg("plan_json"),
        py::arg("leaky_relu_values") = true, "`leaky check`'s verdict as JSON text");
  m.def("toolkit_family_golden", &leaky::toolkit::FamilyGolden, py::arg("op"), py::arg("direction"),
        py::arg("dtype"), py::arg("elements"), py::arg("channels"), py::arg("dist"),
        py::arg("seed"), py::arg("params_json"),
        "(inputs, outputs, scalars, view) of a family op, as `leaky golden --op` makes them");
  m.def("toolkit_family_defaults", &leaky::toolkit::FamilyDefaultsJson, py::arg("op"),
        py::arg("direction"), "a family op's scalars and their defaults, as JSON text");
  m.def("toolkit_family_check", &leaky::toolkit::FamilyCheck, py::arg("op"), py::arg("direction"),
        py::arg("dtype"), py::arg("elements"), py::arg("channels"), py::arg("dist"),
        py::arg("seed"), py::arg("params_json"), py::arg("results"), py::arg("max_ulp"),
        py::arg("strict_zero_sign"), py::arg("plan_json"),
        "`leaky check --op`'s verdict for a family op, as JSON text");
  m.def("toolkit_check_plan", &leaky::toolkit::CheckPlan, py::arg("dtype"), py::arg("elements"),
        py::arg("op"), py::arg("plan_json"),
        "Raises ValueError unless the plan options make a plan for the problem");
  m.def("toolkit_golden_q8", &leaky::toolkit::GoldenQ8, py::arg("dtype"), py::arg("elements"),
        py::arg("slope"), py::arg("seed"), py::arg("op"), py::arg("input_scale"),
        py::arg("input_zero_point"), py::arg("output_scale"), py::arg("output_zero_point"),
        py::arg("output_min"), py::arg("output_max"), py::arg("saturate"),
        "8-bit (x, dy, golden) as bytes, as `leaky golden --dtype qu8|qs8|fp8_*` makes them");
  m.def("toolkit_defaults_q8", &leaky::toolkit::DefaultsQ8, py::arg("dtype"),
        "The quantization `leaky golden --dtype TYPE` takes by default");
  m.def("toolkit_check_plan_q8", &leaky::toolkit::CheckPlanQ8, py::arg("elements"), py::arg("op"),
        py::arg("plan_json"), "Raises ValueError unless the plan options plan these bytes");
  m.def("toolkit_check_q8", &leaky::toolkit::CheckQ8, py::arg("dtype"), py::arg("slope"),
        py::arg("op"), py::arg("input_scale"), py::arg("input_zero_point"),
        py::arg("output_scale"), py::arg("output_zero_point"), py::arg("output_min"),
        py::arg("output_max"), py::arg("saturate"), py::arg("x"), py::arg("dy"),
        py::arg("golden"), py::arg("output"), py::arg("plan_json"),
        "`leaky check`'s verdict on 8-bit data as JSON text");
}

// The family's golden problems: leaky/family.h's rows, the scalars'
// defaults and ranges, the inputs drawn as LeakyReLU's golden draws them,
// and the library's outputs.
#include "family_golden.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "golden_data.h"
#include "leaky/family.h"
#include "leaky/reference.hpp"

namespace leaky::toolkit {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

namespace {

// "dy, x, weight[channels]?" -> {"dy", "x", "weight"}.
std::vector<std::string> Names(const char* list) {
  std::vector<std::string> names;
  std::string s(list);
  size_t at = 0;
  while (at < s.size()) {
    size_t comma = s.find(',', at);
    if (comma == std::string::npos) comma = s.size();
    std::string part = s.substr(at, comma - at);
    const size_t first = part.find_first_not_of(' ');
    part = first == std::string::npos ? "" : part.substr(first);
    part = part.substr(0, part.find_first_of("[? "));
    if (!part.empty()) names.push_back(part);
    at = comma + 1;
  }
  return names;
}

std::string Direction(bool backward) { return backward ? "backward" : "forward"; }

}  // namespace

const std::vector<FamilyRow>& FamilyRows() {
  static const std::vector<FamilyRow> rows = [] {
    std::vector<FamilyRow> r;
#define LEAKY_ROW(op, direction, c_name, cpp_name, inputs, outputs, scalars, exactness, random) \
  r.push_back(                                                                                  \
      {#op, std::string(#direction) == "backward", random != 0, Names(inputs), Names(outputs)});
    LEAKY_FAMILY(LEAKY_ROW)
#undef LEAKY_ROW
    return r;
  }();
  return rows;
}

const FamilyRow& FindFamilyRow(const std::string& op, bool backward) {
  std::string ops;
  for (const FamilyRow& row : FamilyRows()) {
    if (row.op == op && row.backward == backward) return row;
    if (!row.backward) ops += (ops.empty() ? "" : ", ") + row.op;
  }
  throw std::invalid_argument("op must be one of " + ops + ", not '" + op + "'");
}

bool IsChannelOp(const std::string& op) {
  return op == "prelu" || op == "bias_act" || op == "bias_act_dropout";
}

ordered_json FamilyDefaults(const std::string& op, bool backward) {
  FindFamilyRow(op, backward);
  const FamilyScalars d;
  ordered_json j = ordered_json::object();
  if (op == "leaky_relu") {
    j["negative_slope"] = 0.2;
  } else if (op == "elu") {
    j["alpha"] = d.alpha;
    j["scale"] = d.scale;
    j["input_scale"] = d.input_scale;
  } else if (op == "rrelu") {
    j["lower"] = d.lower;
    j["upper"] = d.upper;
    j["training"] = d.training;
    j["seed"] = d.seed;
    j["offset"] = d.offset;
  } else if (op == "bias_act" || op == "bias_act_dropout") {
    j["act"] = "lrelu";
    j["alpha"] = d.act_alpha;
    j["gain"] = d.gain;
    j["clamp"] = nullptr;
    if (op == "bias_act_dropout") {
      j["dropout_p"] = d.dropout_p;
      if (!backward) {
        j["seed"] = d.seed;
        j["offset"] = d.offset;
      }
    }
  }
  return j;
}

FamilyScalars ParseFamilyScalars(const std::string& op, bool backward, const json& given,
                                 ordered_json* resolved) {
  ordered_json all = FamilyDefaults(op, backward);
  std::string takes;
  for (auto it = all.begin(); it != all.end(); ++it)
    takes += (takes.empty() ? "" : ", ") + it.key();
  if (!given.is_null() && !given.is_object())
    throw std::invalid_argument("the scalars must be name=value pairs");
  for (auto it = given.begin(); !given.is_null() && it != given.end(); ++it) {
    if (!all.contains(it.key())) {
      throw std::invalid_argument(op + " " + Direction(backward) + " takes " +
                                  (takes.empty() ? "no scalars" : takes) + ", not " + it.key());
    }
    all[it.key()] = it.value();
  }
  FamilyScalars s;
  auto number = [&](const char* name, bool finite = true) {
    const ordered_json& v = all[name];
    if (!v.is_number() || (finite && !std::isfinite(v.get<double>()))) {
      throw std::invalid_argument(std::string(name) + " must be a finite number, not " + v.dump());
    }
    return v.get<double>();
  };
  auto whole = [&](const char* name) {
    const ordered_json& v = all[name];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0)) {
      throw std::invalid_argument(std::string(name) + " must be a whole number in [0, 2^64), not " +
                                  v.dump());
    }
    return v.get<uint64_t>();
  };
  auto flag = [&](const char* name) {
    const ordered_json& v = all[name];
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
      return v.get<int64_t>() == 1;
    throw std::invalid_argument(std::string(name) + " must be true or false, not " + v.dump());
  };
  if (op == "elu") {
    s.alpha = number("alpha");
    s.scale = number("scale");
    s.input_scale = number("input_scale");
  } else if (op == "rrelu") {
    s.lower = number("lower");
    s.upper = number("upper");
    if (!(s.lower <= s.upper)) throw std::invalid_argument("upper must be at least lower");
    s.training = flag("training");
    s.seed = whole("seed");
    s.offset = whole("offset");
  } else if (op == "bias_act" || op == "bias_act_dropout") {
    const ordered_json& act = all["act"];
    const std::string name = act.is_string() ? act.get<std::string>() : "";
    if (name == "linear")
      s.act = LEAKY_ACT_LINEAR;
    else if (name == "relu")
      s.act = LEAKY_ACT_RELU;
    else if (name == "lrelu")
      s.act = LEAKY_ACT_LRELU;
    else
      throw std::invalid_argument("act must be one of linear, relu, lrelu, not " + act.dump());
    // StyleGAN's defaults where given as null: alpha 0.2 for lrelu (else
    // 0), gain sqrt(2) (linear: 1).
    s.act_alpha = all["alpha"].is_null() ? (s.act == LEAKY_ACT_LRELU ? 0.2 : 0.0) : number("alpha");
    s.gain =
        all["gain"].is_null() ? (s.act == LEAKY_ACT_LINEAR ? 1.0 : std::sqrt(2.0)) : number("gain");
    s.clamp = all["clamp"].is_null() ? -1.0 : number("clamp");
    if (op == "bias_act_dropout") {
      s.dropout_p = number("dropout_p");
      if (!(s.dropout_p >= 0 && s.dropout_p < 1)) {
        throw std::invalid_argument("dropout_p must be in [0, 1), not " + all["dropout_p"].dump());
      }
      if (!backward) {
        s.seed = whole("seed");
        s.offset = whole("offset");
      }
    }
  }
  if (resolved) *resolved = all;
  return s;
}

const Operand* FindOperand(const Operands& operands, const std::string& name) {
  for (const Operand& o : operands) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

Operand MakeOperand(std::string name, leaky_dtype dtype, std::vector<uint64_t> bits) {
  Operand o{std::move(name), dtype, false, std::move(bits), {}};
  o.values.resize(o.bits.size());
  for (size_t i = 0; i < o.bits.size(); ++i) o.values[i] = ToDouble(dtype, o.bits[i]);
  return o;
}

Operand MakeMask(std::string name, std::vector<uint64_t> bytes) {
  return Operand{std::move(name), LEAKY_F32, true, std::move(bytes), {}};
}

std::vector<uint8_t> OperandBytes(const Operand& o) {
  return ToBytes(o.mask ? size_t{1} : DtypeBytes(o.dtype), o.bits);
}

Operand OperandFromBytes(std::string name, leaky_dtype dtype, bool mask, const uint8_t* data,
                         size_t size) {
  const size_t element = mask ? 1 : DtypeBytes(dtype);
  std::vector<uint64_t> bits(size / element, 0);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(&bits[i], data + i * element, element);
  return mask ? MakeMask(std::move(name), std::move(bits))
              : MakeOperand(std::move(name), dtype, std::move(bits));
}

void ShapeFamilyProblem(FamilyProblem* p, uint64_t elements, uint64_t channels) {
  if (!IsChannelOp(p->op)) {
    p->outer = p->channels = 1;
    p->inner = elements;
    return;
  }
  if (channels == 0 || elements / 2 / channels == 0) {
    throw std::invalid_argument("elems must be at least 2 * channels (" +
                                std::to_string(2 * channels) + ") for " + p->op);
  }
  p->outer = 2;
  p->channels = channels;
  p->inner = elements / (2 * channels);
}

Operands RunFamily(const FamilyProblem& p, const FamilyScalars& s, const Operands& inputs) {
  const FamilyRow& row = FindFamilyRow(p.op, p.backward);
  const uint64_t n = p.elements();
  const size_t bytes = DtypeBytes(p.dtype);
  std::vector<std::vector<uint8_t>> out(row.outputs.size());
  for (size_t k = 0; k < out.size(); ++k) {
    const bool channel_side = k > 0 && (row.outputs[k] == "dweight" || row.outputs[k] == "db");
    out[k].assign(row.outputs[k] == "mask" ? (n + 7) / 8 : (channel_side ? p.channels : n) * bytes,
                  0);
  }
  std::vector<std::vector<uint8_t>> in;
  auto ptr = [&](const char* name) -> const void* {
    const Operand* o = FindOperand(inputs, name);
    if (!o) return nullptr;
    in.push_back(OperandBytes(*o));
    return in.back().data();
  };
  in.reserve(8);
  const void* x = ptr(p.backward && (p.op == "relu" || p.op == "elu") ? "saved" : "x");
  const void* dy = ptr("dy");
  const void* side = ptr(p.op == "prelu" ? "weight" : "bias");
  const void* mask = ptr("mask");
  if (!x || (p.backward && !dy)) throw std::invalid_argument("an input is missing");
  const leaky_bias_act_params ba{s.act, s.act_alpha, s.gain, s.clamp};
  const leaky_rrelu_params rr{s.lower, s.upper, s.training ? 1 : 0, s.seed, s.offset};
  const leaky_dropout_params dp{s.dropout_p, s.seed, s.offset};
  const size_t o = p.outer, c = p.channels, i = p.inner;
  void* y = out[0].data();
  void* second = out.size() > 1 ? out[1].data() : nullptr;
  leaky_status st = LEAKY_ERROR_INVALID_PARAMETER;
  if (p.op == "relu") {
    st = p.backward ? leaky_plain_relu_backward(p.dtype, n, dy, x, y, nullptr)
                    : leaky_plain_relu_forward(p.dtype, n, x, y, nullptr);
  } else if (p.op == "elu") {
    st = p.backward
             ? leaky_elu_backward(p.dtype, n, dy, x, 0, y, s.alpha, s.scale, s.input_scale, nullptr)
             : leaky_elu_forward(p.dtype, n, x, y, s.alpha, s.scale, s.input_scale, nullptr);
  } else if (p.op == "prelu") {
    st = p.backward ? leaky_prelu_backward(p.dtype, o, c, i, dy, x, side, y, second, nullptr)
                    : leaky_prelu_forward(p.dtype, o, c, i, x, side, y, nullptr);
  } else if (p.op == "rrelu") {
    st = p.backward
             ? leaky_rrelu_backward(p.dtype, n, dy, x, y, &rr, nullptr)
             : leaky_rrelu_forward(p.dtype, n, x, y, s.training ? second : nullptr, &rr, nullptr);
    if (!p.backward && !s.training && st == LEAKY_OK) {
      // Evaluation writes no noise; its slope is (lower + upper) / 2, the
      // noise of training with lower = upper = that (as leaky.numpy's).
      const double mean = (s.lower + s.upper) / 2;
      const leaky_rrelu_params same{mean, mean, 1, s.seed, s.offset};
      std::vector<uint8_t> scratch(n * bytes);
      st = leaky_rrelu_forward(p.dtype, n, x, scratch.data(), second, &same, nullptr);
    }
  } else if (p.op == "bias_act") {
    st = p.backward
             ? leaky_bias_act_backward(p.dtype, o, c, i, dy, x, side, y, second, &ba, nullptr)
             : leaky_bias_act_forward(p.dtype, o, c, i, x, side, y, &ba, nullptr);
  } else if (p.op == "bias_act_dropout") {
    if (p.backward && !mask) throw std::invalid_argument("the input mask is missing");
    st = p.backward
             ? leaky_bias_act_dropout_backward(p.dtype, o, c, i, dy, x, side,
                                               static_cast<const uint8_t*>(mask), y, second, &ba,
                                               s.dropout_p, nullptr)
             : leaky_bias_act_dropout_forward(p.dtype, o, c, i, x, side, y,
                                              static_cast<uint8_t*>(second), &ba, &dp, nullptr);
  }
  if (st != LEAKY_OK) {
    throw std::invalid_argument(p.op + " " + Direction(p.backward) + ": " +
                                leaky_status_string(st));
  }
  Operands result;
  for (size_t k = 0; k < out.size(); ++k) {
    result.push_back(OperandFromBytes(row.outputs[k], p.dtype, row.outputs[k] == "mask",
                                      out[k].data(), out[k].size()));
  }
  return result;
}

void DrawFamilyInputs(FamilyProblem* p, const std::string& dist, uint64_t seed) {
  const uint64_t n = p->elements();
  GoldenDescription d;
  d.op = "leaky_relu_backward";
  d.dtype = p->dtype;
  d.elements = n;
  d.shape = {n};
  d.negative_slope = 0.2;
  d.distribution = dist;
  d.seed = seed;
  const GoldenArrays drawn = MakeGolden(d);
  GoldenDescription side = d;
  side.op = "leaky_relu_forward";
  side.elements = p->channels;
  side.shape = {p->channels};
  side.distribution = "uniform:-0.5,1.5";
  side.seed = seed + 1;
  const std::vector<uint64_t> per_channel = MakeGolden(side).x;
  const FamilyRow& row = FindFamilyRow(p->op, p->backward);
  p->inputs.clear();
  for (const std::string& name : row.inputs) {
    if (name == "x" || name == "saved") p->inputs.push_back(MakeOperand(name, p->dtype, drawn.x));
    if (name == "dy") p->inputs.push_back(MakeOperand(name, p->dtype, drawn.dy));
    if (name == "weight" || name == "bias")
      p->inputs.push_back(MakeOperand(name, p->dtype, per_channel));
    if (name == "mask") {
      // The forward's draws with the same scalars.
      FamilyProblem forward = *p;
      forward.backward = false;
      Operands in = {MakeOperand("x", p->dtype, drawn.x),
                     MakeOperand("bias", p->dtype, per_channel)};
      p->inputs.push_back(RunFamily(forward, p->scalars, in).at(1));
    }
  }
  p->golden = RunFamily(*p, p->scalars, p->inputs);
}

FamilyProblem MakeFamilyProblem(const FamilyDescription& d, ordered_json* resolved) {
  FamilyProblem p;
  p.op = d.op;
  p.backward = d.backward;
  p.dtype = d.dtype;
  FindFamilyRow(d.op, d.backward);
  if (d.op == "leaky_relu")
    throw std::invalid_argument("leaky_relu's golden is LeakyReLU's own (MakeGolden)");
  if (d.elements == 0 || d.elements > kMaxGoldenElements) {
    throw std::invalid_argument("elems must be in [1, 2^32], not " + std::to_string(d.elements));
  }
  if (IsChannelOp(d.op) && (d.channels == 0 || d.channels > (uint64_t{1} << 20))) {
    throw std::invalid_argument("channels must be in [1, 2^20], not " + std::to_string(d.channels));
  }
  p.scalars = ParseFamilyScalars(d.op, d.backward, d.scalars, resolved);
  ShapeFamilyProblem(&p, d.elements, d.channels);
  CheckDistribution(d.distribution);
  DrawFamilyInputs(&p, d.distribution, d.seed);
  return p;
}

std::string FamilyDefaultDistribution(const std::string& op, bool backward) {
  return backward && IsChannelOp(op) ? "normal" : "hard";
}

uint64_t FamilyMaxUlp(const FamilyProblem& p) {
  if (p.op != "elu") return 0;
  namespace r = leaky::reference;
  switch (p.dtype) {
    case LEAKY_F64:
      if (p.backward) return r::kEluBackwardMaxUlpF64;
      return p.scalars.input_scale < 0 ? r::kEluForwardMaxUlpF64NegativeInputScale
                                       : r::kEluForwardMaxUlpF64;
    case LEAKY_F32:
      return p.backward ? r::kEluBackwardMaxUlpF32 : r::kEluForwardMaxUlpF32;
    default:
      return p.backward ? r::kEluBackwardMaxUlpHalf : r::kEluForwardMaxUlpHalf;
  }
}

}  // namespace leaky::toolkit

#include "eight_bit_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "golden_io.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

constexpr leaky_type8 kTypes8[] = {LEAKY_QU8, LEAKY_QS8, LEAKY_FP8_E4M3, LEAKY_FP8_E5M2};

std::string Number(double v) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

std::string Spelt(Q8Spelling spelling, const std::string& words) {
  std::string s = words;
  const char space = spelling == Q8Spelling::kFlags      ? '-'
                     : spelling == Q8Spelling::kKeywords ? '_'
                                                         : ' ';
  std::replace(s.begin(), s.end(), ' ', space);
  return spelling == Q8Spelling::kFlags ? "--" + s : s;
}

void CheckScale(const std::string& name, double scale) {
  if (!(std::isfinite(scale) && scale > 0)) {
    throw GoldenError(name + " must be a finite number above 0, not " + Number(scale));
  }
}

void CheckInRange(const std::string& name, int64_t value, leaky_type8 type) {
  if (value < Type8Min(type) || value > Type8Max(type)) {
    throw GoldenError(name + " must be within " + Type8Name(type) + "'s range " +
                      std::to_string(Type8Min(type)) + ".." + std::to_string(Type8Max(type)) +
                      ", not " + std::to_string(value));
  }
}

}  // namespace

const char* Type8Name(leaky_type8 type) {
  switch (type) {
    case LEAKY_QU8:
      return "qu8";
    case LEAKY_QS8:
      return "qs8";
    case LEAKY_FP8_E4M3:
      return "fp8_e4m3";
    case LEAKY_FP8_E5M2:
      return "fp8_e5m2";
  }
  return "?";
}

std::optional<leaky_type8> ParseType8(const std::string& name) {
  for (leaky_type8 t : kTypes8) {
    if (name == Type8Name(t)) return t;
  }
  return std::nullopt;
}

bool IsQuantized(leaky_type8 type) { return type == LEAKY_QU8 || type == LEAKY_QS8; }
int32_t Type8Min(leaky_type8 type) { return type == LEAKY_QS8 ? -128 : 0; }
int32_t Type8Max(leaky_type8 type) { return type == LEAKY_QS8 ? 127 : 255; }

int32_t Q8Integer(leaky_type8 type, uint8_t byte) {
  return type == LEAKY_QS8 ? static_cast<int8_t>(byte) : byte;
}

void CheckQ8Params(const leaky_q8_params& q, Q8Spelling spelling) {
  if (!IsQuantized(q.type)) return;  // fp8: saturate is a bool wherever it is read
  auto name = [&](const char* words) { return Spelt(spelling, words); };
  CheckScale(name("input scale"), q.input.scale);
  CheckScale(name("output scale"), q.output.scale);
  CheckInRange(name("input zero point"), q.input.zero_point, q.type);
  CheckInRange(name("output zero point"), q.output.zero_point, q.type);
  CheckInRange(name("output min"), q.output_min, q.type);
  CheckInRange(name("output max"), q.output_max, q.type);
  if (q.output_min > q.output_max) {
    throw GoldenError(name("output min") + " " + std::to_string(q.output_min) + " is above " +
                      name("output max") + " " + std::to_string(q.output_max) +
                      " (an empty clamp)");
  }
}

void Q8ToJson(const leaky_q8_params& q, json* j) {
  if (!IsQuantized(q.type)) {
    (*j)["saturate"] = q.saturate != 0;
    return;
  }
  (*j)["quantization"] = {
      {"input", {{"scale", q.input.scale}, {"zero_point", q.input.zero_point}}},
      {"output", {{"scale", q.output.scale}, {"zero_point", q.output.zero_point}}},
      {"output_min", q.output_min},
      {"output_max", q.output_max}};
}

leaky_q8_params Q8FromJson(leaky_type8 type, const json& j) {
  // Every field the type uses is read below.
  leaky_q8_params q{};
  q.type = type;
  q.saturate = 1;
  if (!IsQuantized(type)) {
    const auto it = j.find("saturate");
    if (it == j.end() || !it->is_boolean()) {
      throw GoldenError(std::string("golden.json: ") + Type8Name(type) +
                        " needs \"saturate\": true or false");
    }
    q.saturate = it->get<bool>() ? 1 : 0;
    return q;
  }
  const std::string where = "golden.json: \"quantization\"";
  const auto it = j.find("quantization");
  if (it == j.end() || !it->is_object()) {
    throw GoldenError(where + " must be an object (" + Type8Name(type) + " data)");
  }
  auto integer = [&](const json& o, const char* key) -> int64_t {
    const auto v = o.find(key);
    if (v == o.end() || !v->is_number_integer()) {
      throw GoldenError(where + ": \"" + key + "\" must be a whole number");
    }
    // Past int64 is past every type's range: said as such, never wrapped.
    if (v->is_number_unsigned() && v->get<uint64_t>() > uint64_t{INT64_MAX}) {
      throw GoldenError(where + ": \"" + key + "\" must be within " + Type8Name(type) +
                        "'s range, not " + std::to_string(v->get<uint64_t>()));
    }
    return v->get<int64_t>();
  };
  auto tensor = [&](const char* key, leaky_quantization* t) {
    const auto o = it->find(key);
    if (o == it->end() || !o->is_object())
      throw GoldenError(where + ": \"" + key + "\" must be an object");
    const auto scale = o->find("scale");
    if (scale == o->end() || !scale->is_number()) {
      throw GoldenError(where + ": \"" + key + "\" needs a number \"scale\"");
    }
    t->scale = scale->get<double>();
    const int64_t zero_point = integer(*o, "zero_point");
    CheckInRange(where + ": " + key + " zero point", zero_point, type);
    t->zero_point = static_cast<int32_t>(zero_point);
  };
  tensor("input", &q.input);
  tensor("output", &q.output);
  const int64_t low = integer(*it, "output_min"), high = integer(*it, "output_max");
  CheckInRange(where + ": output min", low, type);
  CheckInRange(where + ": output max", high, type);
  q.output_min = static_cast<int32_t>(low);
  q.output_max = static_cast<int32_t>(high);
  try {
    CheckQ8Params(q);
  } catch (const GoldenError& e) {
    throw GoldenError(std::string("golden.json: ") + e.what());
  }
  return q;
}

}  // namespace leaky::toolkit

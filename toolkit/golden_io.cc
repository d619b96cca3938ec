#include "golden_io.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <type_traits>

#include "eight_bit_format.h"
#include "leaky/leaky.hpp"

namespace leaky::toolkit {

using json = nlohmann::json;

const char* DtypeName(leaky_dtype dtype) {
  switch (dtype) {
    case LEAKY_F32: return "f32";
    case LEAKY_F64: return "f64";
    case LEAKY_F16: return "f16";
    case LEAKY_BF16: return "bf16";
  }
  return "?";
}

leaky_dtype ParseDtype(const std::string& name) {
  for (leaky_dtype d : {LEAKY_F32, LEAKY_F64, LEAKY_F16, LEAKY_BF16}) {
    if (name == DtypeName(d)) return d;
  }
  throw GoldenError("unknown dtype '" + name + "' (expected f32, f64, f16, bf16, qu8, qs8, fp8_e4m3 or fp8_e5m2)");
}

size_t DtypeBytes(leaky_dtype dtype) {
  return dtype == LEAKY_F64 ? 8 : dtype == LEAKY_F32 ? 4 : 2;
}

double DtypeSmallestNormal(leaky_dtype dtype) {
  switch (dtype) {
    case LEAKY_F16: return 6.103515625e-05;
    case LEAKY_F64: return 2.2250738585072014e-308;
    default: return 1.1754943508222875e-38;
  }
}

double DtypeLargest(leaky_dtype dtype) {
  switch (dtype) {
    case LEAKY_F16: return 65504.0;
    case LEAKY_BF16: return 3.3895313892515355e+38;
    case LEAKY_F64: return 1.7976931348623157e+308;
    default: return 3.4028234663852886e+38;
  }
}

std::string TypeName(const GoldenDescription& d) {
  return d.eight_bit ? Type8Name(d.eight_bit->type) : DtypeName(d.dtype);
}

size_t ElementBytes(const GoldenDescription& d) { return d.eight_bit ? 1 : DtypeBytes(d.dtype); }

std::string DescriptionToJson(const GoldenDescription& d) {
  json j = {{"format", "leaky-golden-1"},
            {"op", d.op},
            {"dtype", TypeName(d)},
            {"shape", d.shape},
            {"elements", d.elements},
            {"negative_slope", d.negative_slope},
            {"distribution", d.distribution},
            {"seed", d.seed},
            {"files", {{"input", "input.bin"}, {"golden", "golden.bin"}}}};
  if (d.op == "leaky_relu_backward") {
    j["files"]["dy"] = "dy.bin";
    j["files"]["golden_dx"] = "golden_dx.bin";
    j["saved"] = "input";
  }
  if (!d.plan.is_null()) j["plan"] = d.plan;
  if (d.eight_bit) Q8ToJson(*d.eight_bit, &j);
  return j.dump(2) + "\n";
}

namespace {

// The field `key` of golden.json as a T, or a GoldenError in plain words
// (nlohmann's own texts, "[json.exception.type_error.302] type must be
// string, but is number", are for programmers).
template <class T>
T Field(const json& j, const char* key, const char* kind) {
  const auto it = j.find(key);
  if (it == j.end()) throw GoldenError(std::string("golden.json: no \"") + key + "\" field");
  bool fits = false;
  if constexpr (std::is_same_v<T, std::string>) {
    fits = it->is_string();
  } else if constexpr (std::is_same_v<T, double>) {
    fits = it->is_number();
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    fits = it->is_number_unsigned();
  } else {  // std::vector<uint64_t>
    fits = it->is_array() && std::all_of(it->begin(), it->end(),
                                         [](const json& e) { return e.is_number_unsigned(); });
  }
  if (!fits) throw GoldenError(std::string("golden.json: \"") + key + "\" must be " + kind);
  return it->get<T>();
}

}  // namespace

GoldenDescription DescriptionFromJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) throw GoldenError("golden.json is not valid JSON");
  if (!j.is_object()) throw GoldenError("golden.json must hold a JSON object");
  if (!j.contains("format") || j["format"] != "leaky-golden-1") {
    throw GoldenError("golden.json: unknown format (expected \"leaky-golden-1\")");
  }
  GoldenDescription d;
  d.op = Field<std::string>(j, "op", "a string");
  if (d.op != "leaky_relu_forward" && d.op != "leaky_relu_backward") {
    throw GoldenError("golden.json: unknown op '" + d.op + "'");
  }
  const std::string type = Field<std::string>(j, "dtype", "a string");
  if (const std::optional<leaky_type8> type8 = ParseType8(type)) {
    d.eight_bit = Q8FromJson(*type8, j);
    if (IsQuantized(*type8) && d.op == "leaky_relu_backward") {
      throw GoldenError("golden.json: " + type + " data has no backward (leaky/eight_bit.h)");
    }
  } else {
    d.dtype = ParseDtype(type);
  }
  d.shape = Field<std::vector<uint64_t>>(j, "shape", "a list of whole numbers");
  d.elements = Field<uint64_t>(j, "elements", "a whole number");
  uint64_t product = 1;
  for (uint64_t extent : d.shape) {
    if (extent != 0 && product > kMaxGoldenElements / extent) {
      throw GoldenError("golden.json: shape is too large");
    }
    product *= extent;
  }
  if (product != d.elements) {
    throw GoldenError("golden.json: shape holds " + std::to_string(product) +
                      " elements but \"elements\" says " + std::to_string(d.elements));
  }
  if (d.elements > kMaxGoldenElements) throw GoldenError("golden.json: too many elements");
  d.negative_slope = Field<double>(j, "negative_slope", "a number");
  if (!std::isfinite(d.negative_slope)) throw GoldenError("golden.json: slope is not finite");
  d.distribution =
      j.contains("distribution") ? Field<std::string>(j, "distribution", "a string") : "";
  d.seed = j.contains("seed") ? Field<uint64_t>(j, "seed", "a whole number") : 0;
  if (j.contains("plan")) {
    if (!j["plan"].is_object()) throw GoldenError("golden.json: plan must be an object");
    d.plan = j["plan"];
  }
  return d;
}

double ToDouble(leaky_dtype dtype, uint64_t bits) {
  switch (dtype) {
    case LEAKY_F32: return std::bit_cast<float>(static_cast<uint32_t>(bits));
    case LEAKY_F64: return std::bit_cast<double>(bits);
    case LEAKY_F16: return static_cast<float>(float16::from_bits(static_cast<uint16_t>(bits)));
    case LEAKY_BF16: return static_cast<float>(bfloat16::from_bits(static_cast<uint16_t>(bits)));
  }
  return NAN;
}

uint64_t FromDouble(leaky_dtype dtype, double value) {
  switch (dtype) {
    case LEAKY_F32: return std::bit_cast<uint32_t>(static_cast<float>(value));
    case LEAKY_F64: return std::bit_cast<uint64_t>(value);
    case LEAKY_F16: return float16(static_cast<float>(value)).bits;
    case LEAKY_BF16: return bfloat16(static_cast<float>(value)).bits;
  }
  return 0;
}

bool IsNanBits(leaky_dtype dtype, uint64_t bits) { return std::isnan(ToDouble(dtype, bits)); }

bool IsZeroBits(leaky_dtype dtype, uint64_t bits) {
  return (bits & ((uint64_t{1} << (DtypeBytes(dtype) * 8 - 1)) - 1)) == 0;
}

uint64_t UlpDistance(leaky_dtype dtype, uint64_t a, uint64_t b) {
  const unsigned width = static_cast<unsigned>(DtypeBytes(dtype) * 8);
  const uint64_t sign = uint64_t{1} << (width - 1);
  // Map to an unsigned line where adjacent floats are adjacent integers and
  // -0 == +0: negatives below `sign`, positives above. Unsigned, so f64's
  // extremes cannot overflow (the fuzzer found the signed version did).
  auto ordered = [&](uint64_t bits) -> uint64_t {
    const uint64_t magnitude = bits & (sign - 1);
    return (bits & sign) ? sign - magnitude : sign + magnitude;
  };
  const uint64_t x = ordered(a), y = ordered(b);
  return x > y ? x - y : y - x;
}

Array DecodeArray(const std::string& what, const std::vector<uint8_t>& bytes, leaky_dtype dtype,
                  uint64_t elements) {
  const size_t size = DtypeBytes(dtype);
  if (elements > kMaxGoldenElements || bytes.size() != elements * size) {
    throw GoldenError(what + " holds " + std::to_string(bytes.size()) + " bytes but " +
                      std::to_string(elements) + " " + DtypeName(dtype) + " elements need " +
                      std::to_string(elements * size) + " (truncated, oversized, or another dtype)");
  }
  Array array;
  array.bits.resize(elements);
  array.values.resize(elements);
  for (uint64_t i = 0; i < elements; ++i) {
    uint64_t bits = 0;
    std::memcpy(&bits, bytes.data() + i * size, size);  // little-endian hosts only
    array.bits[i] = bits;
    array.values[i] = ToDouble(dtype, bits);
  }
  return array;
}

std::vector<uint8_t> ReadFile(const std::string& path, uint64_t max_bytes) {
  // A directory opens as a stream on Linux and reports a size of 2^63 - 1.
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    throw GoldenError(path + " is a directory, not a golden file");
  }
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) throw GoldenError("cannot read " + path);
  const std::streamoff size = file.tellg();
  if (size < 0) throw GoldenError("cannot read " + path + " (not a regular file?)");
  if (static_cast<uint64_t>(size) > max_bytes) {
    throw GoldenError(path + " is " + std::to_string(size) + " bytes, more than the " +
                      std::to_string(max_bytes) + " expected");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  file.seekg(0);
  if (!file.read(reinterpret_cast<char*>(bytes.data()), size)) throw GoldenError("cannot read " + path);
  return bytes;
}

void WriteFile(const std::string& path, const void* data, size_t bytes) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file || !file.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes))) {
    throw GoldenError("cannot write " + path);
  }
}

}  // namespace leaky::toolkit

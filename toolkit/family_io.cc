// The family's golden files (family_io.h).
#include "family_io.h"

#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "golden_data.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

std::string Direction(bool backward) { return backward ? "backward" : "forward"; }

// Elements of an operand named `name` in p's view.
uint64_t CountOf(const FamilyProblem& p, const std::string& name) {
  if (name == "weight" || name == "bias" || name == "dweight" || name == "db") return p.channels;
  if (name == "mask") return (p.elements() + 7) / 8;
  return p.elements();
}

Operand Read(const std::string& path, const std::string& name, const FamilyProblem& p) {
  const bool mask = name == "mask";
  const uint64_t count = CountOf(p, name);
  const size_t size = mask ? 1 : DtypeBytes(p.dtype);
  std::error_code error;
  const uintmax_t on_disk = std::filesystem::file_size(path, error);
  if (!error && on_disk != count * size) {
    throw GoldenError(std::filesystem::path(path).filename().string() + " holds " +
                      std::to_string(on_disk) + " bytes; expected " + std::to_string(count * size));
  }
  const std::vector<uint8_t> bytes = ReadFile(path, count * size);
  if (bytes.size() != count * size) {
    throw GoldenError(std::filesystem::path(path).filename().string() + " holds " +
                      std::to_string(bytes.size()) + " bytes; expected " +
                      std::to_string(count * size));
  }
  return OperandFromBytes(name, p.dtype, mask, bytes.data(), bytes.size());
}

}  // namespace

bool IsFamilyGolden(const std::string& json_text) {
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  return j.is_object() && j.contains("format") && j["format"] == kFamilyGoldenFormat;
}

void WriteFamilyGolden(const std::string& dir, const FamilyProblem& p, const FamilyDescription& d,
                       const nlohmann::ordered_json& scalars, const json& plan) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw GoldenError("cannot create " + dir + ": " + error.message());
  nlohmann::ordered_json files = nlohmann::ordered_json::object();
  auto write = [&](const std::string& file, const Operand& o) {
    const std::vector<uint8_t> bytes = OperandBytes(o);
    WriteFile((std::filesystem::path(dir) / file).string(), bytes.data(), bytes.size());
    files[o.name] = file;
  };
  for (const Operand& o : p.inputs) write(o.name + ".bin", o);
  nlohmann::ordered_json outputs = nlohmann::ordered_json::object();
  for (const Operand& o : p.golden) {
    const std::vector<uint8_t> bytes = OperandBytes(o);
    WriteFile((std::filesystem::path(dir) / ("golden_" + o.name + ".bin")).string(), bytes.data(),
              bytes.size());
    outputs[o.name] = "golden_" + o.name + ".bin";
  }
  nlohmann::ordered_json j = {{"format", kFamilyGoldenFormat},
                              {"op", p.op},
                              {"direction", Direction(p.backward)},
                              {"dtype", DtypeName(p.dtype)},
                              {"shape", {p.outer, p.channels, p.inner}},
                              {"elements", p.elements()},
                              {"scalars", scalars},
                              {"distribution", d.distribution},
                              {"seed", d.seed},
                              {"inputs", files},
                              {"outputs", outputs}};
  if (!plan.is_null()) j["plan"] = plan;
  const std::string text = j.dump(2) + "\n";
  WriteFile((std::filesystem::path(dir) / "golden.json").string(), text.data(), text.size());
}

FamilyProblem FamilyFromJson(const std::string& json_text, json* plan) {
  const json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw GoldenError("golden.json must hold a JSON object");
  auto text = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_string()) {
      throw GoldenError(std::string("golden.json: \"") + key + "\" must be a string");
    }
    return j[key].get<std::string>();
  };
  FamilyProblem p;
  p.op = text("op");
  const std::string direction = text("direction");
  if (direction != "forward" && direction != "backward") {
    throw GoldenError("golden.json: direction must be forward or backward, not '" + direction +
                      "'");
  }
  p.backward = direction == "backward";
  p.dtype = ParseDtype(text("dtype"));
  try {
    FindFamilyRow(p.op, p.backward);
    if (p.op == "leaky_relu") throw std::invalid_argument("leaky_relu's golden has its own format");
    p.scalars = ParseFamilyScalars(p.op, p.backward, j.value("scalars", json::object()), nullptr);
  } catch (const std::invalid_argument& e) {
    throw GoldenError(std::string("golden.json: ") + e.what());
  }
  const json shape = j.value("shape", json());
  if (!shape.is_array() || shape.size() != 3 ||
      !std::all_of(shape.begin(), shape.end(),
                   [](const json& v) { return v.is_number_unsigned() && v.get<uint64_t>() > 0; })) {
    throw GoldenError(
        "golden.json: shape must be [outer, channels, inner], three whole numbers above 0");
  }
  p.outer = shape[0].get<uint64_t>();
  p.channels = shape[1].get<uint64_t>();
  p.inner = shape[2].get<uint64_t>();
  if (p.outer > kMaxGoldenElements || p.channels > kMaxGoldenElements / p.outer ||
      p.inner > kMaxGoldenElements / (p.outer * p.channels)) {
    throw GoldenError("golden.json: shape holds more than 2^32 elements");
  }
  if (!IsChannelOp(p.op) && (p.outer != 1 || p.channels != 1)) {
    throw GoldenError("golden.json: " + p.op + " has no channels: shape must be [1, 1, elements]");
  }
  *plan = j.contains("plan") ? j["plan"] : json();
  if (!plan->is_null() && !plan->is_object()) {
    throw GoldenError("golden.json: plan must be an object");
  }
  return p;
}

FamilyProblem ReadFamilyGolden(const std::string& dir, const std::string& json_text, json* plan) {
  FamilyProblem p = FamilyFromJson(json_text, plan);
  const FamilyRow& row = FindFamilyRow(p.op, p.backward);
  const std::filesystem::path base(dir);
  for (const std::string& name : row.inputs) {
    p.inputs.push_back(Read((base / (name + ".bin")).string(), name, p));
  }
  for (const std::string& name : row.outputs) {
    p.golden.push_back(Read((base / ("golden_" + name + ".bin")).string(), name, p));
  }
  return p;
}

Operand ReadFamilyOutput(const std::string& path, const Operand& like, uint64_t max_elements) {
  const size_t size = like.mask ? 1 : DtypeBytes(like.dtype);
  const std::vector<uint8_t> bytes = ReadFile(path, max_elements * size);
  if (bytes.size() % size) {
    throw GoldenError(path + " holds " + std::to_string(bytes.size()) +
                      " bytes, not a whole number of " + DtypeName(like.dtype) + " elements");
  }
  return OperandFromBytes(like.name, like.dtype, like.mask, bytes.data(), bytes.size());
}

}  // namespace leaky::toolkit

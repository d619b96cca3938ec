#include "grid_ink.h"

#include <zlib.h>

#include <cstring>

namespace leaky::gan {
namespace {

uint32_t Get32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

std::optional<double> InkShare(const std::vector<uint8_t>& png) {
  static const uint8_t kSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  if (png.size() < 8 || std::memcmp(png.data(), kSignature, 8) != 0) return std::nullopt;
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> packed;
  for (size_t at = 8; at + 12 <= png.size();) {
    const uint32_t length = Get32(&png[at]);
    if (length > png.size() - at - 12) return std::nullopt;
    const uint8_t* type = &png[at + 4];
    const uint8_t* data = &png[at + 8];
    if (std::memcmp(type, "IHDR", 4) == 0) {
      // 8-bit greyscale, deflate, filter method 0, no interlace.
      if (length != 13 || data[8] != 8 || data[9] != 0 || data[10] != 0 || data[11] != 0 ||
          data[12] != 0) {
        return std::nullopt;
      }
      width = Get32(data);
      height = Get32(data + 4);
    } else if (std::memcmp(type, "IDAT", 4) == 0) {
      packed.insert(packed.end(), data, data + length);
    }
    at += 12 + size_t{length};
  }
  // The lab's grids are a few hundred pixels a side.
  if (width == 0 || height == 0 || width > 65536 || height > 65536) return std::nullopt;
  const size_t row = size_t{width} + 1;
  std::vector<uint8_t> raw(row * height);
  uLongf size = raw.size();
  if (uncompress(raw.data(), &size, packed.data(), packed.size()) != Z_OK || size != raw.size()) {
    return std::nullopt;
  }
  size_t dark = 0;
  for (size_t y = 0; y < height; ++y) {
    if (raw[y * row] != 0) return std::nullopt;  // a filter the lab does not write
    for (size_t x = 1; x < row; ++x) dark += raw[y * row + x] < 128;
  }
  return static_cast<double>(dark) / (static_cast<double>(width) * height);
}

}  // namespace leaky::gan

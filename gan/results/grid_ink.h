// How much a sample grid shows: the share of its pixels drawn dark, read
// from the lab's own PNG files (8-bit greyscale, no interlace, filter none:
// gan/lab/png.cc; digits dark on white). The report says when a grid is
// almost blank, which a reader otherwise takes for a broken image.
#ifndef LEAKY_GAN_GRID_INK_H_
#define LEAKY_GAN_GRID_INK_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace leaky::gan {

// The share of pixels below mid grey (128), in [0, 1]; nullopt for bytes
// that are not such a PNG (another writer's, or damaged).
std::optional<double> InkShare(const std::vector<uint8_t>& png);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_GRID_INK_H_

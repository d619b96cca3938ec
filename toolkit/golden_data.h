// Golden data in memory: inputs drawn from a named distribution and the
// bit-exact outputs of the library's scalar reference. `leaky golden` writes
// them; tests and the Python harness (leaky.testing) use them directly.
#ifndef LEAKY_TOOLKIT_GOLDEN_DATA_H_
#define LEAKY_TOOLKIT_GOLDEN_DATA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "golden_io.h"

namespace leaky::toolkit {

// The distributions MakeGolden draws from, spelt as `leaky golden --help`
// (DistributionHelp) and every message about a bad --dist spell them.
inline constexpr char kUniformForm[] = "uniform[:A,B]";
inline constexpr char kNormalForm[] = "normal[:MEAN,STD]";
inline std::string DistributionHelp() {
  return std::string(kUniformForm) + " | " + kNormalForm + " | hard";
}

struct GoldenArrays {
  std::vector<uint64_t> x, dy;  // stored bit patterns (dy: backward only)
  std::vector<uint64_t> golden; // y (forward) or dx (backward)
};

// Draws the inputs of `d` (distribution, seed, dtype, elements) and computes
// the golden with d.negative_slope. 8-bit data (d.eight_bit) takes every
// byte value instead, shuffled from the seed (AllBytesShuffled), and the
// library's 8-bit result. Throws std::invalid_argument for an
// unknown distribution or bad parameters.
GoldenArrays MakeGolden(const GoldenDescription& d);

// Throws std::invalid_argument, naming the expected form, unless `spec` is one
// of DistributionHelp()'s.
void CheckDistribution(const std::string& spec);

// The reference with `slope` on given inputs (what a kernel should output).
std::vector<uint64_t> ReferenceOutput(const GoldenDescription& d, const std::vector<uint64_t>& x,
                                      const std::vector<uint64_t>& dy, double slope);

// Bit patterns of `dtype` to bytes and back (little-endian).
std::vector<uint8_t> ToBytes(leaky_dtype dtype, const std::vector<uint64_t>& bits);
std::vector<uint8_t> ToBytes(size_t element_bytes, const std::vector<uint64_t>& bits);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_GOLDEN_DATA_H_

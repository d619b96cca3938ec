// `leaky precision`: what LeakyReLU's negative side loses in 16-bit
// formats, on real pre-activations. Compares native f16 arithmetic (slope
// rounded to f16), the same with flush-to-zero, bf16 arithmetic, and this
// library's f16 and bf16 (computed in f32, rounded once) against the exact
// product of the f32 input and the slope.
#ifndef LEAKY_GAN_PRECISION_H_
#define LEAKY_GAN_PRECISION_H_

#include <string>
#include <vector>

namespace leaky::gan {

struct PrecisionRow {
  std::string format;
  long long negatives = 0;         // negative (nonzero) inputs
  long long flushed_to_zero = 0;   // of those, outputs exactly zero
  double max_relative_error = 0;   // on the negative side
  double mean_relative_error = 0;
};

std::vector<PrecisionRow> MeasurePrecision(const std::vector<float>& x, double slope);

// The rows measured on `source`'s values at `slope` (results.json's
// "precision", `leaky precision --json`).
struct PrecisionTable {
  double slope = 0;
  std::string source;
  std::vector<PrecisionRow> rows;
};

}  // namespace leaky::gan

#endif  // LEAKY_GAN_PRECISION_H_

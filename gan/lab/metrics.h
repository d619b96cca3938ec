// The lab's measurements, each a pure function of tensors (unit-tested on
// inputs with known answers). The statistics over seeds are in stats.h.
#ifndef LEAKY_GAN_METRICS_H_
#define LEAKY_GAN_METRICS_H_

#include <torch/torch.h>

#include "stats.h"  // the lab's users of metrics get its statistics too

#include <cstdint>
#include <utility>
#include <vector>

namespace leaky::gan {

// Fraction of elements exactly zero, and fraction <= 0.
std::pair<double, double> Sparsity(const torch::Tensor& activations);

// Fraction of channels (axis 1) with no positive value anywhere in the batch.
double DeadChannelFraction(const torch::Tensor& activations);

// The Fréchet distance between Gaussians fitted to two feature sets [N, F]:
// |mu1 - mu2|^2 + tr(S1 + S2 - 2 (S1^1/2 S2 S1^1/2)^1/2), in double.
double FrechetDistance(const torch::Tensor& a, const torch::Tensor& b);

// The kernel inception distance (Bińkowski et al. 2018) between two
// feature sets [N, F] and [M, F]: the unbiased estimator of MMD^2 with the
// cubic polynomial kernel k(x, y) = (x.y / F + 1)^3, over all pairs (the
// diagonal terms left out), in double. Unbiased: near 0, and below 0 by
// chance, when both sets come from one distribution.
double KernelDistance(const torch::Tensor& a, const torch::Tensor& b);

// Predicted classes [N] of 10: classes that appear, and KL(histogram || uniform).
std::pair<int, double> ClassCoverage(const torch::Tensor& predicted);

// ring8: modes with at least `min_hits` samples within 3 std of them, and
// the share of samples within 3 std of their nearest mode.
std::pair<int, double> Ring8Quality(const torch::Tensor& samples, int64_t min_hits);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_METRICS_H_

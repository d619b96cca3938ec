// The lab's measurements, each a pure function of tensors (unit-tested on
// inputs with known answers).
#ifndef LEAKY_GAN_METRICS_H_
#define LEAKY_GAN_METRICS_H_

#include <torch/torch.h>

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

// Predicted classes [N] of 10: classes that appear, and KL(histogram || uniform).
std::pair<int, double> ClassCoverage(const torch::Tensor& predicted);

// ring8: modes with at least `min_hits` samples within 3 std of them, and
// the share of samples within 3 std of their nearest mode.
std::pair<int, double> Ring8Quality(const torch::Tensor& samples, int64_t min_hits);

// Mean, sample standard deviation, the Student-t 95% interval of the mean
// (n - 1 degrees of freedom: it holds for few seeds, where a bootstrap over
// 5 values is about a third too narrow), and beside it, for reference only,
// a percentile-bootstrap 95% interval (fixed resampling seed). With one value
// both intervals are the value itself: n says how much it is worth.
struct Summary {
  double mean, std, ci_low, ci_high;  // ci: Student-t
  double boot_low, boot_high;         // percentile bootstrap
  int n;
};
Summary Summarize(const std::vector<double>& values);

// The two-sided 97.5% quantile of Student's t with `dof` degrees of freedom
// (Boost.Math), the half-width factor of a 95% interval.
double StudentT975(int dof);

// The exact two-sided sign test of paired differences against a median of
// 0: zero differences are dropped; p = min(1, 2 P(X <= min(pos, neg))),
// X ~ Binomial(pos + neg, 1/2) (Boost.Math's binomial tail).
struct SignTest {
  int positive, negative, ties;
  double p;
};
SignTest SignTestOf(const std::vector<double>& differences);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_METRICS_H_

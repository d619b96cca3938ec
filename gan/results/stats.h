// The statistics over seeds: summaries with Student-t intervals and the
// exact sign test (Boost.Math). Plain numbers: no LibTorch, so the claims,
// measures and tables compile without it.
#ifndef LEAKY_GAN_STATS_H_
#define LEAKY_GAN_STATS_H_

#include <vector>

namespace leaky::gan {

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

// One-sided p-values of the Student-t test of the mean (n - 1 degrees of
// freedom; Boost.Math): PAbove for "mean > bound" (H0: mean <= bound),
// PBelow for "mean < bound". 1 with fewer than 2 values or no spread (and
// the mean on H0's side).
double PAbove(const Summary& s, double bound);
double PBelow(const Summary& s, double bound);

// Holm's step-down adjustment of a family's p-values, in their order:
// the i-th smallest times (m - i + 1), made monotone, capped at 1.
std::vector<double> HolmAdjusted(const std::vector<double>& p);

// The exact two-sided sign test of paired differences against a median of
// 0: zero differences are dropped; p = min(1, 2 P(X <= min(pos, neg))),
// X ~ Binomial(pos + neg, 1/2) (Boost.Math's binomial tail).
struct SignTest {
  int positive, negative, ties;
  double p;
};
SignTest SignTestOf(const std::vector<double>& differences);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_STATS_H_

#include "stats.h"

#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <random>

namespace leaky::gan {

double StudentT975(int dof) {
  return boost::math::quantile(boost::math::students_t_distribution<double>(dof), 0.975);
}

SignTest SignTestOf(const std::vector<double>& differences) {
  SignTest t{0, 0, 0, 1.0};
  for (double d : differences) {
    if (d > 0) ++t.positive;
    else if (d < 0) ++t.negative;
    else ++t.ties;
  }
  const int n = t.positive + t.negative;
  if (n == 0) return t;
  const boost::math::binomial_distribution<double> fair(n, 0.5);
  t.p = std::min(1.0, 2.0 * boost::math::cdf(fair, std::min(t.positive, t.negative)));
  return t;
}

Summary Summarize(const std::vector<double>& values) {
  Summary s{NAN, NAN, NAN, NAN, NAN, NAN, static_cast<int>(values.size())};
  if (values.empty()) return s;
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = values.size() > 1 ? std::sqrt(squares / static_cast<double>(values.size() - 1)) : 0.0;
  const double half = values.size() > 1
                          ? StudentT975(s.n - 1) * s.std / std::sqrt(static_cast<double>(s.n))
                          : 0.0;
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  std::mt19937_64 rng(12345);
  std::uniform_int_distribution<size_t> pick(0, values.size() - 1);
  std::vector<double> means(2000);
  for (double& m : means) {
    double total = 0;
    for (size_t i = 0; i < values.size(); ++i) total += values[pick(rng)];
    m = total / static_cast<double>(values.size());
  }
  std::sort(means.begin(), means.end());
  s.boot_low = means[static_cast<size_t>(0.025 * (means.size() - 1))];
  s.boot_high = means[static_cast<size_t>(0.975 * (means.size() - 1))];
  return s;
}

double PAbove(const Summary& s, double bound) {
  if (s.n < 2) return 1.0;
  if (!(s.std > 0)) return s.mean > bound ? 0.0 : 1.0;
  const double t = (s.mean - bound) / (s.std / std::sqrt(static_cast<double>(s.n)));
  return boost::math::cdf(
      boost::math::complement(boost::math::students_t_distribution<double>(s.n - 1), t));
}

double PBelow(const Summary& s, double bound) {
  Summary mirrored = s;
  mirrored.mean = -s.mean;
  return PAbove(mirrored, -bound);
}

std::vector<double> HolmAdjusted(const std::vector<double>& p) {
  std::vector<size_t> order(p.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(p.size());
  double running = 0;
  for (size_t rank = 0; rank < order.size(); ++rank) {
    running = std::max(running, std::min(1.0, p[order[rank]] * static_cast<double>(p.size() - rank)));
    adjusted[order[rank]] = running;
  }
  return adjusted;
}

}  // namespace leaky::gan

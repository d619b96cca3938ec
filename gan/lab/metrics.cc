#include "metrics.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "data.h"

namespace leaky::gan {

std::pair<double, double> Sparsity(const torch::Tensor& activations) {
  const double n = static_cast<double>(activations.numel());
  if (n == 0) return {0.0, 0.0};
  const double zero = activations.eq(0).sum().item<double>();
  const double nonpositive = activations.le(0).sum().item<double>();
  return {zero / n, nonpositive / n};
}

double DeadChannelFraction(const torch::Tensor& activations) {
  TORCH_CHECK(activations.dim() >= 2, "DeadChannelFraction: need [N, C, ...]");
  const torch::Tensor per_channel = activations.transpose(0, 1).reshape({activations.size(1), -1});
  const torch::Tensor alive = per_channel.gt(0).any(1);
  return 1.0 - alive.to(torch::kFloat64).mean().item<double>();
}

namespace {

// The symmetric PSD square root, through the eigendecomposition.
torch::Tensor SqrtPsd(const torch::Tensor& m) {
  auto [values, vectors] = torch::linalg::eigh(m, "L");
  return vectors.matmul(torch::diag(values.clamp_min(0).sqrt())).matmul(vectors.t());
}

}  // namespace

double FrechetDistance(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor x = a.to(torch::kFloat64), y = b.to(torch::kFloat64);
  const torch::Tensor mu_x = x.mean(0), mu_y = y.mean(0);
  const torch::Tensor cx = (x - mu_x).t().matmul(x - mu_x) / (x.size(0) - 1);
  const torch::Tensor cy = (y - mu_y).t().matmul(y - mu_y) / (y.size(0) - 1);
  const torch::Tensor root = SqrtPsd(cx);
  const torch::Tensor middle = SqrtPsd(root.matmul(cy).matmul(root));
  const double d = (mu_x - mu_y).pow(2).sum().item<double>() +
                   (cx.trace() + cy.trace() - 2 * middle.trace()).item<double>();
  return std::max(d, 0.0);  // rounding can leave a tiny negative for equal sets
}

double KernelDistance(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor x = a.to(torch::kFloat64), y = b.to(torch::kFloat64);
  const int64_t m = x.size(0), n = y.size(0);
  TORCH_CHECK(m > 1 && n > 1 && x.size(1) == y.size(1), "KID needs two sets of >= 2 features");
  const double f = static_cast<double>(x.size(1));
  const auto kernel = [&](const torch::Tensor& p, const torch::Tensor& q) {
    return (p.matmul(q.t()) / f + 1.0).pow(3);
  };
  const torch::Tensor kxx = kernel(x, x), kyy = kernel(y, y), kxy = kernel(x, y);
  const double xx = (kxx.sum() - kxx.diagonal().sum()).item<double>() / (m * (m - 1.0));
  const double yy = (kyy.sum() - kyy.diagonal().sum()).item<double>() / (n * (n - 1.0));
  return xx + yy - 2.0 * kxy.mean().item<double>();
}

std::pair<int, double> ClassCoverage(const torch::Tensor& predicted) {
  const torch::Tensor counts = torch::bincount(predicted.to(torch::kInt64), {}, 10).to(torch::kFloat64);
  const double total = counts.sum().item<double>();
  int covered = 0;
  double kl = 0.0;
  for (int c = 0; c < 10; ++c) {
    const double count = counts[c].item<double>();
    if (count > 0) {
      ++covered;
      const double p = count / total;
      kl += p * std::log(p * 10.0);
    }
  }
  return {covered, kl};
}

std::pair<int, double> Ring8Quality(const torch::Tensor& samples, int64_t min_hits) {
  std::vector<float> centres;
  for (int m = 0; m < 8; ++m) {
    centres.push_back(static_cast<float>(kRing8Radius * std::cos(2 * M_PI * m / 8)));
    centres.push_back(static_cast<float>(kRing8Radius * std::sin(2 * M_PI * m / 8)));
  }
  const torch::Tensor modes = torch::tensor(centres).reshape({8, 2});
  const torch::Tensor distance = torch::cdist(samples.to(torch::kFloat32), modes);  // [N, 8]
  auto [nearest_distance, nearest] = distance.min(1);
  const torch::Tensor good = nearest_distance.le(3 * kRing8Std);
  const torch::Tensor hits = torch::bincount(nearest.masked_select(good), {}, 8);
  const int covered = hits.ge(min_hits).sum().item<int>();
  const double share = samples.size(0) == 0 ? 0.0 : good.to(torch::kFloat64).mean().item<double>();
  return {covered, share};
}

}  // namespace leaky::gan

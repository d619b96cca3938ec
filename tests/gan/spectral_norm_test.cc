// Spectral normalisation: sigma against a dense SVD (many power steps at
// once, and one step per forward carried by u), eval frozen, the gradient
// against finite differences, nothing drawn from torch's global generator,
// u saved and loaded with the module.
#include "spectral_norm.h"

#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace leaky::gan {
namespace {

namespace tnn = torch::nn;

// The largest singular value of `weight` as an [out, rest] matrix, in float64.
double SvdSigma(const torch::Tensor& weight) {
  const torch::Tensor matrix = weight.detach().to(torch::kDouble).reshape({weight.size(0), -1});
  return torch::linalg_svdvals(matrix)[0].item<double>();
}

torch::Tensor Randn(std::vector<int64_t> shape, uint64_t seed,
                    torch::ScalarType dtype = torch::kFloat) {
  torch::Generator generator = at::detail::createCPUGenerator(seed);
  return torch::randn(shape, generator, torch::TensorOptions().dtype(dtype));
}

torch::Tensor UnitU(int64_t out, uint64_t seed, torch::ScalarType dtype = torch::kFloat) {
  const torch::Tensor u = Randn({out}, seed, dtype);
  return u / u.norm();
}

std::string ShapeName(const std::vector<int64_t>& shape) {
  std::string name;
  for (int64_t d : shape) name += (name.empty() ? "" : "x") + std::to_string(d);
  return name;
}

// After k steps from a random u the relative error of sigma is at most
// tan^2(angle of u to the top singular vector) * (s2/s1)^(4k). The slowest
// of these matrices (24x256, s2/s1 = 0.984) is still 4e-3 off after 50
// steps, hence 200; all then sit at float32's rounding (measured <= 3.5e-7).
constexpr int kSteps = 200;
constexpr double kSigmaTolerance = 1e-5;  // relative, float32 weights

class SigmaTest : public ::testing::TestWithParam<std::vector<int64_t>> {};

TEST_P(SigmaTest, PowerIterationReachesTheSvdValue) {
  const std::vector<int64_t> shape = GetParam();
  const torch::Tensor weight = Randn(shape, 11);
  torch::Tensor u = UnitU(shape[0], 12);
  const torch::Tensor normalized = SpectralNormalize(weight, u, /*update=*/true, kSteps);
  const torch::Tensor singular =
      torch::linalg_svdvals(weight.to(torch::kDouble).reshape({shape[0], -1}));
  const double reference = singular[0].item<double>();
  const double gap = singular.numel() > 1 ? (singular[1] / singular[0]).item<double>() : 0.0;
  // sigma as the ratio weight / normalized (one scalar divides every entry).
  const double sigma =
      (weight.to(torch::kDouble).norm() / normalized.to(torch::kDouble).norm()).item<double>();
  const double sigma_error = std::abs(sigma - reference) / reference;
  const double unit_error = std::abs(SvdSigma(normalized) - 1.0);
  std::printf(
      "[ sigma    ] %-10s s2/s1 %.3f svd %.6f power %.6f rel err %.2e,"
      " |W/sigma| - 1 = %.2e\n",
      ShapeName(shape).c_str(), gap, reference, sigma, sigma_error, unit_error);
  EXPECT_LT(sigma_error, kSigmaTolerance) << ShapeName(shape);
  EXPECT_LT(unit_error, kSigmaTolerance) << ShapeName(shape);
  EXPECT_NEAR(u.norm().item<double>(), 1.0, 1e-6) << ShapeName(shape) << ": u left unnormalised";
}

// A conv weight, the lab's first and last layers, a tall and a wide linear.
INSTANTIATE_TEST_SUITE_P(Shapes, SigmaTest,
                         ::testing::Values(std::vector<int64_t>{32, 16, 4, 4},
                                           std::vector<int64_t>{16, 1, 4, 4},
                                           std::vector<int64_t>{1, 1024},
                                           std::vector<int64_t>{256, 24},
                                           std::vector<int64_t>{24, 256}),
                         [](const auto& info) { return ShapeName(info.param); });

// sigma from the module's current u, as the next eval forward would use it.
double ModuleUnitError(const torch::Tensor& weight, const torch::Tensor& u) {
  torch::Tensor frozen = u.clone();
  return std::abs(SvdSigma(SpectralNormalize(weight, frozen, /*update=*/false)) - 1.0);
}

// One power step per training forward: u carries the iteration over calls,
// so after many forwards the estimate is the converged one.
TEST(SpectralModules, OneStepPerForwardConverges) {
  torch::manual_seed(3);
  SpectralConv2d conv(tnn::Conv2dOptions(16, 32, 4).stride(2).padding(1), 21);
  SpectralLinear linear(tnn::LinearOptions(64, 24), 22);
  const torch::Tensor image = torch::randn({2, 16, 8, 8}), row = torch::randn({2, 64});
  const double conv_start = ModuleUnitError(conv->inner->weight, conv->u);
  const double linear_start = ModuleUnitError(linear->inner->weight, linear->u);
  for (int i = 0; i < 100; ++i) {
    conv->forward(image);
    linear->forward(row);
  }
  const double conv_end = ModuleUnitError(conv->inner->weight, conv->u);
  const double linear_end = ModuleUnitError(linear->inner->weight, linear->u);
  std::printf(
      "[ persist  ] |W/sigma| - 1 from a random u: conv %.2e -> %.2e, linear %.2e -> %.2e"
      " after 100 forwards\n",
      conv_start, conv_end, linear_start, linear_end);
  // The random start is far off (so a u that never moves fails below).
  EXPECT_GT(conv_start, 0.05);
  EXPECT_GT(linear_start, 0.05);
  EXPECT_LT(conv_end, kSigmaTolerance);
  EXPECT_LT(linear_end, kSigmaTolerance);
}

TEST(SpectralModules, EvalFreezesU) {
  torch::manual_seed(4);
  SpectralConv2d conv(tnn::Conv2dOptions(3, 8, 3).padding(1), 31);
  const torch::Tensor x = torch::randn({2, 3, 6, 6});
  conv->eval();
  const torch::Tensor u_before = conv->u.clone();
  const torch::Tensor first = conv->forward(x), second = conv->forward(x);
  EXPECT_TRUE(torch::equal(conv->u, u_before)) << "eval forward moved u";
  EXPECT_TRUE(torch::equal(first, second)) << "two eval forwards differ";
  // The contrast: a training forward does move u.
  conv->train();
  conv->forward(x);
  EXPECT_FALSE(torch::equal(conv->u, u_before)) << "training forward left u unchanged";
}

// d loss / d weight through the normalisation, against central differences
// in float64 with u held fixed (eval). sigma depends on the weight, so a
// sigma cut off from autograd gives the wrong gradient here.
void ExpectGradientMatchesFiniteDifferences(const std::function<torch::Tensor()>& forward,
                                            torch::Tensor weight, const char* name) {
  const torch::Tensor r = Randn(forward().sizes().vec(), 41, torch::kDouble);
  const auto loss = [&] { return (forward() * r).sum(); };
  weight.mutable_grad() = torch::Tensor();
  loss().backward();
  const torch::Tensor grad = weight.grad().reshape(-1).clone();
  const int64_t n = grad.numel();
  constexpr double kStep = 1e-6;
  double max_error = 0;
  for (int64_t index : {int64_t{0}, n / 3, n / 2, n - 1}) {
    double plus, minus;
    {
      torch::NoGradGuard no_grad;
      torch::Tensor flat = weight.view(-1);
      const double saved = flat[index].item<double>();
      flat[index].fill_(saved + kStep);
      plus = loss().item<double>();
      flat[index].fill_(saved - kStep);
      minus = loss().item<double>();
      flat[index].fill_(saved);
    }
    const double numeric = (plus - minus) / (2 * kStep);
    const double analytic = grad[index].item<double>();
    const double error = std::abs(analytic - numeric) / std::max(1.0, std::abs(numeric));
    max_error = std::max(max_error, error);
    EXPECT_LT(error, 1e-6) << name << " entry " << index << ": autograd " << analytic
                           << ", finite difference " << numeric;
  }
  std::printf("[ gradient ] %s: max error vs central difference %.2e\n", name, max_error);
}

TEST(SpectralModules, GradientMatchesFiniteDifferences) {
  torch::manual_seed(5);
  SpectralConv2d conv(tnn::Conv2dOptions(3, 4, 3).stride(2).padding(1), 51);
  SpectralLinear linear(tnn::LinearOptions(5, 3), 53);
  for (tnn::Module* m :
       {static_cast<tnn::Module*>(conv.get()), static_cast<tnn::Module*>(linear.get())}) {
    m->to(torch::kDouble);
    m->eval();
  }
  const torch::Tensor image = Randn({2, 3, 7, 7}, 52, torch::kDouble);
  const torch::Tensor row = Randn({4, 5}, 54, torch::kDouble);
  ExpectGradientMatchesFiniteDifferences([&] { return conv->forward(image); }, conv->inner->weight,
                                         "conv");
  ExpectGradientMatchesFiniteDifferences([&] { return linear->forward(row); },
                                         linear->inner->weight, "linear");
}

// The discriminator runs on real and on fake images, then one backward: the
// second forward's update of u must not break the first one's graph.
TEST(SpectralModules, TwoTrainingForwardsThenOneBackward) {
  torch::manual_seed(6);
  SpectralLinear linear(tnn::LinearOptions(8, 4), 61);
  const torch::Tensor loss =
      linear->forward(torch::randn({3, 8})).sum() + linear->forward(torch::randn({3, 8})).sum();
  EXPECT_NO_THROW(loss.backward());
  ASSERT_TRUE(linear->inner->weight.grad().defined());
  EXPECT_TRUE(torch::isfinite(linear->inner->weight.grad()).all().item<bool>());
}

// Building a spectral layer moves torch's global generator exactly as the
// plain layer does (its default init) and gives the same weights: u comes
// from the module's own seed. Only the plain layer's own draws remain, so
// the same seed builds the same model with or without normalisation.
TEST(SpectralModules, DrawNothingFromTheGlobalGenerator) {
  const auto next_draw = [](const std::function<void()>& build) {
    torch::manual_seed(7);
    build();
    return torch::randn({8});
  };
  const auto conv_options = tnn::Conv2dOptions(4, 8, 3).stride(2).padding(1);
  const auto linear_options = tnn::LinearOptions(16, 4);
  tnn::Conv2d plain_conv{nullptr};
  SpectralConv2d spectral_conv{nullptr};
  const torch::Tensor after_plain = next_draw([&] { plain_conv = tnn::Conv2d(conv_options); });
  const torch::Tensor after_spectral =
      next_draw([&] { spectral_conv = SpectralConv2d(conv_options, 71); });
  EXPECT_TRUE(torch::equal(after_plain, after_spectral))
      << "SpectralConv2d drew from torch's generator";
  EXPECT_TRUE(torch::equal(plain_conv->weight, spectral_conv->inner->weight));
  EXPECT_TRUE(torch::equal(plain_conv->bias, spectral_conv->inner->bias));

  tnn::Linear plain_linear{nullptr};
  SpectralLinear spectral_linear{nullptr};
  EXPECT_TRUE(
      torch::equal(next_draw([&] { plain_linear = tnn::Linear(linear_options); }),
                   next_draw([&] { spectral_linear = SpectralLinear(linear_options, 72); })))
      << "SpectralLinear drew from torch's generator";
  EXPECT_TRUE(torch::equal(plain_linear->weight, spectral_linear->inner->weight));

  // u follows the module's seed alone: unit norm, the same for the same seed
  // whatever the global state, another for another seed.
  EXPECT_NEAR(spectral_conv->u.norm().item<double>(), 1.0, 1e-6);
  torch::manual_seed(8);
  EXPECT_TRUE(torch::equal(spectral_conv->u, SpectralConv2d(conv_options, 71)->u));
  EXPECT_FALSE(torch::equal(spectral_conv->u, SpectralConv2d(conv_options, 73)->u));
}

// Initialisation by module type (models.cc's InitParameters walks apply()
// and casts to Conv2dImpl / LinearImpl) reaches the inner layers.
TEST(SpectralModules, InitByModuleTypeReachesTheInnerLayer) {
  SpectralConv2d conv(tnn::Conv2dOptions(2, 4, 3), 81);
  SpectralLinear linear(tnn::LinearOptions(6, 3), 82);
  int found = 0;
  const auto fill = [&found](tnn::Module& m) {
    if (dynamic_cast<tnn::Conv2dImpl*>(&m) == nullptr &&
        dynamic_cast<tnn::LinearImpl*>(&m) == nullptr) {
      return;
    }
    ++found;
    torch::NoGradGuard no_grad;
    for (auto& p : m.named_parameters(false)) p.value().fill_(p.key() == "weight" ? 0.5 : 0.0);
  };
  conv->apply(fill);
  linear->apply(fill);
  EXPECT_EQ(found, 2);
  EXPECT_TRUE(conv->inner->weight.eq(0.5).all().item<bool>());
  EXPECT_TRUE(linear->inner->bias.eq(0.0).all().item<bool>());
  // Parameters are the inner layer's only; u is a buffer, not trained.
  EXPECT_EQ(conv->parameters().size(), 2u);
  EXPECT_EQ(conv->named_buffers().size(), 1u);
}

// u is a buffer: saved with the module, loaded into one built from another
// seed, the eval outputs agree bit for bit.
TEST(SpectralModules, SaveAndLoadCarryU) {
  const auto options = tnn::Conv2dOptions(3, 6, 3).padding(1);
  torch::manual_seed(9);
  SpectralConv2d saved(options, 91);
  const torch::Tensor x = torch::randn({2, 3, 5, 5});
  for (int i = 0; i < 3; ++i) saved->forward(x);  // u away from its start
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "spectral_norm_test.pt").string();
  torch::save(saved, path);

  torch::manual_seed(10);
  SpectralConv2d loaded(options, 92);
  ASSERT_FALSE(torch::equal(saved->u, loaded->u));
  torch::load(loaded, path);
  std::filesystem::remove(path);
  saved->eval();
  loaded->eval();
  EXPECT_TRUE(torch::equal(saved->u, loaded->u)) << "u not restored";
  EXPECT_TRUE(torch::equal(saved->forward(x), loaded->forward(x)));
}

}  // namespace
}  // namespace leaky::gan

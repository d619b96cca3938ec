// The GAN lab's metrics on inputs with known answers.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "data.h"
#include "metrics.h"
#include "models.h"
#include "png.h"
#include "precision.h"
#include "report.h"

namespace leaky::gan {
namespace {

TEST(GanMetrics, SparsityOfAHandMadeTensor) {
  const torch::Tensor t = torch::tensor({0.0f, -0.0f, -1.0f, 2.0f, 0.5f, 0.0f, -3.0f, 4.0f});
  const auto [zero, nonpos] = Sparsity(t);
  EXPECT_DOUBLE_EQ(zero, 3.0 / 8);    // 0, -0, 0
  EXPECT_DOUBLE_EQ(nonpos, 5.0 / 8);  // and -1, -3
}

TEST(GanMetrics, DeadChannels) {
  // [N=2, C=4, 1, 2]: channel 0 has a positive value, 1 is all zero, 2 all
  // negative, 3 positive only in the second sample.
  torch::Tensor t = torch::zeros({2, 4, 1, 2});
  t[0][0][0][1] = 1.0;
  t[0][2].fill_(-1.0);
  t[1][2].fill_(-2.0);
  t[1][3][0][0] = 0.5;
  EXPECT_DOUBLE_EQ(DeadChannelFraction(t), 0.5);
  EXPECT_DOUBLE_EQ(DeadChannelFraction(torch::ones({3, 5})), 0.0);
}

TEST(GanMetrics, FrechetDistanceKnownAnswers) {
  torch::manual_seed(0);
  const torch::Tensor a = torch::randn({500, 6});
  EXPECT_NEAR(FrechetDistance(a, a), 0.0, 1e-9);
  // A shift by v adds |v|^2 and leaves the covariance term at 0.
  const torch::Tensor shift = torch::tensor({1.0f, 2.0f, 0.0f, 0.0f, -1.0f, 0.5f});
  EXPECT_NEAR(FrechetDistance(a, a + shift), 1 + 4 + 1 + 0.25, 1e-6);
  // Scaling by 2: covariance S vs 4S gives tr(S + 4S - 2 * 2S) = tr(S).
  const torch::Tensor centred = a - a.mean(0);
  const double trace = (centred.t().matmul(centred) / 499).to(torch::kFloat64).trace().item<double>();
  EXPECT_NEAR(FrechetDistance(centred, centred * 2), trace, 1e-5);
}

// KID against the estimator written out pair by pair, and its behaviour:
// about 0 (either sign) for two draws of one distribution, clearly
// positive for a shifted one.
TEST(GanMetrics, KernelDistanceUnbiasedEstimator) {
  torch::manual_seed(5);
  const torch::Tensor a = torch::randn({7, 3}, torch::kFloat64);
  const torch::Tensor b = torch::randn({5, 3}, torch::kFloat64) + 0.5;
  const auto k = [](const torch::Tensor& x, const torch::Tensor& y) {
    return std::pow(x.dot(y).item<double>() / 3.0 + 1.0, 3);
  };
  double xx = 0, yy = 0, xy = 0;
  for (int i = 0; i < 7; ++i) {
    for (int j = 0; j < 7; ++j) xx += i != j ? k(a[i], a[j]) : 0.0;
    for (int j = 0; j < 5; ++j) xy += k(a[i], b[j]);
  }
  for (int i = 0; i < 5; ++i) {
    for (int j = 0; j < 5; ++j) yy += i != j ? k(b[i], b[j]) : 0.0;
  }
  const double expected = xx / 42 + yy / 20 - 2 * xy / 35;
  EXPECT_NEAR(KernelDistance(a, b), expected, 1e-12 * std::abs(expected) + 1e-12);
  double same = 0;
  int negative = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const double d = KernelDistance(torch::randn({200, 8}), torch::randn({200, 8}));
    same += d / 20;
    negative += d < 0;
  }
  EXPECT_LT(std::abs(same), 0.02);
  EXPECT_GT(negative, 0);  // unbiased: below 0 by chance (a biased estimator never is)
  EXPECT_GT(KernelDistance(torch::randn({200, 8}), torch::randn({200, 8}) + 0.5), 0.1);
}

TEST(GanMetrics, ClassCoverageAndKl) {
  const auto [all, kl_uniform] = ClassCoverage(torch::arange(10).repeat({5}));
  EXPECT_EQ(all, 10);
  EXPECT_NEAR(kl_uniform, 0.0, 1e-12);
  const auto [one, kl_one] = ClassCoverage(torch::full({20}, 3, torch::kInt64));
  EXPECT_EQ(one, 1);
  EXPECT_NEAR(kl_one, std::log(10.0), 1e-12);
}

TEST(GanMetrics, Ring8ModeCountingOnPlantedSamples) {
  // 30 samples exactly on modes 0, 2 and 5, plus 10 far from every mode.
  std::vector<float> points;
  for (int m : {0, 2, 5}) {
    for (int i = 0; i < 30; ++i) {
      points.push_back(static_cast<float>(kRing8Radius * std::cos(2 * M_PI * m / 8)));
      points.push_back(static_cast<float>(kRing8Radius * std::sin(2 * M_PI * m / 8) + 0.01 * (i % 3)));
    }
  }
  for (int i = 0; i < 10; ++i) points.insert(points.end(), {0.0f, 0.1f * i});
  const torch::Tensor samples = torch::tensor(points).reshape({-1, 2});
  const auto [modes, share] = Ring8Quality(samples, 20);
  EXPECT_EQ(modes, 3);
  EXPECT_DOUBLE_EQ(share, 90.0 / 100.0);
  EXPECT_EQ(Ring8Quality(samples, 31).first, 0);  // below the hit count
  // Real ring8 data covers all eight modes, and a 2-D Gaussian puts
  // 1 - exp(-9/2) = 98.9% of its mass within 3 std.
  torch::Generator g = at::detail::createCPUGenerator(1);
  const auto [all, good] = Ring8Quality(Ring8(4000, g), 20);
  EXPECT_EQ(all, 8);
  EXPECT_NEAR(good, 1 - std::exp(-4.5), 0.006);
}

// Values computed by hand: {1, 2, 3, 4} has mean 2.5, sd sqrt(5/3) =
// 1.2909944, standard error 0.6454972; t(0.975, 3) = 3.1824463 (tables),
// so the interval is 2.5 -+ 2.0542603 = [0.4457397, 4.5542603]. The
// bootstrap interval lies inside the data's range and is narrower.
TEST(GanMetrics, SummaryStudentTIntervalAndBootstrapBeside) {
  const Summary s = Summarize({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.std, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_NEAR(s.ci_low, 0.4457397, 1e-6);
  EXPECT_NEAR(s.ci_high, 4.5542603, 1e-6);
  EXPECT_GE(s.boot_low, 1.0);
  EXPECT_LE(s.boot_high, 4.0);
  EXPECT_GT(s.boot_low, s.ci_low);
  EXPECT_LT(s.boot_high, s.ci_high);
  const Summary one = Summarize({7.0});
  EXPECT_EQ(one.std, 0.0);
  EXPECT_EQ(one.ci_low, 7.0);
  EXPECT_EQ(one.n, 1);
}

// t quantiles from printed tables (two-sided 95%).
TEST(GanMetrics, StudentTQuantilesMatchTables) {
  EXPECT_NEAR(StudentT975(1), 12.7062047, 1e-6);
  EXPECT_NEAR(StudentT975(4), 2.7764451, 1e-6);
  EXPECT_NEAR(StudentT975(9), 2.2621572, 1e-6);
}

// By hand: 5 of 5 positive: p = 2 * (1/2)^5 = 0.0625; 4 of 5: 2 * (1 + 5) / 32
// = 0.375; 7 of 10 (a tie dropped from 11): 2 * (1 + 10 + 45 + 120) / 1024 =
// 0.34375; balanced: p = 1.
TEST(GanMetrics, SignTestExactBinomialTail) {
  const SignTest all = SignTestOf({1, 2, 3, 4, 5});
  EXPECT_EQ(all.positive, 5);
  EXPECT_EQ(all.negative, 0);
  EXPECT_NEAR(all.p, 0.0625, 1e-12);
  EXPECT_NEAR(SignTestOf({1, 2, 3, 4, -5}).p, 0.375, 1e-12);
  const SignTest ten = SignTestOf({1, 1, 1, 1, 1, 1, 1, -1, -1, -1, 0});
  EXPECT_EQ(ten.ties, 1);
  EXPECT_NEAR(ten.p, 0.34375, 1e-12);
  EXPECT_NEAR(SignTestOf({1, -1}).p, 1.0, 1e-12);
  EXPECT_EQ(SignTestOf({0, 0}).p, 1.0);
}

TEST(GanMetrics, PrecisionCountsFlushedNegatives) {
  // -1e-5 * 0.2 = -2e-6 is subnormal in f16 (kept by native f16, flushed
  // under FTZ); -1e-7 * 0.2 is below half of f16's smallest subnormal
  // (rounds to zero even natively); bf16 and f32 keep both.
  const std::vector<float> x = {-1e-5f, -1e-7f, -3.0f, 2.0f};
  const auto rows = MeasurePrecision(x, 0.2);
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].negatives, 3);
  EXPECT_EQ(rows[0].flushed_to_zero, 1);  // native f16
  EXPECT_EQ(rows[1].flushed_to_zero, 2);  // f16 with FTZ
  EXPECT_EQ(rows[2].flushed_to_zero, 0);  // bf16
  EXPECT_EQ(rows[5].flushed_to_zero, 0);  // f32
  EXPECT_LT(rows[5].max_relative_error, 1e-7);
}

TEST(GanData, MnistConvertsOnceAndNamesTheFetchCommandWhenMissingOrCorrupt) {
  const auto dir = std::filesystem::temp_directory_path() / "leaky_gan_mnist_test";
  std::filesystem::remove_all(dir);
  try {
    LoadImages(MnistImages(), dir.string());
    FAIL() << "no error for a missing data set";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("scripts/fetch_mnist.sh"), std::string::npos) << e.what();
  }
  // Digit d: one image whose pixel d is white.
  std::filesystem::create_directories(dir / "package" / "src" / "digits");
  for (int d = 0; d < 10; ++d) {
    std::ofstream out(dir / "package" / "src" / "digits" / (std::to_string(d) + ".json"));
    out << "{\"data\": [";
    for (int i = 0; i < 784; ++i) out << (i ? "," : "") << (i == d ? "1" : "0");
    out << "]}";
  }
  const Digits digits = LoadImages(MnistImages(), dir.string());
  ASSERT_EQ(digits.images.size(0), 10);
  EXPECT_TRUE(std::filesystem::exists(dir / "mnist.bin"));
  for (int d = 0; d < 10; ++d) {
    EXPECT_EQ(digits.labels[d].item<int64_t>(), d);
    EXPECT_FLOAT_EQ(digits.images[d][0][0][d].item<float>(), 1.0f);
    EXPECT_FLOAT_EQ(digits.images[d][0][0][(d + 1) % 28].item<float>(), -1.0f);
  }
  // A truncated cache is reported in one line naming it and the fix, not read.
  std::filesystem::resize_file(dir / "mnist.bin", 100);
  try {
    LoadImages(MnistImages(), dir.string());
    FAIL() << "a truncated cache was read";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find((dir / "mnist.bin").string() + " is truncated"), std::string::npos) << what;
    EXPECT_NE(what.find("delete it"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  std::filesystem::remove_all(dir);
}

// Fashion-MNIST's package: images as lists of 784 whole grey levels, empty
// lists skipped and counted; anything else refused naming the file.
TEST(GanData, FashionClassFilesAndMalformedOnes) {
  ImageArrays arrays;
  std::string image = "[";
  for (int i = 0; i < 784; ++i) image += (i ? "," : "") + std::to_string(i % 256);
  image += "]";
  AppendClassFile(FashionImages(), "{\"data\": [[], " + image + ", " + image + "]}", 4, "f/4.json",
                  arrays);
  ASSERT_EQ(arrays.count(), 2);
  EXPECT_EQ(arrays.skipped_empty, 1);
  EXPECT_EQ(arrays.labels[1], 4);
  EXPECT_EQ(arrays.pixels[784 + 255], 255);
  EXPECT_EQ(arrays.pixels[784 + 256], 0);
  const auto refused = [](const std::string& text, const std::string& what) {
    ImageArrays a;
    try {
      AppendClassFile(FashionImages(), text, 0, "f/0.json", a);
      ADD_FAILURE() << "accepted " << text.substr(0, 40);
    } catch (const ImageDataError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("f/0.json " + what, 0), 0u) << e.what();
    }
  };
  refused("{\"data\": [[1, 2]]}", "holds an image of 2 grey levels");
  refused("{\"data\": [" + image.substr(0, image.size() - 1) + ", 256]]}", "holds an image of 785");
  refused("{\"data\": [[]]}", "holds no image");
  refused("{\"data\": [1.5]}", "holds an image that is not a list");
  refused("[1, 2]", "has no list");
  refused("{\"data\": [[", "is not valid JSON");
}

TEST(GanMetrics, ActivationSpecs) {
  EXPECT_EQ(ParseActivation("lrelu:0.1").slope, 0.1);
  EXPECT_TRUE(ParseActivation("elu@torch").torch_impl);
  EXPECT_EQ(ParseActivation("lrelu").Name(), "lrelu:0.2");
  EXPECT_THROW(ParseActivation("tanh"), std::invalid_argument);
  EXPECT_THROW(ParseActivation("relu:3"), std::invalid_argument);
}

TEST(GanMetrics, PngHasSignatureAndChunks) {
  const auto png = EncodePng(torch::full({3, 5}, 128, torch::kUInt8));
  ASSERT_GT(png.size(), 40u);
  EXPECT_EQ(png[1], 'P');
  EXPECT_EQ(std::string(png.begin() + 12, png.begin() + 16), "IHDR");
  EXPECT_EQ(std::string(png.end() - 8, png.end() - 4), "IEND");
  EXPECT_EQ(Base64({'M', 'a', 'n'}), "TWFu");
  EXPECT_EQ(Base64({'M'}), "TQ==");
}

}  // namespace
}  // namespace leaky::gan

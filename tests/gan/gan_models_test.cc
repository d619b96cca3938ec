// The lab's networks: initialisation by module type, the same starting
// weights for every activation variant of a seed, PReLU at its own init,
// and the two model widths.
#include "models.h"

#include <gtest/gtest.h>
#include <leaky/torch.hpp>

#include <map>
#include <string>

namespace leaky::gan {
namespace {

using Params = std::map<std::string, torch::Tensor>;

// Every parameter and buffer of G and D built from `seed`, except the
// activations' own (PReLU's slope), by name.
Params Build(const std::string& act, int64_t seed, ModelShape shape, bool batch_norm,
             Params* activation_params = nullptr) {
  torch::manual_seed(static_cast<uint64_t>(seed));
  Generator g(Dataset::kMnist, shape);
  const ActivationSpec base = ParseActivation("lrelu:0.2"), chosen = ParseActivation(act);
  const std::vector<ActivationSpec> acts = {base, chosen, base, chosen};
  Discriminator d(Dataset::kMnist, acts, batch_norm, seed, shape);
  Params out;
  for (const auto& p : g->named_parameters()) out["G." + p.key()] = p.value().detach().clone();
  for (const auto& p : g->named_buffers()) out["G." + p.key()] = p.value().clone();
  for (const auto& p : d->named_parameters()) {
    if (p.key().rfind("act", 0) == 0) {
      if (activation_params) (*activation_params)[p.key()] = p.value().detach().clone();
      continue;
    }
    out["D." + p.key()] = p.value().detach().clone();
  }
  for (const auto& p : d->named_buffers()) out["D." + p.key()] = p.value().clone();
  return out;
}

class InitTest : public ::testing::TestWithParam<std::tuple<Init, int, bool>> {};

TEST_P(InitTest, EveryActivationStartsFromIdenticalWeights) {
  const auto [init, width, batch_norm] = GetParam();
  const ModelShape shape{width, init};
  const Params relu = Build("relu", 3, shape, batch_norm);
  for (const char* act : {"lrelu:0.2", "prelu", "prelu:0.1", "elu", "rrelu"}) {
    const Params other = Build(act, 3, shape, batch_norm);
    ASSERT_EQ(other.size(), relu.size()) << act;
    for (const auto& [name, tensor] : relu) {
      ASSERT_TRUE(other.count(name)) << act << ": no " << name;
      EXPECT_TRUE(torch::equal(tensor, other.at(name)))
          << act << ": " << name << " differs from ReLU's (init " << InitName(init) << ", width "
          << width << ")";
    }
  }
  // Another seed gives other weights (the comparison can fail).
  const Params seed4 = Build("relu", 4, shape, batch_norm);
  EXPECT_FALSE(torch::equal(relu.at("D.layer2.weight"), seed4.at("D.layer2.weight")));
}

TEST_P(InitTest, PreluSlopesStartAtTheirInit) {
  const auto [init, width, batch_norm] = GetParam();
  for (const auto& [act, slope] : {std::pair<const char*, float>{"prelu", 0.25f}, {"prelu:0.1", 0.1f}}) {
    Params slopes;
    Build(act, 0, {width, init}, batch_norm, &slopes);
    ASSERT_EQ(slopes.size(), 2u) << act;  // layers 2 and 4
    for (const auto& [name, w] : slopes) {
      EXPECT_TRUE(torch::equal(w, torch::full_like(w, slope))) << act << " " << name << ": " << w;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Lab, InitTest,
    ::testing::Combine(::testing::Values(Init::kDcgan, Init::kDefault), ::testing::Values(1, 2),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(InitName(std::get<0>(info.param))) + "_width" +
             std::to_string(std::get<1>(info.param)) + (std::get<2>(info.param) ? "_bn" : "");
    });

TEST(ModelInit, DcganInitByModuleType) {
  const Params p = Build("prelu", 0, {2, Init::kDcgan}, true);
  for (const char* conv : {"D.layer1.weight", "D.layer3.weight", "D.head.weight", "G.body.0.weight",
                           "G.body.4.weight"}) {
    EXPECT_NEAR(p.at(conv).std().item<double>(), 0.02, 0.004) << conv;
    EXPECT_NEAR(p.at(conv).mean().item<double>(), 0.0, 0.004) << conv;
  }
  for (const char* bias : {"D.layer1.bias", "D.head.bias", "G.body.0.bias", "D.norm2.bias"}) {
    EXPECT_EQ(p.at(bias).abs().max().item<double>(), 0.0) << bias;
  }
  EXPECT_NEAR(p.at("D.norm2.weight").mean().item<double>(), 1.0, 0.01);
  EXPECT_NEAR(p.at("D.norm2.weight").std().item<double>(), 0.02, 0.008);
  // LibTorch's default: conv weights uniform within 1/sqrt(fan_in) (fan_in =
  // 64 x 3 x 3 = 576 at width 2), where N(0, 0.02) over 73,728 weights
  // reaches about 4.5 sigma = 0.09; BN weights 1.
  const double bound = 1.0 / 24.0;
  EXPECT_GT(p.at("D.layer3.weight").abs().max().item<double>(), bound);
  const Params d = Build("prelu", 0, {2, Init::kDefault}, true);
  EXPECT_LE(d.at("D.layer3.weight").abs().max().item<double>(), bound + 1e-7);
  EXPECT_TRUE(torch::equal(d.at("D.norm2.weight"), torch::ones_like(d.at("D.norm2.weight"))));
}

TEST(ModelShape, WidthTwoDoublesEveryChannel) {
  const Params w1 = Build("relu", 0, {1, Init::kDcgan}, false);
  const Params w2 = Build("relu", 0, {2, Init::kDcgan}, false);
  EXPECT_EQ(w1.at("D.layer1.weight").sizes(), (std::vector<int64_t>{16, 1, 4, 4}));
  EXPECT_EQ(w2.at("D.layer1.weight").sizes(), (std::vector<int64_t>{32, 1, 4, 4}));
  EXPECT_EQ(w2.at("D.layer3.weight").sizes(), (std::vector<int64_t>{128, 64, 3, 3}));
  EXPECT_EQ(w2.at("D.layer4.weight").sizes(), (std::vector<int64_t>{128, 128, 3, 3}));
  EXPECT_EQ(w2.at("G.body.0.weight").sizes(), (std::vector<int64_t>{128 * 49, 100}));
  EXPECT_EQ(w2.at("G.body.4.weight").sizes(), (std::vector<int64_t>{128, 64, 4, 4}));
  EXPECT_EQ(w1.at("G.body.0.weight").sizes(), (std::vector<int64_t>{64 * 49, 64}));
  torch::manual_seed(0);
  Generator g(Dataset::kMnist, ModelShape{2, Init::kDcgan});
  EXPECT_EQ(g->latent(), 100);
  g->eval();
  EXPECT_EQ(g->forward(torch::randn({2, 100})).sizes(), (std::vector<int64_t>{2, 1, 28, 28}));
}

// A module given its own seed draws nothing from torch's generator (the
// stream modules once drew a fresh seed even when one was given, shifting
// every weight built after them); without a seed they draw one.
TEST(ModelInit, SeededStreamModulesDrawNothing) {
  const auto next_draw = [](const std::function<void()>& build) {
    torch::manual_seed(5);
    build();
    return torch::rand({4});
  };
  const torch::Tensor untouched = next_draw([] {});
  EXPECT_TRUE(torch::equal(untouched, next_draw([] { leaky::nn::RReLU(torch::nn::RReLUOptions(), 7); })));
  EXPECT_TRUE(torch::equal(untouched, next_draw([] { leaky::nn::BiasAct(leaky::nn::BiasActOptions(4).seed(7)); })));
  EXPECT_FALSE(torch::equal(untouched, next_draw([] { leaky::nn::RReLU(torch::nn::RReLUOptions()); })));
  EXPECT_FALSE(torch::equal(untouched, next_draw([] { leaky::nn::BiasAct(leaky::nn::BiasActOptions(4)); })));
}

TEST(ModelInit, ActivationSpecsNamePreluByItsInit) {
  EXPECT_EQ(ParseActivation("prelu").Name(), "prelu");
  EXPECT_EQ(ParseActivation("prelu:0.25").Name(), "prelu");
  EXPECT_EQ(ParseActivation("prelu:0.1").Name(), "prelu:0.1");
  EXPECT_DOUBLE_EQ(ParseActivation("prelu:0.1").slope, 0.1);
  EXPECT_THROW(ParseActivation("elu:0.1"), std::invalid_argument);
  EXPECT_THROW(ParseActivation("prelu:x"), std::invalid_argument);
}

}  // namespace
}  // namespace leaky::gan

// The claims' measures and verdicts on made-up studies with known answers.
#include "claims.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

namespace leaky::gan {
namespace {

using json = nlohmann::json;

// A variant with one run per seed: rows every 25 steps to 3000 from
// row(seed, step), quality points every 150 steps from fcd(seed, step).
json MakeVariant(const std::string& name, int seeds,
                 const std::function<json(int seed, int step)>& row,
                 const std::function<double(int seed, int step)>& fcd, int classes = 10) {
  json v = {{"name", name}, {"seeds_run", json::array()}, {"history", json::array()},
            {"quality_history", json::array()}, {"final", {{"fcd", 0.0}}}};
  double final_fcd = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    json rows = json::array(), quality = json::array();
    for (int step = 25; step <= 3000; step += 25) {
      json r = row(seed, step);
      r["step"] = step;
      rows.push_back(r);
    }
    for (int step = 150; step <= 3000; step += 150) {
      quality.push_back({{"step", step}, {"fcd", fcd(seed, step)}, {"class_coverage", classes}});
    }
    final_fcd += fcd(seed, 3000) / seeds;
    v["seeds_run"].push_back(seed);
    v["history"].push_back(rows);
    v["quality_history"].push_back(quality);
  }
  v["final"]["fcd"] = final_fcd;
  return v;
}

json Row(double d_loss, double g_loss, double zero2, double nonpos2) {
  return {{"d_loss", d_loss}, {"g_loss", g_loss}, {"sparsity_zero", {0, zero2, 0, zero2}},
          {"sparsity_nonpos", {0.5, nonpos2, 0.5, nonpos2}}};
}

const json& Claim(const json& claims, const std::string& id) {
  for (const json& c : claims) {
    if (c["id"] == id) return c;
  }
  static const json none;
  ADD_FAILURE() << "no claim " << id;
  return none;
}

// The article's picture: ReLU 90% zeros and stuck at chance with its G loss
// climbing; LeakyReLU 30% <= 0, D loss per term 0.45 and learning; PReLU
// oscillating more and reaching LeakyReLU's quality later.
json ArticleStudy(int seeds = 5) {
  const double ln4 = 2 * std::log(2.0);
  json variants = json::array();
  variants.push_back(MakeVariant(
      "relu", seeds,
      [&](int seed, int step) { return Row(ln4, 0.7 + step / 1000.0, 0.9 + 0.01 * seed, 0.9); },
      [](int, int step) { return 1000.0 - step / 30.0; }));
  variants.push_back(MakeVariant(
      "lrelu:0.2", seeds,
      [&](int seed, int step) {
        return Row(step < 1000 ? ln4 : 0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0, 0.3 + 0.005 * seed);
      },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; }));
  variants.push_back(MakeVariant(
      "prelu", seeds,
      [&](int seed, int step) {
        return Row(0.9 + (step / 25 % 2 ? 0.2 : -0.2) + 0.001 * seed, 2.0 - step / 2000.0, 0, 0.3);
      },
      [](int, int step) { return 1000.0 * std::exp(-step / 1000.0) + 10; }));
  return {{"dataset", "mnist"}, {"steps", 3000}, {"variants", variants}};
}

TEST(Claims, ArticlePictureIsReproduced) {
  const json claims = MeasureClaims(ArticleStudy());
  ASSERT_TRUE(claims.is_array());
  for (const char* id : {"relu_sparsity", "relu_sparsity_82", "lrelu_sparsity", "relu_stuck",
                         "lrelu_learns", "lrelu_better_than_relu", "prelu_oscillates"}) {
    EXPECT_EQ(Claim(claims, id)["verdict"], "reproduced") << id << ": " << Claim(claims, id).dump(1);
  }
  // The literal reading of "30% sparsity" (exactly 0) is a row of its own,
  // and LeakyReLU's exact zeros are none.
  EXPECT_EQ(Claim(claims, "lrelu_sparsity_zero")["verdict"], "not reproduced");
  // The paired comparison carries the sign test: 5 of 5 seeds, p = 2 / 32.
  const json& sign = Claim(claims, "lrelu_better_than_relu")["settings"][0]["parts"][0]["sign_test"];
  EXPECT_EQ(sign["positive"], 5);
  EXPECT_NEAR(sign["p"].get<double>(), 0.0625, 1e-12);
  // The window around step 2000 and the per-term loss.
  const json& sparsity = Claim(claims, "relu_sparsity")["settings"][0]["parts"][0];
  EXPECT_NEAR(sparsity["mean"].get<double>(), 0.92, 1e-12);
  const json& stuck = Claim(claims, "relu_stuck")["settings"][0]["parts"][0];
  EXPECT_NEAR(stuck["mean"].get<double>(), std::log(2.0), 1e-12);
  // Only "no norm" variants exist: one setting per claim.
  EXPECT_EQ(Claim(claims, "relu_sparsity")["settings"].size(), 1u);
}

TEST(Claims, OppositePictureIsNotReproduced) {
  json study = ArticleStudy();
  // ReLU at 50% zeros, learning like LeakyReLU; PReLU identical to LeakyReLU.
  study["variants"][0] = MakeVariant(
      "relu", 5, [](int seed, int step) { return Row(0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0.5, 0.5); },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; });
  study["variants"][2] = study["variants"][1];
  study["variants"][2]["name"] = "prelu";
  const json claims = MeasureClaims(study);
  EXPECT_EQ(Claim(claims, "relu_sparsity")["verdict"], "not reproduced");
  EXPECT_EQ(Claim(claims, "relu_stuck")["verdict"], "not reproduced");
  EXPECT_EQ(Claim(claims, "prelu_oscillates")["verdict"], "not reproduced");
  EXPECT_EQ(Claim(claims, "lrelu_learns")["verdict"], "reproduced");
}

TEST(Claims, IntervalAcrossTheBoundIsUnclear) {
  json study = ArticleStudy(3);
  // Seeds at 80%, 90% and 86%: the interval spans 85%.
  const double zeros[] = {0.80, 0.90, 0.86};
  study["variants"][0] = MakeVariant(
      "relu", 3,
      [&](int seed, int step) { return Row(2 * std::log(2.0), 0.7 + step / 1000.0, zeros[seed], 0.9); },
      [](int, int step) { return 1000.0 - step / 30.0; });
  const json claims = MeasureClaims(study);
  const json& part = Claim(claims, "relu_sparsity")["settings"][0]["parts"][0];
  EXPECT_EQ(part["result"], "unclear") << part.dump();
  EXPECT_EQ(Claim(claims, "relu_sparsity")["verdict"], "unclear");
}

// Five seeds at 83, 90, 91, 92 and 93% zeros: mean 0.898, sd 0.0396; the
// Student-t interval (t(0.975, 4) = 2.776) is 0.898 -+ 0.0492, across 85%,
// where a bootstrap over the five values (about 0.867-0.929) would say
// "holds".
TEST(Claims, FiveSeedsAreJudgedByTheStudentTInterval) {
  json study = ArticleStudy();
  const double zeros[] = {0.83, 0.90, 0.91, 0.92, 0.93};
  study["variants"][0] = MakeVariant(
      "relu", 5,
      [&](int seed, int step) { return Row(2 * std::log(2.0), 0.7 + step / 1000.0, zeros[seed], 0.9); },
      [](int, int step) { return 1000.0 - step / 30.0; });
  const json claims = MeasureClaims(study);
  const json& part = Claim(claims, "relu_sparsity")["settings"][0]["parts"][0];
  EXPECT_NEAR(part["ci_low"].get<double>(), 0.898 - 0.0492, 2e-4) << part.dump();
  EXPECT_NEAR(part["ci_high"].get<double>(), 0.898 + 0.0492, 2e-4);
  EXPECT_EQ(part["result"], "unclear");
}

TEST(Claims, FewerThanThreeSeedsGiveNoVerdict) {
  const json claims = MeasureClaims(ArticleStudy(2));
  for (const char* id : {"relu_sparsity", "relu_stuck", "prelu_oscillates"}) {
    EXPECT_EQ(Claim(claims, id)["verdict"], "no verdict") << id;
  }
  EXPECT_EQ(Claim(claims, "relu_sparsity")["settings"][0]["parts"][0]["result"],
            "no result (fewer than 3 seeds)");
}

TEST(Claims, BySetupTableCountsTheSetupsThatReproduce) {
  json opposite = ArticleStudy();
  opposite["variants"][0] = MakeVariant(
      "relu", 5, [](int seed, int step) { return Row(0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0.5, 0.5); },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; });
  const std::string md = ClaimsBySetupMarkdown(
      {{"setup A", MeasureClaims(ArticleStudy())}, {"setup B", MeasureClaims(opposite)}});
  EXPECT_NE(md.find("| claim | setting | setup A | setup B | reproduced in |"), std::string::npos) << md;
  EXPECT_NE(md.find("more than 85% of layer 2's activations exactly zero by about step 2,000 | no "
                    "norm | reproduced | not reproduced | 1 of 2 |"),
            std::string::npos)
      << md;
}

TEST(Claims, NormSettingsThatDisagreeAreMixed) {
  json study = ArticleStudy();
  json bn = ArticleStudy()["variants"];
  bn[0] = MakeVariant(
      "relu+bn", 5, [](int seed, int step) { return Row(1.0, 1.0, 0.4 + 0.01 * seed, 0.5); },
      [](int, int step) { return 1000.0 - step / 30.0; });
  for (json& v : bn) {
    if (v["name"] != "relu+bn") v["name"] = v["name"].get<std::string>() + "+bn";
    study["variants"].push_back(v);
  }
  const json claims = MeasureClaims(study);
  const json& claim = Claim(claims, "relu_sparsity");
  ASSERT_EQ(claim["settings"].size(), 2u);
  EXPECT_EQ(claim["settings"][0]["verdict"], "reproduced");
  EXPECT_EQ(claim["settings"][1]["verdict"], "not reproduced");
  EXPECT_EQ(claim["verdict"], "mixed");
}

TEST(Claims, F16FromThePrecisionTable) {
  json study = ArticleStudy();
  study["precision"] = {{"slope", 0.2}, {"source", "lrelu:0.2/preact_layer2.f32"},
                        {"rows", {{{"format", "f16, native f16 arithmetic"}, {"flushed_to_zero", 0}, {"negatives", 100}},
                                  {{"format", "f16, native, flush-to-zero"}, {"flushed_to_zero", 7}, {"negatives", 100}},
                                  {{"format", "f16, leaky (f32 compute)"}, {"flushed_to_zero", 0}, {"negatives", 100}}}}};
  EXPECT_EQ(Claim(MeasureClaims(study), "f16_underflow")["verdict"], "mixed");
  study["precision"]["rows"][0]["flushed_to_zero"] = 3;
  EXPECT_EQ(Claim(MeasureClaims(study), "f16_underflow")["verdict"], "reproduced");
  study["precision"]["rows"][0]["flushed_to_zero"] = 0;
  study["precision"]["rows"][1]["flushed_to_zero"] = 0;
  EXPECT_EQ(Claim(MeasureClaims(study), "f16_underflow")["verdict"], "not reproduced");
}

TEST(Claims, OnlyForMnistStudiesWithReluAndLeakyRelu) {
  json study = ArticleStudy();
  study["dataset"] = "ring8";
  EXPECT_TRUE(MeasureClaims(study).is_null());
  study = ArticleStudy();
  study["variants"].erase(0);
  EXPECT_TRUE(MeasureClaims(study).is_null());
  // Without PReLU the other claims are still measured.
  study = ArticleStudy();
  study["variants"].erase(2);
  const json claims = MeasureClaims(study);
  for (const json& c : claims) EXPECT_NE(c["id"], "prelu_oscillates");
  EXPECT_EQ(Claim(claims, "relu_sparsity")["verdict"], "reproduced");
}

TEST(Claims, MarkdownHasARowPerSettingAndTheVerdicts) {
  const std::string md = ClaimsMarkdown(MeasureClaims(ArticleStudy()));
  EXPECT_NE(md.find("| claim | setting |"), std::string::npos);
  EXPECT_NE(md.find("bound > 0.85: holds"), std::string::npos) << md;
  EXPECT_NE(md.find("**reproduced**"), std::string::npos);
}

}  // namespace
}  // namespace leaky::gan

// The claims' measures and verdicts on made-up studies with known answers.
#include "claims.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "grid_ink.h"
#include "png.h"
#include "report.h"
#include "tables.h"

namespace leaky::gan {
namespace {

// A variant with one run per seed: rows every 25 steps to 3000 from
// row(seed, step), quality points every 150 steps from fcd(seed, step).
VariantResults MakeVariant(const std::string& name, int seeds,
                           const std::function<Row(int seed, int step)>& row,
                           const std::function<double(int seed, int step)>& fcd, int classes = 10) {
  VariantResults v;
  v.plan.name = name;
  double final_fcd = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    Run run;
    run.variant = name;
    run.seed = seed;
    for (int step = 25; step <= 3000; step += 25) {
      Row r = row(seed, step);
      r.step = step;
      run.history.push_back(r);
    }
    for (int step = 150; step <= 3000; step += 150) {
      Quality q;
      q.fcd = fcd(seed, step);
      q.class_coverage = classes;
      run.quality_history.push_back({step, q});
    }
    final_fcd += fcd(seed, 3000) / seeds;
    v.runs.push_back(run);
  }
  v.final.quality.fcd = final_fcd;
  return v;
}

Row MakeRow(double d_loss, double g_loss, double zero2, double nonpos2) {
  return {
      0,           d_loss, g_loss, 0, 0, 0, 0, {0, zero2, 0, zero2}, {0.5, nonpos2, 0.5, nonpos2},
      {0, 0, 0, 0}};
}

const Claim& Find(const std::optional<std::vector<Claim>>& claims, const std::string& id) {
  if (claims) {
    for (const Claim& c : *claims) {
      if (c.id == id) return c;
    }
  }
  static const Claim none;
  ADD_FAILURE() << "no claim " << id;
  return none;
}

// Part `i` of a claim's first setting, an interval.
const IntervalPart& Interval(const Claim& claim, size_t i = 0) {
  return std::get<IntervalPart>(claim.settings.at(0).parts.at(i));
}

// The article's picture: ReLU 90% zeros and stuck at chance with its G loss
// climbing; LeakyReLU 30% <= 0, D loss per term 0.45 and learning; PReLU
// oscillating more and reaching LeakyReLU's quality later.
Results ArticleStudy(int seeds = 5) {
  const double ln4 = 2 * std::log(2.0);
  Results study;
  study.study.dataset = "mnist";
  study.study.steps = 3000;
  std::vector<VariantResults>& variants = study.variants;
  variants.push_back(MakeVariant(
      "relu", seeds,
      [&](int seed, int step) { return MakeRow(ln4, 0.7 + step / 1000.0, 0.9 + 0.01 * seed, 0.9); },
      [](int, int step) { return 1000.0 - step / 30.0; }));
  variants.push_back(MakeVariant(
      "lrelu:0.2", seeds,
      [&](int seed, int step) {
        return MakeRow(step < 1000 ? ln4 : 0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0, 0.3 + 0.005 * seed);
      },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; }));
  variants.push_back(MakeVariant(
      "prelu", seeds,
      [&](int seed, int step) {
        return MakeRow(0.9 + (step / 25 % 2 ? 0.2 : -0.2) + 0.001 * seed, 2.0 - step / 2000.0, 0, 0.3);
      },
      [](int, int step) { return 1000.0 * std::exp(-step / 1000.0) + 10; }));
  return study;
}

// The crossing table measures "around step 2,000" two thirds into a run
// shorter than 2,100 steps, and says which steps (its header said 1900-2100
// for an 800-step run).
TEST(Tables, CrossingSaysTheWindowOfAShortRun) {
  Results study = ArticleStudy();
  study.study.steps = 800;
  const std::string short_run = CrossingMarkdown({study});
  EXPECT_NE(short_run.find("(steps 507-560)"), std::string::npos) << short_run;
  study.study.steps = 3000;
  const std::string long_run = CrossingMarkdown({study});
  EXPECT_EQ(long_run.find("(steps "), std::string::npos) << long_run;
}

TEST(Claims, ArticlePictureIsReproduced) {
  const auto claims = MeasureClaims(ArticleStudy());
  ASSERT_TRUE(claims);
  for (const char* id : {"relu_sparsity", "relu_sparsity_82", "lrelu_sparsity", "relu_stuck",
                         "lrelu_learns", "lrelu_better_than_relu", "prelu_oscillates"}) {
    EXPECT_EQ(Find(claims, id).verdict, "reproduced") << id << ": " << ClaimsMarkdown(*claims);
  }
  // The literal reading of "30% sparsity" (exactly 0) is a row of its own,
  // and LeakyReLU's exact zeros are none.
  EXPECT_EQ(Find(claims, "lrelu_sparsity_zero").verdict, "not reproduced");
  // The paired comparison carries the sign test: 5 of 5 seeds, p = 2 / 32.
  const std::optional<SignTest>& sign = Interval(Find(claims, "lrelu_better_than_relu")).sign_test;
  ASSERT_TRUE(sign);
  EXPECT_EQ(sign->positive, 5);
  EXPECT_NEAR(sign->p, 0.0625, 1e-12);
  // The window around step 2000 and the per-term loss.
  EXPECT_NEAR(Interval(Find(claims, "relu_sparsity")).mean, 0.92, 1e-12);
  EXPECT_NEAR(Interval(Find(claims, "relu_stuck")).mean, std::log(2.0), 1e-12);
  // Only "no norm" variants exist: one setting per claim.
  EXPECT_EQ(Find(claims, "relu_sparsity").settings.size(), 1u);
}

TEST(Claims, OppositePictureIsNotReproduced) {
  Results study = ArticleStudy();
  // ReLU at 50% zeros, learning like LeakyReLU; PReLU identical to LeakyReLU.
  study.variants[0] = MakeVariant(
      "relu", 5, [](int seed, int step) { return MakeRow(0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0.5, 0.5); },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; });
  study.variants[2] = study.variants[1];
  study.variants[2].plan.name = "prelu";
  const auto claims = MeasureClaims(study);
  EXPECT_EQ(Find(claims, "relu_sparsity").verdict, "not reproduced");
  EXPECT_EQ(Find(claims, "relu_stuck").verdict, "not reproduced");
  EXPECT_EQ(Find(claims, "prelu_oscillates").verdict, "not reproduced");
  EXPECT_EQ(Find(claims, "lrelu_learns").verdict, "reproduced");
}

TEST(Claims, IntervalAcrossTheBoundIsUnclear) {
  Results study = ArticleStudy(3);
  // Seeds at 80%, 90% and 86%: the interval spans 85%.
  const double zeros[] = {0.80, 0.90, 0.86};
  study.variants[0] = MakeVariant(
      "relu", 3,
      [&](int seed, int step) { return MakeRow(2 * std::log(2.0), 0.7 + step / 1000.0, zeros[seed], 0.9); },
      [](int, int step) { return 1000.0 - step / 30.0; });
  const auto claims = MeasureClaims(study);
  const IntervalPart& part = Interval(Find(claims, "relu_sparsity"));
  EXPECT_EQ(part.result, "unclear") << ClaimPartText(part);
  EXPECT_EQ(Find(claims, "relu_sparsity").verdict, "unclear");
}

// Five seeds at 83, 90, 91, 92 and 93% zeros: mean 0.898, sd 0.0396; the
// Student-t interval (t(0.975, 4) = 2.776) is 0.898 -+ 0.0492, across 85%,
// where a bootstrap over the five values (about 0.867-0.929) would say
// "holds".
TEST(Claims, FiveSeedsAreJudgedByTheStudentTInterval) {
  Results study = ArticleStudy();
  const double zeros[] = {0.83, 0.90, 0.91, 0.92, 0.93};
  study.variants[0] = MakeVariant(
      "relu", 5,
      [&](int seed, int step) { return MakeRow(2 * std::log(2.0), 0.7 + step / 1000.0, zeros[seed], 0.9); },
      [](int, int step) { return 1000.0 - step / 30.0; });
  const auto claims = MeasureClaims(study);
  const IntervalPart& part = Interval(Find(claims, "relu_sparsity"));
  EXPECT_NEAR(part.ci_low, 0.898 - 0.0492, 2e-4) << ClaimPartText(part);
  EXPECT_NEAR(part.ci_high, 0.898 + 0.0492, 2e-4);
  EXPECT_EQ(part.result, "unclear");
}

TEST(Claims, FewerThanThreeSeedsGiveNoVerdict) {
  const auto claims = MeasureClaims(ArticleStudy(2));
  for (const char* id : {"relu_sparsity", "relu_stuck", "prelu_oscillates"}) {
    EXPECT_EQ(Find(claims, id).verdict, "no verdict") << id;
  }
  EXPECT_EQ(Interval(Find(claims, "relu_sparsity")).result, "no result (fewer than 3 seeds)");
}

TEST(Claims, BySetupTableCountsTheSetupsThatReproduce) {
  Results opposite = ArticleStudy();
  opposite.variants[0] = MakeVariant(
      "relu", 5, [](int seed, int step) { return MakeRow(0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0.5, 0.5); },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; });
  const std::string md = ClaimsBySetupMarkdown(
      {{"setup A", MeasureClaims(ArticleStudy()).value()}, {"setup B", MeasureClaims(opposite).value()}});
  EXPECT_NE(md.find("| claim | setting | setup A | setup B | reproduced in |"), std::string::npos) << md;
  EXPECT_NE(md.find("more than 85% of layer 2's activations exactly zero by about step 2,000 | no "
                    "norm | reproduced | not reproduced | 1 of 2 |"),
            std::string::npos)
      << md;
}

TEST(Claims, NormSettingsThatDisagreeAreMixed) {
  Results study = ArticleStudy();
  std::vector<VariantResults> bn = ArticleStudy().variants;
  bn[0] = MakeVariant(
      "relu+bn", 5, [](int seed, int step) { return MakeRow(1.0, 1.0, 0.4 + 0.01 * seed, 0.5); },
      [](int, int step) { return 1000.0 - step / 30.0; });
  for (VariantResults& v : bn) {
    if (v.plan.name != "relu+bn") v.plan.name += "+bn";
    study.variants.push_back(v);
  }
  const auto claims = MeasureClaims(study);
  const Claim& claim = Find(claims, "relu_sparsity");
  ASSERT_EQ(claim.settings.size(), 2u);
  EXPECT_EQ(claim.settings[0].verdict, "reproduced");
  EXPECT_EQ(claim.settings[1].verdict, "not reproduced");
  EXPECT_EQ(claim.verdict, "mixed");
}

TEST(Claims, F16FromThePrecisionTable) {
  Results study = ArticleStudy();
  study.precision = PrecisionTable{0.2,
                                   "lrelu:0.2/preact_layer2.f32",
                                   {{"f16, native f16 arithmetic", 100, 0, 0, 0},
                                    {"f16, native, flush-to-zero", 100, 7, 0, 0},
                                    {"f16, leaky (f32 compute)", 100, 0, 0, 0}}};
  EXPECT_EQ(Find(MeasureClaims(study), "f16_underflow").verdict, "mixed");
  study.precision->rows[0].flushed_to_zero = 3;
  EXPECT_EQ(Find(MeasureClaims(study), "f16_underflow").verdict, "reproduced");
  study.precision->rows[0].flushed_to_zero = 0;
  study.precision->rows[1].flushed_to_zero = 0;
  EXPECT_EQ(Find(MeasureClaims(study), "f16_underflow").verdict, "not reproduced");
}

TEST(Claims, OnlyForMnistStudiesWithReluAndLeakyRelu) {
  Results study = ArticleStudy();
  study.study.dataset = "ring8";
  EXPECT_FALSE(MeasureClaims(study));
  study = ArticleStudy();
  study.variants.erase(study.variants.begin());
  EXPECT_FALSE(MeasureClaims(study));
  // Without PReLU the other claims are still measured.
  study = ArticleStudy();
  study.variants.erase(study.variants.begin() + 2);
  const auto claims = MeasureClaims(study);
  ASSERT_TRUE(claims);
  for (const Claim& c : *claims) EXPECT_NE(c.id, "prelu_oscillates");
  EXPECT_EQ(Find(claims, "relu_sparsity").verdict, "reproduced");
}

TEST(Claims, MarkdownHasARowPerSettingAndTheVerdicts) {
  const std::string md = ClaimsMarkdown(MeasureClaims(ArticleStudy()).value());
  EXPECT_NE(md.find("| claim | setting |"), std::string::npos);
  EXPECT_NE(md.find("bound > 0.85: holds"), std::string::npos) << md;
  EXPECT_NE(md.find("**reproduced**"), std::string::npos);
}

// Lab version 4 (docs/study/PLAN-4.md): Holm's adjustment and the
// one-sided t-tests against known values.
TEST(RegisteredClaims, HolmAndOneSidedTests) {
  const std::vector<double> holm = HolmAdjusted({0.01, 0.04, 0.03, 0.005});
  ASSERT_EQ(holm.size(), 4u);
  EXPECT_DOUBLE_EQ(holm[3], 0.02);  // the smallest times 4
  EXPECT_DOUBLE_EQ(holm[0], 0.03);  // then times 3
  EXPECT_DOUBLE_EQ(holm[2], 0.06);  // times 2
  EXPECT_DOUBLE_EQ(holm[1], 0.06);  // 0.04 x 1, raised to keep the order
  Summary s{1.0, 1.0, 0, 0, 0, 0, 4};  // t = 2 with 3 degrees of freedom
  EXPECT_NEAR(PAbove(s, 0.0), 0.069663, 1e-6);
  EXPECT_NEAR(PBelow(s, 2.0), 0.069663, 1e-6);
  EXPECT_NEAR(PAbove(s, 2.0), 1 - 0.069663, 1e-6);
}

// The article's picture with 5 seeds: every primary measure reproduced
// after Holm; the opposite picture refutes ReLU's sparsity; the hinge loss
// leaves the D-loss claims out; values straddling a bound are not shown.
TEST(RegisteredClaims, VerdictWords) {
  Results article = ArticleStudy();
  article.study.lab_version = 4;
  auto claims = MeasureClaims(article);
  ASSERT_TRUE(claims);
  for (const char* id : {"relu_sparsity", "lrelu_sparsity", "relu_stuck", "lrelu_learns",
                         "lrelu_better_than_relu"}) {
    EXPECT_EQ(Find(claims, id).verdict, "reproduced") << id << ": " << ClaimsMarkdown(*claims);
    const IntervalPart& primary = Interval(Find(claims, id));
    ASSERT_TRUE(primary.test) << id;
    EXPECT_LT(primary.test->p_holm, 0.05) << id;
  }
  for (const Claim& c : *claims) EXPECT_NE(c.id, "prelu_oscillates");  // not registered in plan 4

  Results opposite = article;
  opposite.variants[0] = MakeVariant(
      "relu", 5, [](int seed, int step) { return MakeRow(0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0.5 + 0.01 * seed, 0.5); },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; });
  claims = MeasureClaims(opposite);
  EXPECT_EQ(Find(claims, "relu_sparsity").verdict, "refuted") << ClaimsMarkdown(*claims);
  EXPECT_EQ(Find(claims, "relu_stuck").verdict, "refuted") << ClaimsMarkdown(*claims);

  Results hinge = article;
  hinge.study.loss = "hinge";
  claims = MeasureClaims(hinge);
  for (const Claim& c : *claims) {
    EXPECT_NE(c.id, "relu_stuck");
    EXPECT_NE(c.id, "lrelu_learns");
  }
  for (const char* id : {"relu_sparsity", "lrelu_sparsity", "lrelu_better_than_relu"}) {
    EXPECT_EQ(Find(claims, id).verdict, "reproduced") << id;  // still measured under hinge
  }

  // ReLU's zeros at 0.85 +- 0.05 across seeds: neither above 0.85 nor
  // below 0.80 with any confidence.
  Results straddle = article;
  straddle.variants[0] = MakeVariant(
      "relu", 5, [&](int seed, int step) {
        const double ln4 = 2 * std::log(2.0);
        return MakeRow(ln4, 0.7 + step / 1000.0, 0.85 + 0.05 * (seed - 2), 0.9);
      },
      [](int, int step) { return 1000.0 - step / 30.0; });
  claims = MeasureClaims(straddle);
  EXPECT_EQ(Find(claims, "relu_sparsity").verdict, "not shown") << ClaimsMarkdown(*claims);

  // A run too short for the window at step 2,000 has no value there: the
  // claims on it are left out, not "not shown" (and no NaN reaches JSON).
  Results short_runs = article;
  for (VariantResults& v : short_runs.variants) {
    for (leaky::gan::Run& r : v.runs) {
      std::erase_if(r.history, [](const Row& row) { return row.step > 1800 && row.step < 2200; });
    }
  }
  claims = MeasureClaims(short_runs);
  ASSERT_TRUE(claims);
  for (const Claim& c : *claims) {
    EXPECT_NE(c.id, "relu_sparsity");
    EXPECT_NE(c.id, "lrelu_sparsity");
  }
  EXPECT_EQ(Find(claims, "relu_stuck").verdict, "reproduced");
}

// Registered claims across setups: the primary measure, the setups per
// verdict word and each setup's mean with its interval; a claim a setup
// does not measure (the D loss under the hinge loss) is "-" there.
TEST(RegisteredClaims, AcrossSetupsNamesTheSetupsPerVerdict) {
  Results article = ArticleStudy();
  article.study.lab_version = 4;
  Results opposite = article;
  opposite.variants[0] = MakeVariant(
      "relu", 5, [](int seed, int step) { return MakeRow(0.9 + 0.001 * seed, 2.0 - step / 2000.0, 0.5 + 0.01 * seed, 0.5); },
      [](int, int step) { return 1000.0 * std::exp(-step / 500.0) + 10; });
  Results hinge = article;
  hinge.study.loss = "hinge";
  const std::string md = ClaimsBySetupMarkdown({{"A", MeasureClaims(article).value()},
                                                {"B", MeasureClaims(opposite).value()},
                                                {"H", MeasureClaims(hinge).value()}});
  EXPECT_NE(md.find("| claim | primary measure | reproduced in | refuted in | not shown in | A | B | H |"),
            std::string::npos)
      << md;
  // ReLU's zeros: 0.9-0.94 in A and H, 0.5-0.54 in B.
  EXPECT_NE(md.find("| ReLU: more than 85% of layer 2's activations exactly zero by about step 2,000 "
                    "| ReLU layer 2, fraction exactly 0, steps 1900-2100 (train mode); bound > 0.85 "
                    "| A, H | B | - | 0.92 ["),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| ReLU: the discriminator loss stuck near 0.69 | ReLU D loss per term (sum / 2), "
                    "last third; bound 0.643-0.743 | A | B | - | 0.693 ["),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("n=5 | - |\n| LeakyReLU: the discriminator loss falling"), std::string::npos) << md;
}

// The slope sweep pairs each LeakyReLU slope with ReLU by seed; the floors
// table has one row per classifier with the setups that used it.
TEST(Tables, SlopesPairWithReluAndFloorsGroupByClassifier) {
  Results sweep = ArticleStudy();
  sweep.variants.pop_back();  // prelu is not a slope
  VariantResults other = sweep.variants[1];
  other.plan.name = "lrelu:0.05";
  for (leaky::gan::Run& r : other.runs) {
    for (QualityPoint& q : r.quality_history) *q.quality.fcd += 100;
  }
  sweep.variants.push_back(other);
  const std::string slopes = SlopesMarkdown(sweep);
  // ReLU's final FCD is 1000 - 3000 / 30 = 900, LeakyReLU(0.2)'s
  // 1000 e^-6 + 10 = 12.48, 0.05's 100 more; no KID (lab version 3): "-".
  EXPECT_NE(slopes.find("| relu | 5 | 900 [900, 900] | - | - |"), std::string::npos) << slopes;
  EXPECT_NE(slopes.find("| lrelu:0.2 | 5 | 12.5 [12.5, 12.5] | 888 [888, 888] | - |"), std::string::npos)
      << slopes;
  EXPECT_NE(slopes.find("| lrelu:0.05 | 5 | 112 [112, 112] | 788 [788, 788] | - |"), std::string::npos)
      << slopes;
  EXPECT_EQ(slopes.find("prelu"), std::string::npos) << slopes;

  Results a = sweep, b = sweep, c = sweep;
  a.study.classifier = ClassifierInfo{4000, 6000, 0.98, 34.8, "", 4000, 2000,
                                      Summary{27.9, 4.7, 0, 0, 0, 0, 10}, Summary{-6, 19.8, 0, 0, 0, 0, 10}};
  a.study.classifier_checksum = "m";
  b.study.classifier = a.study.classifier;
  b.study.classifier_checksum = "m";
  c.study.classifier = ClassifierInfo{20000, 50000, 0.9069, 10.3, "", 48000, 2000, std::nullopt, std::nullopt};
  c.study.classifier_checksum = "f";
  c.study.dataset = "fashion";
  const std::string floors = FloorsMarkdown({{"a", a}, {"b", b}, {"c", c}});
  EXPECT_NE(floors.find("| MNIST | 98.00% of 6000 | 4000 / 2000 / 4000 | 34.8 | 27.9 ± 4.7 (n=10) | "
                        "-6 ± 19.8 (n=10) | a, b |"),
            std::string::npos)
      << floors;
  EXPECT_NE(floors.find("| Fashion-MNIST | 90.69% of 50000 | 20000 / 2000 / 48000 | 10.3 | - | - | c |"),
            std::string::npos)
      << floors;
}

// With fewer than 3 seeds no claim gets a verdict: the report folds the
// claims to one line (the measurements behind it); with 5 they are a table.
TEST(Report, ClaimsWithoutVerdictsFoldToOneLine) {
  Results one = ArticleStudy(1);
  one.study.lab_version = 4;
  const auto few = MeasureClaims(one);
  ASSERT_TRUE(few);
  const std::string folded = ClaimsSection(*few);
  EXPECT_EQ(folded.find("<h2>The article's claims, measured</h2><details><summary>" +
                        std::to_string(few->size()) + " claims, none with a verdict: fewer than 3 seeds"),
            0u)
      << folded.substr(0, 300);
  Results five = ArticleStudy(5);
  five.study.lab_version = 4;
  const std::string table = ClaimsSection(MeasureClaims(five).value());
  EXPECT_EQ(table.find("<h2>The article's claims, measured</h2><table>"), 0u) << table.substr(0, 300);
  EXPECT_EQ(table.find("none with a verdict"), std::string::npos);
}

// The headline says a tie is a tie, and why a ring8 run covers no mode.
TEST(Report, HeadlineSaysTiesAndWhyNoModeIsCovered) {
  Results ring = ArticleStudy(1);
  ring.study.dataset = "ring8";
  ring.study.steps = 1000;
  for (VariantResults& v : ring.variants) v.summary["modes_covered"] = Summary{0, 0, 0, 0, 0, 0, 1};
  const std::string none = Headline(ring);
  EXPECT_NE(none.find("the variants tie: relu 0, lrelu:0.2 0, prelu 0."), std::string::npos)
      << none;
  EXPECT_NE(none.find("No variant covers any of the 8 modes yet"), std::string::npos) << none;
  EXPECT_NE(none.find("after 1000 steps"), std::string::npos) << none;
  ring.variants[1].summary["modes_covered"] = Summary{3, 0, 0, 0, 0, 0, 1};
  const std::string some = Headline(ring);
  EXPECT_NE(some.find("lrelu:0.2 did best"), std::string::npos) << some;
  EXPECT_EQ(some.find("No variant covers"), std::string::npos) << some;
}

// ArticleStudy with the summary every report table reads (values unused).
Results Reportable(Results study) {
  for (VariantResults& v : study.variants) {
    for (const char* m : {"d_loss", "g_loss", "d_real", "d_fake", "grad_norm_first_layer", "fcd",
                          "class_coverage", "class_kl", "step_ms"}) {
      v.summary[m] = Summary{1, 0, 1, 1, 1, 1, 1};
    }
  }
  return study;
}

// A per-layer chart whose curves stay at 0 says so under it: the flat
// lines are the measure (no channel died), not missing data.
TEST(Report, FlatLayerPanelsAreSaid) {
  const toolkit::VegaScripts scripts{"<script></script>", ""};  // charts written, not drawn
  const std::string html = RenderReport(Reportable(ArticleStudy()), "", scripts);
  // ArticleStudy's rows have no dead channel anywhere; exact zeros only in
  // ReLU's layers 2 and 4.
  EXPECT_NE(html.find("No channel died at any logged step or seed, in any layer or variant: "
                      "the flat lines at 0 are the measure"),
            std::string::npos);
  EXPECT_NE(html.find("No activation exactly 0 at any logged step or seed in 10 of 12 curves ("),
            std::string::npos);
  EXPECT_NE(html.find("relu layers 1, 3;"), std::string::npos);
  // Fractions at or below 0 are never 0: no note.
  EXPECT_EQ(html.find("No activation at or below 0"), std::string::npos);
}

// A sample grid with almost no dark pixel says why it looks blank, with
// the variant's other grids for comparison; a grid with strokes does not.
TEST(Report, BlankSampleGridIsSaid) {
  const std::filesystem::path run =
      std::filesystem::path(::testing::TempDir()) / "leaky_blank_grid_test";
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run / "relu");
  const auto write = [&](const std::string& name, const torch::Tensor& grey) {
    const std::vector<uint8_t> png = EncodePng(grey);
    std::ofstream(run / "relu" / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(png.data()), static_cast<std::streamsize>(png.size()));
    return png;
  };
  torch::Tensor blank = torch::full({40, 40}, 250, torch::kUInt8);
  blank.index_put_({0, 0}, 0);  // one dark pixel in 1,600
  torch::Tensor strokes = torch::full({40, 40}, 255, torch::kUInt8);
  strokes.narrow(0, 0, 4).fill_(10);  // 10% dark
  const std::vector<uint8_t> blank_png = write("samples_step750.png", blank);
  write("samples_step3000.png", strokes);
  ASSERT_TRUE(InkShare(blank_png));
  EXPECT_DOUBLE_EQ(*InkShare(blank_png), 1.0 / 1600);
  EXPECT_FALSE(InkShare({1, 2, 3}));
  EXPECT_FALSE(InkShare(std::vector<uint8_t>(blank_png.begin(), blank_png.end() - 20)));

  const std::string html =
      RenderReport(Reportable(ArticleStudy()), run.string(), toolkit::VegaScripts{});
  const size_t at750 = html.find("<figcaption>step 750");
  const size_t at3000 = html.find("<figcaption>step 3000");
  ASSERT_NE(at750, std::string::npos);
  ASSERT_NE(at3000, std::string::npos);
  EXPECT_EQ(html.find("almost blank: 0.1% of its pixels dark (this variant's other grids: 10%): "
                      "the generator drew almost nothing at this step",
                      at750),
            at750 + std::string("<figcaption>step 750<br><span class=\"note\">").size());
  const std::string plain = "<figcaption>step 3000</figcaption>";
  EXPECT_EQ(html.substr(at3000, plain.size()), plain);
  std::filesystem::remove_all(run);
}

// One Holm family per study: with both norm settings, ten claims share it,
// so a p that passes alone in five can fail in ten.
TEST(RegisteredClaims, OneFamilyAcrossNormSettings) {
  Results both = ArticleStudy();
  both.study.lab_version = 4;
  const size_t n = both.variants.size();
  for (size_t i = 0; i < n; ++i) {
    VariantResults bn = both.variants[i];
    bn.plan.name += "+bn";
    both.variants.push_back(bn);
  }
  const auto claims = MeasureClaims(both);
  ASSERT_TRUE(claims);
  const Claim& sparsity = Find(claims, "relu_sparsity");
  ASSERT_EQ(sparsity.settings.size(), 2u);
  // Ten members instead of five: the same claim's Holm p grows.
  Results single = ArticleStudy();
  single.study.lab_version = 4;
  const auto alone = MeasureClaims(single);
  const auto holm = [](const Claim& c) { return std::get<IntervalPart>(c.settings[0].parts[0]).test->p_holm; };
  const double in_five = holm(Find(alone, "relu_sparsity")), in_ten = holm(sparsity);
  ASSERT_GT(in_five, 0.0);
  ASSERT_LT(in_ten, 1.0);
  EXPECT_GT(in_ten, in_five);
}

}  // namespace
}  // namespace leaky::gan

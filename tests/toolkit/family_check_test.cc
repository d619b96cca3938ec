// The family's check (toolkit/family_check.h) on kernels written as a port
// with each fault would write them: the finding names the fault, a right
// kernel passes, and the golden equals the library's own call.
#include "family_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "family_golden.h"
#include "layout.h"
#include "leaky/leaky.h"

namespace leaky::toolkit {
namespace {

FamilyProblem Problem(const std::string& op, bool backward, leaky_dtype dtype, uint64_t elements,
                      nlohmann::json scalars = nlohmann::json::object(), std::string dist = "") {
  FamilyDescription d;
  d.op = op;
  d.backward = backward;
  d.dtype = dtype;
  d.elements = elements;
  d.channels = 4;
  d.seed = 3;
  d.distribution = dist.empty() ? FamilyDefaultDistribution(op, backward) : dist;
  d.scalars = std::move(scalars);
  return MakeFamilyProblem(d);
}

std::vector<float> Floats(const Operand& o) {
  std::vector<float> v(o.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(o.values[i]);
  return v;
}

Operand FromFloats(const std::string& name, const std::vector<float>& v) {
  std::vector<uint64_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t b;
    std::memcpy(&b, &v[i], 4);
    bits[i] = b;
  }
  return MakeOperand(name, LEAKY_F32, std::move(bits));
}

std::string FirstKind(const CheckResult& r) {
  return r.findings.empty() ? "pass" : r.findings[0].kind;
}

Layout EvenPlan(uint64_t n, uint32_t cores, uint64_t tile) {
  PlanOptions o;
  o.preset = "npu";
  o.split = "even";
  o.cores = cores;
  o.tile_elems = tile;
  o.buffers = 2;
  return MakeLayout(o, LEAKY_F32, n);
}

TEST(FamilyGolden, IsTheLibrarysCall) {
  const FamilyProblem p = Problem("prelu", false, LEAKY_F32, 4096);
  ASSERT_EQ(p.inputs.size(), 2u);
  std::vector<float> x = Floats(p.inputs[0]), w = Floats(p.inputs[1]), y(x.size());
  ASSERT_EQ(leaky_prelu_forward(LEAKY_F32, p.outer, p.channels, p.inner, x.data(), w.data(),
                                y.data(), nullptr),
            LEAKY_OK);
  EXPECT_EQ(FromFloats("y", y).bits, p.golden[0].bits);
}

TEST(FamilyCheck, ARightKernelPasses) {
  const FamilyProblem p = Problem("bias_act", false, LEAKY_F32, 4096, {{"clamp", 0.5}});
  const CheckResult r = CheckFamily(p, {p.golden[0]}, 0, false, std::nullopt);
  EXPECT_TRUE(r.pass);
  EXPECT_TRUE(r.findings.empty());
}

// PReLU ported from a channels-last kernel: the weight of element i is w[i % C].
TEST(FamilyCheck, PreluWeightsChannelsLast) {
  const FamilyProblem p = Problem("prelu", false, LEAKY_F32, 4096);
  const std::vector<float> x = Floats(p.inputs[0]), w = Floats(p.inputs[1]);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : w[i % p.channels] * x[i];
  const CheckResult r = CheckFamily(p, {FromFloats("y", y)}, 0, false, std::nullopt);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(FirstKind(r), "weight_axis");
  ASSERT_EQ(r.findings.size(), 1u);
}

// PReLU backward whose dweight keeps only the first outer slice's sum (the
// loop over the batch forgot to accumulate): dx right, dweight a part.
TEST(FamilyCheck, PreluWeightGradientOfOneSlice) {
  const FamilyProblem p = Problem("prelu", true, LEAKY_F32, 4096);
  const std::vector<float> dy = Floats(p.inputs[0]), x = Floats(p.inputs[1]);
  std::vector<double> sums(p.channels, 0.0);
  for (uint64_t c = 0; c < p.channels; ++c) {
    for (uint64_t k = 0; k < p.inner; ++k) {
      const uint64_t i = c * p.inner + k;  // outer index 0 only
      sums[c] += x[i] > 0 ? 0.0f : x[i] * dy[i];
    }
  }
  std::vector<float> dw(sums.begin(), sums.end());
  const CheckResult r =
      CheckFamily(p, {p.golden[0], FromFloats("dweight", dw)}, 0, false, std::nullopt);
  EXPECT_EQ(FirstKind(r), "weight_grad_not_reduced");
}

// ELU as exp(x) - 1: wrong near 0, within exp's own rounding elsewhere.
TEST(FamilyCheck, EluWithExpMinusOne) {
  const FamilyProblem p = Problem("elu", false, LEAKY_F32, 10007);
  const std::vector<float> x = Floats(p.inputs[0]);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] > 0 ? x[i] : std::exp(x[i]) - 1.0f;
  const CheckResult r = CheckFamily(p, {FromFloats("y", y)}, 0, false, std::nullopt);
  EXPECT_EQ(FirstKind(r), "expm1_missing");
}

// bias_act clamping the activation, then multiplying by the gain.
TEST(FamilyCheck, BiasActClampBeforeGain) {
  const FamilyProblem p = Problem("bias_act", false, LEAKY_F32, 4096, {{"clamp", 0.5}});
  const std::vector<float> x = Floats(p.inputs[0]), b = Floats(p.inputs[1]);
  const float gain = static_cast<float>(std::sqrt(2.0)), clamp = 0.5f;
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float v = x[i] + b[(i / p.inner) % p.channels];
    const float a = v > 0 ? v : v * 0.2f;
    y[i] = std::fmin(std::fmax(a, -clamp), clamp) * gain;
    if (std::isnan(a)) y[i] = a * gain;
  }
  const CheckResult r = CheckFamily(p, {FromFloats("y", y)}, 0, false, std::nullopt);
  EXPECT_EQ(FirstKind(r), "gain_before_clamp");
}

// Dropout's mask packed most significant bit first.
TEST(FamilyCheck, DropoutMaskMostSignificantBitFirst) {
  const FamilyProblem p = Problem("bias_act_dropout", false, LEAKY_F32, 4096);
  std::vector<uint64_t> mask(p.golden[1].size(), 0);
  for (uint64_t i = 0; i < p.elements(); ++i) {
    const bool kept = (p.golden[1].bits[i / 8] >> (i % 8)) & 1;
    if (kept) mask[i / 8] |= uint64_t{0x80} >> (i % 8);
  }
  const CheckResult r =
      CheckFamily(p, {p.golden[0], MakeMask("mask", mask)}, 0, false, std::nullopt);
  EXPECT_EQ(FirstKind(r), "mask_bit_order");
}

// RReLU with each core calling the library on its own range with the
// call's offset (0): each core's stream starts again.
TEST(FamilyCheck, RreluStreamPerCore) {
  const uint64_t n = 8192;
  const FamilyProblem p = Problem("rrelu", false, LEAKY_F32, n, {{"seed", 7}});
  const Layout plan = EvenPlan(n, 4, 512);
  const std::vector<float> x = Floats(p.inputs[0]);
  std::vector<float> y(n), noise(n);
  const leaky_rrelu_params params{0.125, 1.0 / 3, 1, 7, 0};
  for (uint32_t core = 0; core < plan.cores(); ++core) {
    const uint64_t s = plan.core_start[core], l = plan.core_length[core];
    ASSERT_EQ(leaky_rrelu_forward(LEAKY_F32, l, x.data() + s, y.data() + s, noise.data() + s,
                                  &params, nullptr),
              LEAKY_OK);
  }
  const CheckResult r =
      CheckFamily(p, {FromFloats("y", y), FromFloats("noise", noise)}, 0, false, plan);
  EXPECT_EQ(FirstKind(r), "stream_restart");
  ASSERT_FALSE(r.findings.empty());
  EXPECT_NE(r.findings[0].message.find("restarted at elements 2048, 4096, 6144"), std::string::npos)
      << r.findings[0].message;
}

// A fault no model has (dx of PReLU from y in place of x): said unexplained.
TEST(FamilyCheck, AFaultNoModelHasIsAMismatch) {
  const FamilyProblem p = Problem("prelu", true, LEAKY_F32, 4096);
  const std::vector<float> dy = Floats(p.inputs[0]), x = Floats(p.inputs[1]),
                           w = Floats(p.inputs[2]);
  std::vector<float> dx(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float wi = w[(i / p.inner) % p.channels];
    const float yi = x[i] > 0 ? x[i] : wi * x[i];
    dx[i] = yi > 0 ? dy[i] : wi * dy[i] * 0.5f;  // a wrong constant
  }
  const CheckResult r = CheckFamily(p, {FromFloats("dx", dx), p.golden[1]}, 0, false, std::nullopt);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(FirstKind(r), "mismatch");
}

TEST(FamilyScalars, RefusedInOneLine) {
  EXPECT_THROW(ParseFamilyScalars("prelu", false, {{"alpha", 1}}, nullptr), std::invalid_argument);
  EXPECT_THROW(ParseFamilyScalars("rrelu", false, {{"lower", 0.5}, {"upper", 0.25}}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(ParseFamilyScalars("bias_act_dropout", false, {{"dropout_p", 1.0}}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(ParseFamilyScalars("bias_act", false, {{"act", "gelu"}}, nullptr),
               std::invalid_argument);
  EXPECT_THROW(ParseFamilyScalars("bias_act_dropout", true, {{"seed", 1}}, nullptr),
               std::invalid_argument);
  EXPECT_NO_THROW(
      ParseFamilyScalars("bias_act", false, {{"clamp", nullptr}, {"act", "relu"}}, nullptr));
}

}  // namespace
}  // namespace leaky::toolkit

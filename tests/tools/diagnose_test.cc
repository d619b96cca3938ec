// Each classic fault is planted into a correct output; the diagnosis must
// name it, with the index, core, tile or slope it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "diagnose.h"
#include "leaky/reference.hpp"
#include "plan_options.h"

namespace leaky::tools {
namespace {

constexpr double kSlope = 0.2;
constexpr uint64_t kN = 10007;

Array MakeArray(const std::vector<float16>& values) {
  Array a;
  for (float16 v : values) {
    a.bits.push_back(v.bits);
    a.values.push_back(static_cast<float>(v));
  }
  return a;
}

struct Fixture {
  std::vector<float16> x, golden;
  CheckInput input;
  Fixture() {
    std::mt19937 rng(3);
    std::normal_distribution<float> normal(0.0f, 2.0f);
    for (uint64_t i = 0; i < kN; ++i) {
      // Every 7th value is a tiny negative whose product underflows in f16.
      x.push_back(float16(i % 7 == 3 ? -1.5e-4f : normal(rng)));
      golden.push_back(reference::leaky_relu_forward(x.back(), kSlope));
    }
    input.dtype = LEAKY_F16;
    input.negative_slope = kSlope;
    input.input = MakeArray(x);
    input.golden = MakeArray(golden);
    input.max_ulp = DefaultMaxUlp(LEAKY_F16);
  }
  CheckResult Run(const std::vector<float16>& output) {
    input.output = MakeArray(output);
    return Diagnose(input);
  }
};

bool Has(const CheckResult& r, const std::string& kind) {
  for (const Finding& f : r.findings) {
    if (f.kind == kind) return true;
  }
  return false;
}
const Finding& Get(const CheckResult& r, const std::string& kind) {
  for (const Finding& f : r.findings) {
    if (f.kind == kind) return f;
  }
  throw std::runtime_error("no finding " + kind);
}

leaky_tiling NpuPlan() {
  PlanOptions options;
  options.preset = "npu";
  options.cores = 8;
  options.buffer_bytes = 4096;  // small tiles, so 10007 elements make many
  const leaky_plan_request request = MakePlanRequest(options, LEAKY_F16, kN);
  leaky_tiling tiling;
  EXPECT_EQ(leaky_plan_tiling(&request, &tiling), LEAKY_OK);
  return tiling;
}

TEST(Diagnose, CorrectOutputPasses) {
  Fixture f;
  const CheckResult r = f.Run(f.golden);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_TRUE(r.findings.empty());
}

TEST(Diagnose, AllZeros) {
  Fixture f;
  const CheckResult r = f.Run(std::vector<float16>(kN, float16(0.0f)));
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.findings.front().kind, "all_zeros");
}

TEST(Diagnose, TailNotProcessedMapsToTheLastCoresRemainder) {
  Fixture f;
  f.input.plan = NpuPlan();
  // The last core's last tile never ran: the output there is the untouched
  // input (an in-place kernel).
  uint64_t start, length;
  const uint32_t last = f.input.plan->cores_used - 1;
  const uint64_t tiles = leaky_tiling_tile_count(&*f.input.plan, last);
  leaky_tiling_tile_range(&*f.input.plan, last, tiles - 1, &start, &length);
  std::vector<float16> out = f.golden;
  for (uint64_t i = start; i < kN; ++i) out[i] = f.x[i];
  const CheckResult r = f.Run(out);
  const Finding& tail = Get(r, "tail_not_processed");
  EXPECT_EQ(tail.details["index"].get<uint64_t>(), start);
  EXPECT_EQ(tail.details["core"].get<uint32_t>(), last);
  EXPECT_EQ(tail.details["tile"].get<uint64_t>(), tiles - 1);
  EXPECT_NE(tail.message.find("last core's remainder"), std::string::npos) << tail.message;
  EXPECT_NE(tail.message.find("untouched input"), std::string::npos) << tail.message;
}

TEST(Diagnose, WrongSlopeIsEstimated) {
  Fixture f;
  std::vector<float16> out;
  for (float16 v : f.x) out.push_back(reference::leaky_relu_forward(v, 0.01));
  // Keep the tiny values out of it: those would underflow either way.
  for (uint64_t i = 3; i < kN; i += 7) out[i] = f.golden[i];
  const CheckResult r = f.Run(out);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().kind, "slope_mismatch") << r.findings.front().message;
  EXPECT_NEAR(Get(r, "slope_mismatch").details["estimated_slope"].get<double>(), 0.01, 2e-4);
}

TEST(Diagnose, F16UnderflowInTheSlopeMultiply) {
  Fixture f;
  // A native-f16 kernel: slope rounded to f16, product flushed to zero when
  // it leaves f16's normal range (FTZ).
  std::vector<float16> out;
  const float slope16 = static_cast<float>(float16(static_cast<float>(kSlope)));
  for (float16 v : f.x) {
    const float x = static_cast<float>(v);
    float y = x > 0 ? x : static_cast<float>(float16(x * slope16));
    if (std::fabs(y) < 6.103515625e-05f) y = 0.0f * y;
    out.push_back(float16(y));
  }
  const CheckResult r = f.Run(out);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().kind, "f16_underflow") << r.findings.front().message;
}

TEST(Diagnose, PeriodicErrorsMatchTheTileStride) {
  Fixture f;
  f.input.plan = NpuPlan();
  const uint64_t tile = f.input.plan->tile_length;
  std::vector<float16> out = f.golden;
  // Each tile's first 16 elements come from the wrong offset.
  for (uint64_t base = 0; base + 16 < kN; base += tile) {
    for (uint64_t i = base; i < base + 16; ++i) out[i] = float16(static_cast<float>(out[i]) + 100.0f);
  }
  const CheckResult r = f.Run(out);
  const Finding& periodic = Get(r, "periodic");
  EXPECT_EQ(periodic.details["period"].get<uint64_t>(), tile);
  EXPECT_EQ(periodic.details["stride"].get<std::string>(), "tile");
}

TEST(Diagnose, BlockOfZeros) {
  Fixture f;
  std::vector<float16> out = f.golden;
  for (uint64_t i = 1000; i < 1064; ++i) out[i] = float16(0.0f);
  const CheckResult r = f.Run(out);
  const Finding& block = Get(r, "zero_block");
  EXPECT_GE(block.details["start"].get<uint64_t>(), 1000u);
  EXPECT_LE(block.details["start"].get<uint64_t>() + block.details["length"].get<uint64_t>(), 1064u);
  EXPECT_GE(block.details["length"].get<uint64_t>(), 40u);  // zeros in the golden shorten it
}

TEST(Diagnose, NaNLostAndUnexpected) {
  Fixture f;
  f.x[10] = float16::from_bits(0x7e00);
  f.golden[10] = reference::leaky_relu_forward(f.x[10], kSlope);
  f.input.input = MakeArray(f.x);
  f.input.golden = MakeArray(f.golden);
  std::vector<float16> out = f.golden;
  out[10] = float16(0.0f);                // lost NaN
  out[20] = float16::from_bits(0xfe00);   // NaN from nowhere
  const CheckResult r = f.Run(out);
  EXPECT_EQ(Get(r, "lost_nan").details["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(Get(r, "unexpected_nan").details["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(r.mismatches, 2u);
}

TEST(Diagnose, UlpToleranceIsHonoured) {
  Fixture f;
  std::vector<float16> out = f.golden;
  out[5] = float16::from_bits(static_cast<uint16_t>(out[5].bits + 1));  // 1 ulp
  EXPECT_TRUE(f.Run(out).pass);
  f.input.max_ulp = 0;
  const CheckResult r = f.Run(out);
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(r.first_mismatch, 5);
  EXPECT_EQ(r.max_ulp, 1u);
}

TEST(GoldenIo, RejectsBadDescriptionsAndSizes) {
  EXPECT_THROW(DescriptionFromJson("{"), GoldenError);
  EXPECT_THROW(DescriptionFromJson("[]"), GoldenError);
  EXPECT_THROW(DescriptionFromJson(R"({"format":"leaky-golden-1","op":"x","dtype":"f32",
      "shape":[2],"elements":2,"negative_slope":0.1})"), GoldenError);
  EXPECT_THROW(DescriptionFromJson(R"({"format":"leaky-golden-1","op":"leaky_relu_forward",
      "dtype":"f32","shape":[2,3],"elements":5,"negative_slope":0.1})"), GoldenError);
  GoldenDescription d;
  d.dtype = LEAKY_BF16;
  d.shape = {3, 2};
  d.elements = 6;
  const GoldenDescription back = DescriptionFromJson(DescriptionToJson(d));
  EXPECT_EQ(back.dtype, LEAKY_BF16);
  EXPECT_EQ(back.elements, 6u);
  EXPECT_THROW(DecodeArray("x", std::vector<uint8_t>(7), LEAKY_F32, 2), GoldenError);
  EXPECT_THROW(DecodeArray("x", std::vector<uint8_t>(9), LEAKY_F32, 2), GoldenError);
  EXPECT_EQ(DecodeArray("x", std::vector<uint8_t>(8), LEAKY_F32, 2).bits.size(), 2u);
  EXPECT_EQ(UlpDistance(LEAKY_F32, 0x80000000u, 0u), 0u);
  EXPECT_EQ(UlpDistance(LEAKY_F16, 0x8001u, 0x0001u), 2u);
  // The fuzzer's find: f64 extremes of opposite sign must not overflow.
  EXPECT_EQ(UlpDistance(LEAKY_F64, 0x7fffffffffffffffull, 0xffffffffffffffffull),
            0xfffffffffffffffeull);
}

}  // namespace
}  // namespace leaky::tools

// 8-bit kernels written the way an engineer writes their bugs - a
// requantization with std::round, an (int) cast, float arithmetic, no
// clamp, the wrong zero point, a non-saturating or truncating fp8
// conversion, a tile never written - run on `leaky golden`'s data (every
// byte value) and diagnosed: each names its mistake in its own words, a
// correct kernel passes, and what no rule explains is only described.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "diagnose.h"
#include "eight_bit_data.h"
#include "golden_data.h"
#include "layout.h"
#include "leaky/leaky.hpp"
#include "plan_options.h"

namespace leaky::toolkit {
namespace {

constexpr uint64_t kN = 10007;

// Golden data of one 8-bit type, its plan (8 cores, 256-byte tiles), and a
// kernel's output run through the diagnosis.
struct Case {
  GoldenDescription d;
  GoldenArrays a;
  Layout plan;
  explicit Case(const leaky_q8_params& q, double slope = 0.2, bool backward = false) {
    d.op = backward ? "leaky_relu_backward" : "leaky_relu_forward";
    d.elements = kN;
    d.shape = {kN};
    d.negative_slope = slope;
    d.seed = 9;
    d.eight_bit = q;
    a = MakeGolden(d);
    PlanOptions options;
    options.preset = "npu";
    options.cores = 8;
    options.split = "even";
    options.tile_elems = 256;
    options.op = backward ? "backward" : "forward";
    plan = MakeByteLayout(options, kN);
  }
  const leaky_q8_params& q() const { return *d.eight_bit; }
  Array Bytes(const std::vector<uint64_t>& bits, bool output) const {
    return DecodeBytes("test", std::vector<uint8_t>(bits.begin(), bits.end()), q(), output, kN);
  }
  // The kernel y = f(x) (forward) or dx = f(dy, saved x), element by element.
  std::vector<uint64_t> Kernel(const std::function<uint8_t(uint8_t x, uint8_t dy)>& f) const {
    std::vector<uint64_t> out(kN);
    for (uint64_t i = 0; i < kN; ++i) {
      out[i] = f(static_cast<uint8_t>(a.x[i]), a.dy.empty() ? 0 : static_cast<uint8_t>(a.dy[i]));
    }
    return out;
  }
  CheckResult Run(const std::vector<uint64_t>& output) const {
    CheckInput in;
    in.backward = d.op == "leaky_relu_backward";
    in.negative_slope = d.negative_slope;
    in.eight_bit = q();
    in.input = Bytes(a.x, false);
    if (in.backward) in.dy = Bytes(a.dy, false);
    in.golden = Bytes(a.golden, true);
    in.output = Bytes(output, true);
    in.plan = plan;
    return Diagnose(in);
  }
};

std::string Kinds(const CheckResult& r) {
  std::string kinds;
  for (const Finding& f : r.findings) kinds += (kinds.empty() ? "" : ",") + f.kind;
  return kinds;
}
std::string Text(const CheckResult& r) {
  std::string all;
  for (const Finding& f : r.findings) all += "\n- " + f.kind + ": " + f.message;
  return all;
}
// Exactly these findings, and the first's message holds every one of `words`.
void Expect(const CheckResult& r, const std::string& kinds, const std::vector<std::string>& words) {
  EXPECT_FALSE(r.pass);
  ASSERT_EQ(Kinds(r), kinds) << Text(r);
  for (const std::string& w : words) {
    EXPECT_NE(r.findings.front().message.find(w), std::string::npos)
        << "no '" << w << "' in" << Text(r);
  }
}

// ----------------------------------------------------------- qu8 / qs8

// A quantized LeakyReLU as kernels write it: dequantize, apply, requantize
// with `round`, add the zero point, clamp (or not), cast.
struct Quantized {
  leaky_q8_params q;
  double slope;
  double (*round)(double) = [](double t) { return std::nearbyint(t); };
  bool clamp = true, clamp_to_type_only = false, input_zero_point_on_output = false;

  int Code(uint8_t b) const { return q.type == LEAKY_QS8 ? static_cast<int8_t>(b) : b; }
  uint8_t operator()(uint8_t x, uint8_t) const {
    const double v = q.input.scale * (Code(x) - q.input.zero_point);
    const double y = v > 0 ? v : v * slope;
    long r = static_cast<long>(round(y / q.output.scale)) +
             (input_zero_point_on_output ? q.input.zero_point : q.output.zero_point);
    if (clamp_to_type_only)
      r = std::clamp(r, q.type == LEAKY_QS8 ? -128L : 0L, q.type == LEAKY_QS8 ? 127L : 255L);
    else if (clamp)
      r = std::clamp<long>(r, q.output_min, q.output_max);
    return static_cast<uint8_t>(r);
  }
};

// With slope 0.25 every step of the double arithmetic is exact (binary
// scales), so the kernel computes the exact value and rounds it once.
TEST(EightBitDiagnosis, CorrectQuantizedKernelPasses) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    const Case c(DefaultQ8Params(type), 0.25);
    const CheckResult r = c.Run(c.Kernel(Quantized{c.q(), 0.25}));
    EXPECT_TRUE(r.pass) << Type8Name(type) << Text(r);
    EXPECT_TRUE(r.findings.empty()) << Text(r);
  }
}

// The same kernel with slope 0.2: 0.2 is a little above 1/5 as a double,
// so 0.3 k (k = -5, -15, ...) lies just past halfway, and double
// arithmetic rounds it onto the tie.
TEST(EightBitDiagnosis, DoubleArithmeticOnNearTies) {
  const Case c(DefaultQ8Params(LEAKY_QU8));
  const CheckResult r = c.Run(c.Kernel(Quantized{c.q(), 0.2}));
  Expect(r, "float_arithmetic",
         {"requantized in floating point (f32 and double give the same bytes here)", "round once"});
  EXPECT_EQ(r.findings.front().details["arithmetic"], "floating_point");
}

TEST(EightBitDiagnosis, StdRoundRoundsTiesAway) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    const Case c(DefaultQ8Params(type));
    Quantized k{c.q(), 0.2};
    k.round = [](double t) { return std::round(t); };
    const CheckResult r = c.Run(c.Kernel(k));
    Expect(r, "rounding_rule",
           {"halfway cases are rounded away from zero", "std::round", "index "});
    EXPECT_EQ(r.findings.front().details["rounding"], "ties_away_from_zero");
    // Every odd k gives a tie in 1.5 k, and half of them round apart: 32
    // values of 256, an eighth of the elements.
    EXPECT_GT(r.mismatches, kN / 10);
  }
}

TEST(EightBitDiagnosis, IntCastTruncates) {
  const Case c(DefaultQ8Params(LEAKY_QU8));
  Quantized k{c.q(), 0.2};
  k.round = [](double t) { return static_cast<double>(static_cast<long>(t)); };
  const CheckResult r = c.Run(c.Kernel(k));
  Expect(r, "rounding_rule", {"truncated toward zero", "(int) cast"});
  EXPECT_EQ(r.findings.front().details["rounding"], "toward_zero");
}

TEST(EightBitDiagnosis, FloorRoundsDown) {
  const Case c(DefaultQ8Params(LEAKY_QS8));
  Quantized k{c.q(), 0.2};
  k.round = [](double t) { return std::floor(t); };
  Expect(c.Run(c.Kernel(k)), "rounding_rule", {"rounded down"});
}

TEST(EightBitDiagnosis, RequantizedInFloat) {
  // Scales whose exact quotients lie just past halfway, where f32's
  // roundings land on the other side.
  leaky_q8_params q = DefaultQ8Params(LEAKY_QU8);
  q.input = {0.1, 128};
  q.output = {0.2, 40};
  const Case c(q);
  const auto kernel = [&](uint8_t x, uint8_t) -> uint8_t {
    const float v = static_cast<float>(q.input.scale) * static_cast<float>(x - 128);
    const float y = v > 0 ? v : v * 0.2f;
    return static_cast<uint8_t>(
        std::clamp(40 + std::lrint(y / static_cast<float>(q.output.scale)), 0L, 255L));
  };
  Expect(c.Run(c.Kernel(kernel)), "float_arithmetic", {"requantized in f32", "round once"});
}

TEST(EightBitDiagnosis, NoClampWraps) {
  leaky_q8_params q = DefaultQ8Params(LEAKY_QU8);
  q.output.scale = 0.03125;  // positives reach 40 + 381: past 255
  const Case c(q);
  Quantized k{q, 0.2};
  k.clamp = false;
  Expect(c.Run(c.Kernel(k)), "clamp_missing", {"without clamping it to [0, 255]", "wrapped"});
}

TEST(EightBitDiagnosis, OutputClampIgnored) {
  leaky_q8_params q = DefaultQ8Params(LEAKY_QS8);
  q.output_min = -100;
  q.output_max = 60;  // a ReLU6-like clamp
  const Case c(q);
  Quantized k{q, 0.2};
  k.clamp_to_type_only = true;
  // No result passes qs8's own range, so none at all is the same here.
  Expect(c.Run(c.Kernel(k)), "clamp_missing",
         {"clamped to qs8's range -128..127 or not at all (the same bytes here)", "[-100, 60]"});
}

TEST(EightBitDiagnosis, InputZeroPointOnTheOutput) {
  const Case c(DefaultQ8Params(LEAKY_QU8));
  Quantized k{c.q(), 0.2};
  k.input_zero_point_on_output = true;
  Expect(c.Run(c.Kernel(k)), "output_zero_point", {"input's zero point 128", "output's 40"});
}

// (int)(t + 0.5): ties away on the positive side, and on the negative side
// a rounding up no rule of the models gives. Ties-away fits the positive
// ties, a fifth of the errors: no cause is named, the errors are described.
TEST(EightBitDiagnosis, AddHalfAndCastIsDescribedNotGuessed) {
  const Case c(DefaultQ8Params(LEAKY_QU8));
  Quantized k{c.q(), 0.2};
  k.round = [](double t) { return static_cast<double>(static_cast<long>(t + 0.5)); };
  const CheckResult r = c.Run(c.Kernel(k));
  Expect(r, "one_step_off",
         {"one step off the golden", "above, 0 below", "where the exact value lies halfway",
          "none of the rules tried"});
  EXPECT_EQ(r.findings.front().details["below"], 0);
  EXPECT_EQ(r.findings.front().details["count"], r.mismatches);
}

// Geometry works in elements of one byte: a tile never written, results a
// few places along.
TEST(EightBitDiagnosis, TileNeverWritten) {
  const Case c(DefaultQ8Params(LEAKY_QU8));
  std::vector<uint64_t> out = c.a.golden;
  uint64_t start, length;
  c.plan.TileRange(2, 1, &start, &length);
  std::fill(out.begin() + static_cast<long>(start), out.begin() + static_cast<long>(start + length),
            0);
  const CheckResult r = c.Run(out);
  ASSERT_EQ(Kinds(r), "not_written") << Text(r);
  EXPECT_NE(r.findings.front().message.find("zeros"), std::string::npos) << Text(r);
}

TEST(EightBitDiagnosis, ResultsShiftedWithinEachCore) {
  const Case c(DefaultQ8Params(LEAKY_QS8));
  std::vector<uint64_t> out = c.a.golden;
  for (uint32_t core = 0; core < c.plan.cores(); ++core) {
    const uint64_t s = c.plan.core_start[core], e = s + c.plan.core_length[core];
    for (uint64_t i = s; i + 5 < e; ++i) out[i] = c.a.golden[i + 5];
  }
  const CheckResult r = c.Run(out);
  EXPECT_FALSE(r.pass);
  ASSERT_FALSE(r.findings.empty());
  EXPECT_EQ(r.findings.front().kind, "misplaced") << Text(r);
  EXPECT_NE(r.findings.front().message.find("i+5"), std::string::npos) << Text(r);
}

// What nothing explains is said with its bytes and real values.
TEST(EightBitDiagnosis, UnexplainedShowsBytesAndValues) {
  const Case c(DefaultQ8Params(LEAKY_QU8));
  std::vector<uint64_t> out = c.a.golden;
  for (uint64_t i = 100; i < 5000; i += 397) out[i] = (out[i] + 77) & 0xff;
  const CheckResult r = c.Run(out);
  ASSERT_EQ(Kinds(r), "mismatch") << Text(r);
  const std::string& m = r.findings.front().message;
  EXPECT_NE(m.find("index 100: input 0x"), std::string::npos) << m;
  EXPECT_NE(m.find("should give 0x"), std::string::npos) << m;
  EXPECT_NE(m.find("the output has 0x"), std::string::npos) << m;
  EXPECT_EQ(r.findings.front().details["examples"].size(), 4u);
}

// ----------------------------------------------------------------- fp8

uint8_t ToFp8(leaky_type8 type, float v, int saturate) {
  uint8_t out = 0;
  leaky_fp8_from_f32(type, 1, &v, &out, saturate);
  return out;
}
float FromFp8(leaky_type8 type, uint8_t b) {
  float v = 0;
  leaky_fp8_to_f32(type, 1, &b, &v);
  return v;
}

leaky_q8_params Fp8(leaky_type8 type, int saturate) {
  leaky_q8_params q = leaky_q8_params_init(type);
  q.saturate = saturate;
  return q;
}

TEST(EightBitDiagnosis, CorrectFp8KernelsPass) {
  for (leaky_type8 type : {LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    for (bool backward : {false, true}) {
      const Case c(Fp8(type, 1), 0.2, backward);
      const CheckResult r = c.Run(c.Kernel([&](uint8_t x, uint8_t dy) -> uint8_t {
        const float saved = FromFp8(type, x), base = backward ? FromFp8(type, dy) : saved;
        if (std::isnan(base)) return backward ? dy : x;  // a NaN gives its own byte back
        // The f32 product, converted once: with slope 0.2f no product of an
        // fp8 value lands within f32's rounding of an fp8 tie.
        return ToFp8(type, saved > 0 ? base : base * 0.2f, 1);
      }));
      EXPECT_TRUE(r.pass) << Type8Name(type) << (backward ? " backward" : " forward") << Text(r);
    }
  }
}

TEST(EightBitDiagnosis, Fp8ConversionNotSaturating) {
  // E4M3 negatives times 3 pass 448; E5M2's infinities pass through.
  for (leaky_type8 type : {LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    const double slope = type == LEAKY_FP8_E4M3 ? 3.0 : 0.2;
    const Case c(Fp8(type, 1), slope);
    const CheckResult r = c.Run(c.Kernel([&](uint8_t x, uint8_t) -> uint8_t {
      const float v = FromFp8(type, x);
      if (std::isnan(v)) return x;
      return ToFp8(type, v > 0 ? v : v * static_cast<float>(slope), /*saturate=*/0);
    }));
    Expect(r, "saturation",
           {type == LEAKY_FP8_E4M3 ? "came out as NaN" : "came out as infinity", "saturate = 1"});
  }
}

// E5M2 is f16's top byte: `f16 bits >> 8` cuts the mantissa (toward zero).
TEST(EightBitDiagnosis, E5M2AsF16TopByteTruncates) {
  const Case c(Fp8(LEAKY_FP8_E5M2, 0), 0.3);
  const CheckResult r = c.Run(c.Kernel([](uint8_t x, uint8_t) -> uint8_t {
    const float v = FromFp8(LEAKY_FP8_E5M2, x);
    if (std::isnan(v)) return x;
    const float y = v > 0 ? v : v * 0.3f;
    return static_cast<uint8_t>(float16(y).bits >> 8);
  }));
  Expect(r, "rounding_rule", {"cuts the mantissa bits", "fp8_e5m2"});
}

}  // namespace
}  // namespace leaky::toolkit

// `leaky golden` on 8-bit data: the golden (the library's exact 8-bit path)
// against the independent rational reference of tests/eight_bit_reference.h,
// every byte value in every run of 256 inputs, and golden.json's 8-bit
// fields written, read back and refused in one line when wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "eight_bit_data.h"
#include "eight_bit_models.h"
#include "eight_bit_reference.h"
#include "golden_data.h"
#include "golden_io.h"

namespace leaky::toolkit {
namespace {

namespace ref = leaky::test::eight_bit;

GoldenDescription Describe(const leaky_q8_params& q, double slope, bool backward = false,
                           uint64_t n = 10007) {
  GoldenDescription d;
  d.op = backward ? "leaky_relu_backward" : "leaky_relu_forward";
  d.elements = n;
  d.shape = {n};
  d.negative_slope = slope;
  d.seed = 5;
  d.distribution = "all_bytes";
  d.eight_bit = q;
  return d;
}

ref::Quantized ReferenceOf(const leaky_q8_params& q) {
  return {q.type == LEAKY_QS8, q.input.scale, q.input.zero_point, q.output.scale,
          q.output.zero_point, q.output_min,  q.output_max};
}

ref::Fp8 FormatOf(leaky_type8 t) { return t == LEAKY_FP8_E4M3 ? ref::Fp8::kE4M3 : ref::Fp8::kE5M2; }

leaky_q8_params Quantized(leaky_type8 type, double in_scale, int in_zp, double out_scale,
                          int out_zp, int low, int high) {
  leaky_q8_params q = leaky_q8_params_init(type);
  q.input = {in_scale, in_zp};
  q.output = {out_scale, out_zp};
  q.output_min = low;
  q.output_max = high;
  return q;
}

TEST(EightBitGolden, QuantizedMatchesTheRationalReference) {
  const std::vector<leaky_q8_params> cases = {
      DefaultQ8Params(LEAKY_QU8),
      DefaultQ8Params(LEAKY_QS8),
      Quantized(LEAKY_QU8, 0.1, 100, 0.3, 7, 10, 240),
      Quantized(LEAKY_QS8, 0.02, -5, 0.01, 3, -100, 90),
      Quantized(LEAKY_QU8, 1.0, 0, 1.0, 0, 0, 255),
      Quantized(LEAKY_QS8, 3e-5, 127, 7e-3, -128, -128, 127)};
  for (const leaky_q8_params& q : cases) {
    // 0.3 lies below 3/10 as a double, above it as a float: a slope
    // rounded to f32 on the way shows on the ties of 0.45 k.
    for (double slope : {0.2, 0.3, 0.25, -0.5, 1.5, 0.0}) {
      const GoldenDescription d = Describe(q, slope);
      const GoldenArrays a = MakeGolden(d);
      const ref::Table table = ref::QuantizedTable(ReferenceOf(q), [&](const ref::Rational& v) {
        return ref::LeakyReluReal(v, ref::Exact(slope));
      });
      const Q8Problem problem{q, false, slope};
      for (size_t i = 0; i < a.x.size(); ++i) {
        const auto x = static_cast<uint8_t>(a.x[i]);
        ASSERT_EQ(a.golden[i], table.expected[x])
            << ReferenceOf(q).Describe() << " slope " << slope << " x " << int(x);
        // The diagnosis's own exact model agrees too (it is what its
        // mistakes are measured from).
        ASSERT_EQ(PredictQ8(problem, Q8Model{}, x, 0), table.expected[x]);
      }
    }
  }
}

TEST(EightBitGolden, Fp8MatchesTheRationalReference) {
  for (leaky_type8 type : {LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    for (int saturate : {0, 1}) {
      for (double slope : {0.2, 0.01, -1.5, 0.0, 3.0}) {
        leaky_q8_params q = leaky_q8_params_init(type);
        q.saturate = saturate;
        const ref::Fp8 f = FormatOf(type);
        const ref::Value s = ref::SlopeF32(slope);
        const ref::Table pass = ref::Fp8Table(f, saturate, [](const ref::Value& v) { return v; });
        const ref::Table scaled =
            ref::Fp8Table(f, saturate, [&](const ref::Value& v) { return ref::Multiply(v, s); });
        const ref::Table forward = ref::Fp8Table(
            f, saturate, [&](const ref::Value& v) { return ref::LeakyReluFp8(v, s); });
        for (bool backward : {false, true}) {
          const GoldenArrays a = MakeGolden(Describe(q, slope, backward));
          for (size_t i = 0; i < a.x.size(); ++i) {
            const auto x = static_cast<uint8_t>(a.x[i]);
            const auto dy = backward ? static_cast<uint8_t>(a.dy[i]) : uint8_t{0};
            const ref::Table& t = !backward                          ? forward
                                  : ref::Positive(ref::Decode(f, x)) ? pass
                                                                     : scaled;
            const uint8_t at = backward ? dy : x;
            const auto got = static_cast<uint8_t>(a.golden[i]);
            const bool ok = got == t.expected[at] || (t.any_nan[at] && ref::IsNanCode(f, got));
            ASSERT_TRUE(ok) << Type8Name(type) << " saturate " << saturate << " slope " << slope
                            << (backward ? " backward dy " : " forward x ") << int(at) << " x "
                            << int(x) << ": golden " << int(got) << ", reference "
                            << int(t.expected[at]);
            const std::optional<uint8_t> model = PredictQ8({q, backward, slope}, Q8Model{}, x, dy);
            if (model) ASSERT_EQ(*model, got) << "the diagnosis's exact fp8 model, x " << int(x);
          }
        }
      }
    }
  }
}

TEST(EightBitGolden, EveryRunOf256HoldsEveryByte) {
  const std::vector<uint8_t> x = AllBytesShuffled(10007, 3);
  for (size_t start = 0; start + 256 <= x.size(); start += 256) {
    std::vector<uint8_t> run(x.begin() + static_cast<long>(start),
                             x.begin() + static_cast<long>(start + 256));
    std::sort(run.begin(), run.end());
    for (int b = 0; b < 256; ++b) ASSERT_EQ(run[b], b) << "run at " << start;
  }
  EXPECT_NE(AllBytesShuffled(512, 3), AllBytesShuffled(512, 4));  // the seed shuffles
}

TEST(EightBitGolden, JsonRoundTrip) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8, LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    leaky_q8_params q = DefaultQ8Params(type);
    if (type == LEAKY_QS8) q.output_max = 100;
    if (type == LEAKY_FP8_E5M2) q.saturate = 0;
    const GoldenDescription back = DescriptionFromJson(DescriptionToJson(Describe(q, 0.3)));
    ASSERT_TRUE(back.eight_bit.has_value()) << Type8Name(type);
    EXPECT_EQ(back.eight_bit->type, type);
    EXPECT_EQ(TypeName(back), Type8Name(type));
    EXPECT_EQ(ElementBytes(back), 1u);
    EXPECT_EQ(back.eight_bit->saturate, q.saturate);
    if (IsQuantized(type)) {
      EXPECT_EQ(back.eight_bit->input.scale, q.input.scale);
      EXPECT_EQ(back.eight_bit->input.zero_point, q.input.zero_point);
      EXPECT_EQ(back.eight_bit->output.scale, q.output.scale);
      EXPECT_EQ(back.eight_bit->output.zero_point, q.output.zero_point);
      EXPECT_EQ(back.eight_bit->output_min, q.output_min);
      EXPECT_EQ(back.eight_bit->output_max, q.output_max);
    }
  }
  // A float golden.json, as older versions wrote it, reads as before.
  const GoldenDescription f16 = DescriptionFromJson(
      R"({"format": "leaky-golden-1", "op": "leaky_relu_forward", "dtype": "f16", "shape": [4],
          "elements": 4, "negative_slope": 0.2, "distribution": "hard", "seed": 1})");
  EXPECT_FALSE(f16.eight_bit.has_value());
  EXPECT_EQ(f16.dtype, LEAKY_F16);
}

// golden.json's 8-bit fields, broken one at a time: one line naming it.
TEST(EightBitGolden, JsonRefusals) {
  const std::string head =
      R"({"format": "leaky-golden-1", "op": "leaky_relu_forward", "shape": [4], "elements": 4,
          "negative_slope": 0.2, )";
  const std::string good_quantization =
      R"("quantization": {"input": {"scale": 0.5, "zero_point": 3}, "output": {"scale": 0.25,
         "zero_point": 4}, "output_min": 0, "output_max": 255})";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("dtype": "qu8"})", "\"quantization\" must be an object"},
      {R"("dtype": "fp8_e4m3"})", "fp8_e4m3 needs \"saturate\": true or false"},
      {R"("dtype": "fp8_e5m2", "saturate": 1})", "\"saturate\": true or false"},
      {R"("dtype": "qu8", "quantization": {"input": {"scale": -1, "zero_point": 0}, "output": {"scale": 1, "zero_point": 0}, "output_min": 0, "output_max": 255}})",
       "input scale must be a finite number above 0, not -1"},
      {R"("dtype": "qs8", "quantization": {"input": {"scale": 1, "zero_point": 200}, "output": {"scale": 1, "zero_point": 0}, "output_min": -128, "output_max": 127}})",
       "input zero point must be within qs8's range -128..127, not 200"},
      {R"("dtype": "qu8", "quantization": {"input": {"scale": 1, "zero_point": 0}, "output": {"scale": 1, "zero_point": 0}, "output_min": 9, "output_max": 3}})",
       "output min 9 is above output max 3"},
      {R"("dtype": "qu8", "quantization": {"input": {"scale": 1, "zero_point": 0}, "output": {"scale": 1, "zero_point": 0}, "output_min": 0, "output_max": 1e30}})",
       "\"output_max\" must be a whole number"},
      {R"("dtype": "qu8", "quantization": {"input": {"scale": 1, "zero_point": 0}, "output": {"scale": 1, "zero_point": 0}, "output_min": 0, "output_max": 18446744073709551615}})",
       "\"output_max\" must be within qu8's range, not 18446744073709551615"},
      {R"("dtype": "qu8", "quantization": {"input": {"scale": 1, "zero_point": 0}, "output": {"scale": 1, "zero_point": 0}, "output_min": 0, "output_max": 4294967296}})",
       "output max must be within qu8's range 0..255, not 4294967296"},
      {R"("dtype": "q9", )" + good_quantization + "}", "unknown dtype 'q9'"},
  };
  for (const auto& [fields, words] : cases) {
    try {
      DescriptionFromJson(head + fields);
      ADD_FAILURE() << "accepted " << fields;
    } catch (const GoldenError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(words), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_LT(what.size(), 200u) << what;
    }
  }
  // Quantized data has no backward.
  try {
    DescriptionFromJson(R"({"format": "leaky-golden-1", "op": "leaky_relu_backward", "shape": [4],
        "elements": 4, "negative_slope": 0.2, "dtype": "qu8", )" +
                        good_quantization + "}");
    ADD_FAILURE() << "accepted a qu8 backward";
  } catch (const GoldenError& e) {
    EXPECT_NE(std::string(e.what()).find("qu8 data has no backward"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace leaky::toolkit

// Each classic fault is planted into a correct output, on `normal` and on
// `hard` data (zeros, subnormals, infinities, NaNs: the golden's own zeros
// must not cut a fault apart), under the article's split (even, 8 cores,
// 256-element tiles, 2 buffers); the diagnosis must name it - one fault, one
// finding - with the index, core, tile or slope it reports.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "diagnose.h"
#include "golden_data.h"
#include "layout.h"
#include "leaky/reference.hpp"
#include "plan_options.h"
#include "timeline.h"

namespace leaky::toolkit {
namespace {

constexpr double kSlope = 0.2;
constexpr uint64_t kN = 10007;

// The article's kernel: the npu preset, an even split, fixed tiles, two
// buffers.
PlanOptions EvenSplit(uint32_t cores = 8, uint64_t tile_elems = 256) {
  PlanOptions options;
  options.preset = "npu";
  options.cores = cores;
  options.split = "even";
  options.tile_elems = tile_elems;
  options.buffers = 2;
  return options;
}

Array ToArray(leaky_dtype dtype, const std::vector<uint64_t>& bits) {
  return DecodeArray("test", ToBytes(dtype, bits), dtype, bits.size());
}

uint64_t F16(float v) { return float16(v).bits; }
float Value(uint64_t bits) { return static_cast<float>(float16::from_bits(static_cast<uint16_t>(bits))); }

// f16 golden data for one distribution and direction, and the even split.
struct Case {
  GoldenDescription d;
  GoldenArrays a;
  Layout plan;
  Case(const std::string& dist, bool backward = false) {
    d.dtype = LEAKY_F16;
    d.op = backward ? "leaky_relu_backward" : "leaky_relu_forward";
    d.elements = kN;
    d.shape = {kN};
    d.negative_slope = kSlope;
    d.distribution = dist;
    d.seed = 11;
    a = MakeGolden(d);
    PlanOptions options = EvenSplit();
    options.op = backward ? "backward" : "forward";
    plan = MakeLayout(options, LEAKY_F16, kN);
  }
  CheckResult Run(const std::vector<uint64_t>& output, bool with_plan = true,
                  bool strict_zero_sign = false, uint64_t max_ulp = 0) const {
    CheckInput in;
    in.dtype = LEAKY_F16;
    in.backward = d.op == "leaky_relu_backward";
    in.negative_slope = kSlope;
    in.input = ToArray(LEAKY_F16, a.x);
    if (in.backward) in.dy = ToArray(LEAKY_F16, a.dy);
    in.golden = ToArray(LEAKY_F16, a.golden);
    in.output = ToArray(LEAKY_F16, output);
    in.max_ulp = max_ulp;
    in.strict_zero_sign = strict_zero_sign;
    if (with_plan) in.plan = plan;
    return Diagnose(in);
  }
  // The reference computed some other way (a broken kernel).
  std::vector<uint64_t> Kernel(const std::function<float(float x, float dy)>& f) const {
    std::vector<uint64_t> out(kN);
    for (uint64_t i = 0; i < kN; ++i) {
      out[i] = F16(f(Value(a.x[i]), a.dy.empty() ? 0.0f : Value(a.dy[i])));
    }
    return out;
  }
};

std::string Kinds(const CheckResult& r) {
  std::string kinds;
  for (const Finding& f : r.findings) kinds += (kinds.empty() ? "" : ",") + f.kind;
  return kinds;
}
const Finding& Get(const CheckResult& r, const std::string& kind) {
  for (const Finding& f : r.findings) {
    if (f.kind == kind) return f;
  }
  throw std::runtime_error("no finding " + kind + " among " + Kinds(r));
}
// One fault, one finding: exactly `kind`.
void ExpectOnly(const CheckResult& r, const std::string& kind) {
  EXPECT_FALSE(r.pass);
  EXPECT_EQ(Kinds(r), kind) << [&] {
    std::string all;
    for (const Finding& f : r.findings) all += "\n- " + f.kind + ": " + f.message + " " + f.details.dump();
    return all;
  }();
}

class Fault : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Data, Fault, ::testing::Values("normal", "hard"));

TEST_P(Fault, CorrectOutputPasses) {
  const Case c(GetParam());
  const CheckResult r = c.Run(c.a.golden);
  EXPECT_TRUE(r.pass);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_TRUE(r.findings.empty()) << Kinds(r);
}

TEST_P(Fault, AllZeros) {
  const Case c(GetParam());
  // Never written back, or computed from a buffer never filled: the output
  // alone cannot tell, and the diagnosis says so.
  const CheckResult r = c.Run(std::vector<uint64_t>(kN, 0));
  ExpectOnly(r, "ambiguous");
  EXPECT_EQ(Get(r, "ambiguous").details["candidates"],
            nlohmann::json({"not_written", "compute_before_copy"}));
}

TEST_P(Fault, CoreUntouched) {
  const Case c(GetParam());
  std::vector<uint64_t> out = c.a.golden;
  for (uint64_t i = c.plan.core_start[3]; i < c.plan.core_start[4]; ++i) out[i] = 0;
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "not_written");
  const Finding& f = Get(r, "not_written");
  EXPECT_EQ(f.details["region"], "cores");
  EXPECT_EQ(f.details["cores"], nlohmann::json({3}));
  EXPECT_NE(f.message.find("core 3 (of 8), whole"), std::string::npos) << f.message;
}

// The article's remainder dropped: the last core processes `step` elements
// and leaves the n % cores after them as they were (in place: the input).
TEST_P(Fault, RemainderDropped) {
  const Case c(GetParam());
  const uint64_t step = kN / 8, remainder_start = 8 * step;
  std::vector<uint64_t> out = c.a.golden;
  for (uint64_t i = remainder_start; i < kN; ++i) out[i] = c.a.x[i];
  const CheckResult r = c.Run(out);
  bool any_wrong = false;
  for (uint64_t i = remainder_start; i < kN; ++i) any_wrong |= out[i] != c.a.golden[i];
  if (!any_wrong) GTEST_SKIP() << "the remainder's inputs are their own outputs";
  // Left holding x, the negatives look like slope 1 too: both named, the
  // dropped remainder first.
  ExpectOnly(r, "ambiguous");
  const Finding& f = Get(r, "ambiguous");
  EXPECT_EQ(f.details["candidates"], nlohmann::json({"not_written", "slope_mismatch"}));
  EXPECT_EQ(f.details["region"], "remainder");
  EXPECT_EQ(f.details["content"], "the input");
  EXPECT_EQ(f.details["first"].get<uint64_t>(), remainder_start);
  EXPECT_EQ(f.details["core"].get<uint32_t>(), 7u);
}

TEST_P(Fault, SelectMissing) {
  const Case c(GetParam());
  // The article's listing with its Select commented out: y = slope * x.
  const float slope = static_cast<float>(kSlope);
  ExpectOnly(c.Run(c.Kernel([&](float x, float) { return x * slope; })), "select_missing");
}

TEST_P(Fault, CompareAtZeroInBackward) {
  Case c(GetParam(), /*backward=*/true);
  // Normal data has no exact zeros: plant some, in the golden too.
  for (uint64_t i = 5; i < kN; i += 97) c.a.x[i] = F16(i % 2 ? 0.0f : -0.0f);
  c.a.golden = ReferenceOutput(c.d, c.a.x, c.a.dy, kSlope);
  const float slope = static_cast<float>(kSlope);
  const CheckResult r = c.Run(c.Kernel([&](float x, float dy) { return x >= 0 ? dy : dy * slope; }));
  ExpectOnly(r, "compare_at_zero");
}

TEST_P(Fault, SlopeRoundedToF16) {
  const Case c(GetParam());
  const float rounded = static_cast<float>(float16(static_cast<float>(kSlope)));
  const CheckResult r = c.Run(c.Kernel([&](float x, float) { return x > 0 ? x : x * rounded; }));
  // On f16 data the multiply in f16 arithmetic gives the same bits for every
  // input: two causes, ranked, not a guess.
  ExpectOnly(r, "ambiguous");
  const Finding& f = Get(r, "ambiguous");
  EXPECT_EQ(f.details["candidates"], nlohmann::json({"slope_rounded", "half_arithmetic"}));
  EXPECT_FLOAT_EQ(f.details["rounded_slope"].get<float>(), rounded);
  EXPECT_NE(f.message.find("0.199951"), std::string::npos);
}

TEST_P(Fault, F16UnderflowInTheSlopeMultiply) {
  const Case c(GetParam());
  // Native f16 arithmetic under FTZ: products below f16's normals flush.
  const CheckResult r = c.Run(c.Kernel([&](float x, float) {
    const float y = x > 0 ? x : static_cast<float>(float16(x * 0.2f));
    return std::fabs(y) < 6.103515625e-05f ? 0.0f * y : y;
  }));
  ExpectOnly(r, "f16_underflow");
}

TEST_P(Fault, WrongSlopeIsEstimated) {
  const Case c(GetParam());
  const CheckResult r = c.Run(c.Kernel([](float x, float) { return x > 0 ? x : x * 0.01f; }));
  ExpectOnly(r, "slope_mismatch");
  EXPECT_NEAR(Get(r, "slope_mismatch").details["estimated_slope"].get<double>(), 0.01, 2e-4);
}

TEST_P(Fault, PlainReluIsASlopeOfZero) {
  const Case c(GetParam());
  const CheckResult r = c.Run(c.Kernel([](float x, float) { return x > 0 ? x : 0.0f; }));
  ExpectOnly(r, "slope_mismatch");
  const Finding& f = Get(r, "slope_mismatch");
  EXPECT_EQ(f.details["estimated_slope"].get<double>(), 0.0);
  EXPECT_NE(f.message.find("slope 0 instead of 0.2"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("plain ReLU"), std::string::npos) << f.message;
}

// A wrong per-core offset: the first 16 elements of every core's range are
// taken from 5 elements further on (results of other indices: misplaced).
TEST_P(Fault, PerCoreOffsetAtTheStartOfEachCore) {
  const Case c(GetParam());
  std::vector<uint64_t> out = c.a.golden;
  for (uint32_t core = 0; core < 8; ++core) {
    for (uint64_t j = 0; j < 16; ++j) out[c.plan.core_start[core] + j] = c.a.golden[c.plan.core_start[core] + j + 5];
  }
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "misplaced");
  const Finding& f = Get(r, "misplaced");
  EXPECT_EQ(f.details["shift"].get<int64_t>(), 5);
  EXPECT_NE(f.message.find("result of index i+5"), std::string::npos) << f.message;
}

TEST_P(Fault, StaleTileRepeatsThePreviousOne) {
  const Case c(GetParam());
  uint64_t start, length, previous, previous_length;
  c.plan.TileRange(1, 2, &start, &length);
  c.plan.TileRange(1, 1, &previous, &previous_length);
  std::vector<uint64_t> out = c.a.golden;
  for (uint64_t j = 0; j < length; ++j) out[start + j] = c.a.golden[previous + j];
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "stale_tile");
  const Finding& f = Get(r, "stale_tile");
  EXPECT_EQ(f.details["tiles_apart"].get<int64_t>(), -1);
  EXPECT_EQ(f.details["region"]["extents"][0]["core"].get<uint32_t>(), 1u);
  EXPECT_EQ(f.details["region"]["extents"][0]["tile"].get<uint64_t>(), 2u);
}

// Values no explanation covers stay unexplained, but where they sit is said.
TEST_P(Fault, UnexplainedButPeriodicWithoutAPlan) {
  const Case c(GetParam());
  std::vector<uint64_t> out = c.a.golden;
  for (uint64_t base = 0; base + 16 < kN; base += 1024) {
    for (uint64_t i = base; i < base + 16; ++i) out[i] = F16(Value(c.a.golden[i]) + 100.0f);
  }
  const CheckResult r = c.Run(out, /*with_plan=*/false);
  ExpectOnly(r, "mismatch");
  EXPECT_EQ(Get(r, "mismatch").details["period"].get<uint64_t>(), 1024u);
}

// Two zeroed ranges are two findings' worth of blocks, each located by its
// extent: the golden's zeros inside do not cut it, and at its edges only
// elements the golden itself has as zero may be in doubt.
TEST_P(Fault, ZeroBlocksByTheirExtent) {
  const Case c(GetParam());
  std::vector<uint64_t> out = c.a.golden;
  const std::pair<uint64_t, uint64_t> planted[] = {{0, 2048}, {2080, 2288}};
  for (const auto& [begin, end] : planted) {
    for (uint64_t i = begin; i < end; ++i) out[i] = 0;
  }
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "not_written");
  const nlohmann::json& blocks = Get(r, "not_written").details["extents"];
  ASSERT_EQ(blocks.size(), 2u) << Get(r, "not_written").message;
  auto golden_zero = [&](uint64_t i) { return Value(c.a.golden[i]) == 0; };
  for (size_t b = 0; b < 2; ++b) {
    const uint64_t first = blocks[b]["first"].get<uint64_t>(), last = blocks[b]["last"].get<uint64_t>();
    const auto [begin, end] = planted[b];
    for (uint64_t i = std::min(first, begin); i < std::max(first, begin); ++i) EXPECT_TRUE(golden_zero(i)) << i;
    for (uint64_t i = std::min(last + 1, end); i < std::max(last + 1, end); ++i) EXPECT_TRUE(golden_zero(i)) << i;
    EXPECT_EQ(blocks[b]["core"].get<uint32_t>(), c.plan.Locate(begin).core);
  }
}

TEST_P(Fault, ZeroedNaNsInsideABlockAreOneFinding) {
  Case c(GetParam());
  for (uint64_t i = 3000; i < 3200; i += 17) c.a.x[i] = F16(NAN);
  c.a.golden = ReferenceOutput(c.d, c.a.x, c.a.dy, kSlope);
  std::vector<uint64_t> out = c.a.golden;
  for (uint64_t i = 3000; i < 3200; ++i) out[i] = 0;
  ExpectOnly(c.Run(out), "not_written");
}

TEST_P(Fault, NaNLostAndUnexpected) {
  Case c(GetParam());
  c.a.x[10] = F16(NAN);
  c.a.golden = ReferenceOutput(c.d, c.a.x, c.a.dy, kSlope);
  std::vector<uint64_t> out = c.a.golden;
  out[10] = F16(1.0f);
  uint64_t number = 20;  // a place where the golden is a number
  while (std::isnan(Value(c.a.golden[number]))) ++number;
  out[number] = 0xfe00;
  const CheckResult r = c.Run(out);
  EXPECT_EQ(Get(r, "lost_nan").details["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(Get(r, "unexpected_nan").details["count"].get<uint64_t>(), 1u);
  EXPECT_EQ(r.mismatches, 2u);
}

TEST_P(Fault, ZeroSignIsReportedApart) {
  Case c(GetParam());
  for (uint64_t i = 7; i < kN; i += 101) c.a.x[i] = F16(-0.0f);
  c.a.golden = ReferenceOutput(c.d, c.a.x, c.a.dy, kSlope);
  std::vector<uint64_t> out = c.a.golden;
  uint64_t flipped = 0;
  for (uint64_t i = 0; i < kN; ++i) {
    if ((out[i] & 0x7fff) == 0) {
      out[i] ^= 0x8000;
      ++flipped;
    }
  }
  const CheckResult lenient = c.Run(out);
  EXPECT_TRUE(lenient.pass);
  EXPECT_EQ(Kinds(lenient), "zero_sign");
  EXPECT_EQ(lenient.zero_sign_differences, flipped);
  const CheckResult strict = c.Run(out, true, /*strict_zero_sign=*/true);
  EXPECT_FALSE(strict.pass);
  EXPECT_EQ(strict.mismatches, flipped);
}

TEST_P(Fault, HalfTypesDefaultToZeroUlp) {
  const Case c(GetParam());
  EXPECT_EQ(DefaultMaxUlp(LEAKY_F16), 0u);
  std::vector<uint64_t> out = c.a.golden;
  uint64_t i = 0;
  while (Value(out[i]) == 0 || !std::isfinite(Value(out[i]))) ++i;
  out[i] += 1;  // 1 ulp
  const CheckResult exact = c.Run(out);
  EXPECT_FALSE(exact.pass);
  EXPECT_EQ(exact.first_mismatch, static_cast<int64_t>(i));
  EXPECT_TRUE(c.Run(out, true, false, /*max_ulp=*/1).pass);
}

// --- kernels with their indexing, pipelining or rounding written wrong, as
// a port would: each core of the article's split walks its tiles; the
// output starts as zeros (what a device buffer holds before the kernel).

// The op on element j, as the kernel computes it (f32, rounded once).
uint64_t Op(const Case& c, uint64_t j) {
  const float x = Value(c.a.x[j]);
  return F16(x > 0 ? x : x * static_cast<float>(kSlope));
}

// for each core, for each tile: body(core, tile, start, length, tiles).
template <class Body>
void EachTile(const Case& c, Body body) {
  for (uint32_t core = 0; core < c.plan.cores(); ++core) {
    const uint64_t tiles = c.plan.TileCount(core);
    for (uint64_t t = 0; t < tiles; ++t) {
      uint64_t start, length;
      c.plan.TileRange(core, t, &start, &length);
      body(core, t, start, length, tiles);
    }
  }
}

// vstore_half_rtz: the f32 product truncated to f16.
float StoreTowardZero(float x, float) {
  const float p = x > 0 ? x : x * 0.2f;
  float16 h(p);
  if (std::isfinite(p) && std::fabs(static_cast<float>(h)) > std::fabs(p)) {
    h = float16::from_bits(static_cast<uint16_t>(h.bits - 1));
  }
  return static_cast<float>(h);
}

TEST_P(Fault, StoreRoundsTowardZero) {
  const Case c(GetParam());
  const CheckResult r = c.Run(c.Kernel(StoreTowardZero));
  ExpectOnly(r, "rounding_mode");
  EXPECT_EQ(Get(r, "rounding_mode").details["rounding"], "toward_zero");
  // --max-ulp 1 does not hide it.
  const CheckResult lenient = c.Run(c.Kernel(StoreTowardZero), true, false, /*max_ulp=*/1);
  EXPECT_FALSE(lenient.pass);
  EXPECT_EQ(Kinds(lenient), "rounding_mode");
}

TEST_P(Fault, LastTileOfEveryCoreSkipped) {
  const Case c(GetParam());
  std::vector<uint64_t> out(kN, 0);
  EachTile(c, [&](uint32_t, uint64_t t, uint64_t start, uint64_t length, uint64_t tiles) {
    if (t >= tiles - 1) return;  // for (t = 0; t < tiles - 1; ++t)
    for (uint64_t j = start; j < start + length; ++j) out[j] = Op(c, j);
  });
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "not_written");
  EXPECT_EQ(Get(r, "not_written").details["region"], "last_tiles");
  EXPECT_NE(Get(r, "not_written").message.find("the last tile of each of cores 0-7"), std::string::npos)
      << Get(r, "not_written").message;
}

TEST_P(Fault, CoresPlacedATileApart) {
  const Case c(GetParam());
  std::vector<uint64_t> out(kN, 0);
  EachTile(c, [&](uint32_t core, uint64_t, uint64_t start, uint64_t length, uint64_t) {
    const uint64_t out_start = core * c.plan.tile_length + (start - c.plan.core_start[core]);
    for (uint64_t j = 0; j < length && out_start + j < kN; ++j) out[out_start + j] = Op(c, start + j);
  });
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "misplaced");
  const Finding& f = Get(r, "misplaced");
  EXPECT_EQ(f.details["relation"], "cores_a_tile_apart") << f.message;
  EXPECT_TRUE(f.details.contains("unwritten")) << f.message;
}

// The same offset on the load and the store: what every core computes is
// right where it lands, and the range past the last core's end is never
// written; the message names the stride, not a dropped tail.
TEST_P(Fault, CoresPlacedATileApartOnLoadAndStore) {
  const Case c(GetParam());
  std::vector<uint64_t> out(kN, 0);
  EachTile(c, [&](uint32_t core, uint64_t, uint64_t start, uint64_t length, uint64_t) {
    const uint64_t at = core * c.plan.tile_length + (start - c.plan.core_start[core]);
    for (uint64_t j = 0; j < length && at + j < kN; ++j) out[at + j] = Op(c, at + j);
  });
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "not_written");
  const Finding& f = Get(r, "not_written");
  EXPECT_EQ(f.details["core_stride"].get<uint64_t>(), 256u) << f.message;
  EXPECT_NE(f.message.find("placed a tile apart"), std::string::npos) << f.message;
}

TEST_P(Fault, OutputOffsetOmitsTheCoreStart) {
  const Case c(GetParam());
  std::vector<uint64_t> out(kN, 0);
  EachTile(c, [&](uint32_t core, uint64_t, uint64_t start, uint64_t length, uint64_t) {
    const uint64_t out_start = start - c.plan.core_start[core];  // dst + offset, no core start
    for (uint64_t j = 0; j < length; ++j) out[out_start + j] = Op(c, start + j);
  });
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "misplaced");
  EXPECT_EQ(Get(r, "misplaced").details["relation"], "core_start_omitted") << Get(r, "misplaced").message;
}

TEST_P(Fault, ValuesPermutedInsideEachTile) {
  const Case c(GetParam());
  std::vector<uint64_t> out(kN, 0);
  EachTile(c, [&](uint32_t, uint64_t, uint64_t start, uint64_t length, uint64_t) {
    // 16 lanes: lane l loads elements l*k (k < length / 16) contiguously,
    // and stores them lane-major: a strided store of a contiguous load.
    const uint64_t lanes = 16, per_lane = length / lanes;
    for (uint64_t j = 0; j < length; ++j) {
      const uint64_t to = per_lane > 0 && j < lanes * per_lane ? (j % per_lane) * lanes + j / per_lane : j;
      out[start + to] = Op(c, start + j);
    }
  });
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "misplaced");
  EXPECT_TRUE(Get(r, "misplaced").details.contains("tiles")) << Get(r, "misplaced").message;
}

TEST_P(Fault, ComputedBeforeTheCopyInArrived) {
  const Case c(GetParam());
  std::vector<uint64_t> out(kN, 0);
  // Two local buffers, zeroed at start; tile t is computed from slot t % 2
  // before its own copy-in lands, so the slot still holds tile t - 2.
  for (uint32_t core = 0; core < c.plan.cores(); ++core) {
    std::vector<uint64_t> slot_start = {UINT64_MAX, UINT64_MAX};
    for (uint64_t t = 0; t < c.plan.TileCount(core); ++t) {
      uint64_t start, length;
      c.plan.TileRange(core, t, &start, &length);
      const uint64_t from = slot_start[t % 2];
      for (uint64_t j = 0; j < length; ++j) out[start + j] = from == UINT64_MAX ? 0 : Op(c, from + j);
      slot_start[t % 2] = start;  // the copy-in lands after the compute
    }
  }
  const CheckResult r = c.Run(out);
  ExpectOnly(r, "compute_before_copy");
  EXPECT_EQ(Get(r, "compute_before_copy").details["tiles_apart"].get<int64_t>(), -2);
}

// --- the kinds, as documented

// docs/toolkit.md's table of findings names every kind, in the order of
// kFindingKinds (finding_kinds.inc), and nothing else: the one list and the
// user's page cannot drift apart.
TEST(FindingKinds, TheDocsTableListsEveryKindInOrder) {
  const std::filesystem::path page = std::filesystem::path(LEAKY_SOURCE_DIR) / "docs" / "toolkit.md";
  std::ifstream in(page);
  ASSERT_TRUE(in) << "cannot read " << page;
  std::vector<std::string> documented;  // the backquoted names of the table's first column
  bool table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| finding |", 0) == 0) {
      table = true;
    } else if (table && line.rfind('|', 0) != 0) {
      break;  // the table ends
    } else if (table) {
      const std::string cell = line.substr(1, line.find('|', 1) - 1);
      size_t open = cell.find('`'), close = 0;
      while (open != std::string::npos && (close = cell.find('`', open + 1)) != std::string::npos) {
        documented.push_back(cell.substr(open + 1, close - open - 1));
        open = cell.find('`', close + 1);
      }
    }
  }
  EXPECT_EQ(documented, std::vector<std::string>(std::begin(kFindingKinds), std::end(kFindingKinds)));
}

// --- the split policies and the timeline

TEST(Layout, SplitPolicies) {
  PlanOptions options = EvenSplit();
  const Layout even = MakeLayout(options, LEAKY_F16, 10007);
  ASSERT_EQ(even.cores(), 8u);
  EXPECT_EQ(even.core_start[1], 1250u);
  EXPECT_EQ(even.core_length[7], 1257u);  // step + n % cores
  options.split = "balanced";
  const Layout balanced = MakeLayout(options, LEAKY_F16, 10007);
  EXPECT_EQ(balanced.core_length[0], 1251u);
  EXPECT_EQ(balanced.core_length[6], 1251u);
  EXPECT_EQ(balanced.core_length[7], 1250u);
  const LayoutChecks checks = CheckLayout(even);
  EXPECT_TRUE(checks.covered_exactly_once);
  // 1250 f16 elements = 2500 bytes: core starts fall off the 32-byte grid.
  EXPECT_GT(checks.unaligned_copies, 0u);
  options.split = "granule";
  options.tile_elems = 0;
  EXPECT_EQ(CheckLayout(MakeLayout(options, LEAKY_F16, 10007)).unaligned_copies, 0u);
  options.split = "diagonal";
  EXPECT_THROW(MakeLayout(options, LEAKY_F16, 10007), std::invalid_argument);
}

// By hand: 1 core, 3 tiles of 100 f16 elements, forward (200 bytes in, 200
// out), 100 bytes/ns copies, 50 elements/ns compute: every stage 2 ns.
// Two buffers: tile 2's copy-in waits for tile 0's copy-out (6 ns), so the
// copy-outs end at 6, 8, 12. One buffer: fully serial, 18. Three: 10.
TEST(Timeline, MatchesHandComputedPipelines) {
  PlanOptions options = EvenSplit(1, 100);
  const Layout l = MakeLayout(options, LEAKY_F16, 300);
  const Timeline two = ModelTimeline(l, 2, 100.0, 50.0);
  ASSERT_EQ(two.cores.size(), 1u);
  const auto& t = two.cores[0].tiles;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_DOUBLE_EQ(t[1].copy_in.start, 2);
  EXPECT_DOUBLE_EQ(t[2].copy_in.start, 6);
  EXPECT_DOUBLE_EQ(t[2].compute.start, 8);
  EXPECT_DOUBLE_EQ(t[0].copy_out.end, 6);
  EXPECT_DOUBLE_EQ(t[1].copy_out.end, 8);
  EXPECT_DOUBLE_EQ(two.makespan, 12);
  EXPECT_DOUBLE_EQ(two.cores[0].serial, 18);
  EXPECT_DOUBLE_EQ(ModelTimeline(l, 1, 100.0, 50.0).makespan, 18);
  EXPECT_DOUBLE_EQ(ModelTimeline(l, 3, 100.0, 50.0).makespan, 10);
  // Backward moves two inputs in: copy-in 4 ns per tile, the bottleneck.
  options.op = "backward";
  const Layout b = MakeLayout(options, LEAKY_F16, 300);
  EXPECT_DOUBLE_EQ(ModelTimeline(b, 2, 100.0, 50.0).makespan, 4 + 4 + 4 + 2 + 2);
  // Two cores of one tile each: nothing overlaps, 1 and 2 buffers tie.
  options.op = "forward";
  options.cores = 2;
  options.tile_elems = 150;
  const Layout single = MakeLayout(options, LEAKY_F16, 300);
  EXPECT_DOUBLE_EQ(ModelTimeline(single, 2, 100.0, 50.0).makespan,
                   ModelTimeline(single, 1, 100.0, 50.0).makespan);
  const std::string svg = TimelineSvg(two, "test", 16);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("core 0 tile 2 copy-in: 6.0-8.0 ns"), std::string::npos);
}

// Cores whose tiles run at the same times share one row; tiles thinner
// than two pixels are drawn as blocks; the title's time is in the axis's
// unit.
TEST(Timeline, TiedCoresShareARowAndThinTilesMerge) {
  const PlanOptions options = EvenSplit(4, 100);
  const Layout l = MakeLayout(options, LEAKY_F16, 400000);  // 1,000 tiles per core
  const Timeline t = ModelTimeline(l, 2, 10.0, 5.0);
  const std::string svg = TimelineSvg(t, "tied", 16);
  EXPECT_NE(svg.find("all 4 cores drawn, 4 in 1 row(s)"), std::string::npos);
  EXPECT_NE(svg.find(">cores 0-3 (4 alike) (slowest)</text>"), std::string::npos);
  size_t rects = 0;
  for (size_t at = svg.find("<rect"); at != std::string::npos; at = svg.find("<rect", at + 1))
    ++rects;
  EXPECT_LT(rects, 100u);  // 3 lanes x 1,000 tiles drawn one by one: 3,000
  EXPECT_NE(svg.find("cores 0-3 (4 alike) tiles 0-"), std::string::npos);
  char title[64];
  std::snprintf(title, sizeof(title), "tied, %.4g \xc2\xb5s</text>", t.makespan / 1000);
  ASSERT_GE(t.makespan, 10000);
  EXPECT_NE(svg.find(title), std::string::npos) << svg.substr(0, 600);
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
}  // namespace leaky::toolkit

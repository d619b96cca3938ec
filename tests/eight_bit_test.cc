// leaky/eight_bit.h against the exact reference of eight_bit_reference.h:
// every op on all 256 input bytes (backward: all 65536 (dy, saved) pairs)
// over a grid of scales, zero points, slopes and clamps, for every SIMD
// target, 1 and 2 threads, in order, at a misaligned start with an odd
// length, in place, and (for some cases) long enough for the threads to
// split the work; the fp8 conversions on every code and every rounding
// boundary; bad input and the untouched outputs it must leave.
#include "leaky/eight_bit.h"
#include "leaky/tiling.h"

#include <gtest/gtest.h>

#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "eight_bit_reference.h"
#include "test_util.h"

namespace leaky::test::eight_bit {
namespace {

constexpr int kMaxPrinted = 20;  // mismatches printed per test; all are counted

std::string Hex8(uint8_t b) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "0x%02x", b);
  return buffer;
}

// Counts outputs compared and mismatches. A mismatch is printed once per
// distinct (op and parameters, input, expected, got), with the first layout
// it was seen in, and the first kMaxPrinted of those only (all with
// LEAKY_EIGHT_BIT_PRINT_ALL=1); the total counts every output.
class Log {
 public:
  ~Log() {
    if (mismatches_ > 0) {
      ADD_FAILURE() << mismatches_ << " mismatching outputs in all, " << distinct_.size()
                    << " distinct (op, parameters, input, expected, got)"
                    << (distinct_.size() > kMaxPrinted && !print_all_
                            ? "; the first " + std::to_string(kMaxPrinted) + " printed"
                            : "");
    }
    std::cout << "[ compared ] " << compared_ << " outputs, " << mismatches_ << " mismatches, "
              << undecided_ << " undecided (within 2^" << kEluBandLog2
              << " of a tie; the header allows either neighbour), " << undecided_as_400_bits_
              << " of them as the 400-bit value rounds\n";
  }
  void Compared(size_t n) { compared_ += n; }
  void Undecided(const std::string& key, bool as_400_bits) {
    ++undecided_;
    undecided_as_400_bits_ += as_400_bits;
    if (print_all_ && undecided_keys_.insert(key).second)
      std::cout << "[ undecided ] " << key << "\n";
  }
  // `key` identifies the case without its layout; `text` says everything.
  void Mismatch(const std::string& key, const std::string& text) {
    ++mismatches_;
    if (!distinct_.insert(key).second) return;
    if (distinct_.size() <= kMaxPrinted || print_all_) ADD_FAILURE() << text;
  }
  void Mismatch(const std::string& text) { Mismatch(text, text); }
  size_t mismatches() const { return mismatches_; }

 private:
  size_t compared_ = 0, mismatches_ = 0, undecided_ = 0, undecided_as_400_bits_ = 0;
  std::set<std::string> distinct_, undecided_keys_;
  bool print_all_ = std::getenv("LEAKY_EIGHT_BIT_PRINT_ALL") != nullptr;
};

// What a call must give: a table over the input byte, and for fp8 the
// format (a "NaN of either sign" entry needs it).
struct Expected {
  std::string what;  // op and parameters, for messages
  Table table;
  std::optional<Fp8> fp8;
};

bool Matches(const Expected& e, uint8_t input, uint8_t got, Log& log) {
  if (e.table.undecided[input]) {
    log.Undecided(e.what + " input " + Hex8(input) + " 400-bit " + Hex8(e.table.expected[input]) +
                      " got " + Hex8(got),
                  got == e.table.expected[input]);
    return true;
  }
  if (e.table.any_nan[input]) return IsNanCode(*e.fp8, got);
  return got == e.table.expected[input];
}

std::string ExpectedText(const Expected& e, uint8_t input) {
  return e.table.any_nan[input] ? "any NaN" : Hex8(e.table.expected[input]);
}

// Buffers with 32 guard bytes on each side.
constexpr size_t kGuard = 32;
constexpr uint8_t kGuardByte = 0xa5;

struct Guarded {
  explicit Guarded(size_t n, size_t misalign)
      : bytes(n + 2 * kGuard + misalign, kGuardByte), offset(kGuard + misalign), n(n) {}
  uint8_t* data() { return bytes.data() + offset; }
  bool GuardsIntact() const {
    for (size_t i = 0; i < offset; ++i)
      if (bytes[i] != kGuardByte) return false;
    for (size_t i = offset + n; i < bytes.size(); ++i)
      if (bytes[i] != kGuardByte) return false;
    return true;
  }
  std::vector<uint8_t> bytes;
  size_t offset, n;
};

leaky_options Options(int threads) { return leaky_options{threads, -1, nullptr}; }

using UnaryCall =
    std::function<leaky_status(size_t n, const uint8_t* x, uint8_t* y, const leaky_options* opts)>;

// The inputs of a layout: every code in order, or a scrambled sequence of
// odd length (167 is odd, so each run of 256 holds every code).
std::vector<uint8_t> Inputs(size_t n, bool in_order) {
  std::vector<uint8_t> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = static_cast<uint8_t>(in_order ? i : i * 167 + 13);
  return x;
}

void RunUnaryLayout(const Expected& e, const UnaryCall& call, const std::string& where, size_t n,
                    bool in_order, size_t misalign, bool in_place, int threads, Log& log) {
  const std::vector<uint8_t> x = Inputs(n, in_order);
  Guarded input(n, misalign), output(n, misalign);
  std::memcpy(input.data(), x.data(), n);
  uint8_t* y = in_place ? input.data() : output.data();
  const leaky_options opts = Options(threads);
  const std::string layout = where + " n=" + std::to_string(n) +
                             " misalign=" + std::to_string(misalign) +
                             (in_place ? " in-place" : "") + " threads=" + std::to_string(threads);
  const leaky_status s = call(n, input.data(), y, &opts);
  if (s != LEAKY_OK) {
    log.Mismatch(e.what + " [" + layout + "]: status " + leaky_status_string(s) + ": " +
                 leaky_last_error());
    return;
  }
  if (!input.GuardsIntact() || !output.GuardsIntact())
    log.Mismatch(e.what + " [" + layout + "]: wrote outside the output");
  log.Compared(n);
  for (size_t i = 0; i < n; ++i) {
    if (!Matches(e, x[i], y[i], log)) {
      const std::string what =
          " input " + Hex8(x[i]) + ": expected " + ExpectedText(e, x[i]) + ", got " + Hex8(y[i]);
      log.Mismatch(e.what + what, e.what + " [" + layout + "] index " + std::to_string(i) + what);
    }
  }
}

// Bytes long enough for two cores under the library's own rule: a core per
// min_bytes_per_core of traffic (its plan request's), one byte in and one
// out per element; 37 more for an odd tail.
size_t SplitLength() {
  leaky_plan_request request{};
  const leaky_options two{2, -1, nullptr};
  if (leaky_cpu_plan_request(LEAKY_F32, 1, 2, &two, &request) != LEAKY_OK) return size_t{1} << 20;
  return static_cast<size_t>(request.min_bytes_per_core) + 37;
}

// Every target, 1 and 2 threads, the layouts; `large` adds a call long
// enough to be split among threads.
void CheckUnary(const Expected& e, const UnaryCall& call, bool large, Log& log) {
  ForEachTarget([&](const std::string& target) {
    for (int threads : {1, 2}) {
      RunUnaryLayout(e, call, target, 256, true, 0, false, threads, log);
      RunUnaryLayout(e, call, target, 1000 + 37, false, 1, false, threads, log);
      RunUnaryLayout(e, call, target, 1000 + 37, false, 3, true, threads, log);
      if (large)
        RunUnaryLayout(e, call, target, SplitLength(), false, 5, false, threads, log);
    }
  });
}

// ---------------------------------------------------------------- the grid

struct ScalePair {
  double input, output;
};
// Plain, non-powers of two, extreme ratios both ways (1e-30 -> 1e30: every
// output is the zero point; 1e30 -> 1e-30 and 1 -> 1e-3: nearly all
// saturate), powers of two.
const ScalePair kScales[] = {
    {1.0, 1.0},    {0.1, 0.1},       {0.1, 1.0 / 3.0}, {0.0078125, 0.0234375},
    {3.3e-3, 0.1}, {1.0 / 3.0, 0.2}, {1e-30, 1e30},    {1e30, 1e-30},
    {1.0, 1e-3},   {0.5, 2.0},       {2.0, 0.0625},    {1e-3, 3.3e-3}};
const double kQuantizedSlopes[] = {0.0, -0.0, 0.01, 0.1, 0.2, 1.0 / 3.0, 1.0, -0.5, 5.0, 1e-300};

struct ZeroPoints {
  int input, output;
};
const ZeroPoints kQu8ZeroPoints[] = {{0, 0}, {128, 128}, {255, 255}, {0, 255}, {255, 0}, {100, 37}};
const ZeroPoints kQs8ZeroPoints[] = {{0, 0},      {-128, -128}, {127, 127},
                                     {-128, 127}, {127, -128},  {5, -20}};
struct Clamp {
  int min, max;
};
const Clamp kQu8Clamps[] = {{0, 255}, {20, 200}, {77, 77}};
const Clamp kQs8Clamps[] = {{-128, 127}, {-100, 50}, {-3, -3}};

// Every (type, scales, zero points, clamp) of the grid; `thin` keeps the
// first, middle and last zero points and the full clamp only.
std::vector<Quantized> QuantizedGrid(bool thin) {
  std::vector<Quantized> grid;
  for (bool is_signed : {false, true}) {
    const ZeroPoints* zps = is_signed ? kQs8ZeroPoints : kQu8ZeroPoints;
    const Clamp* clamps = is_signed ? kQs8Clamps : kQu8Clamps;
    for (const ScalePair& s : kScales) {
      for (int z = 0; z < 6; ++z) {
        if (thin && z != 0 && z != 1 && z != 4) continue;
        for (int c = 0; c < (thin ? 1 : 3); ++c) {
          grid.push_back(Quantized{is_signed, s.input, zps[z].input, s.output, zps[z].output,
                                   clamps[c].min, clamps[c].max});
        }
      }
    }
  }
  return grid;
}

leaky_q8_params ParamsOf(const Quantized& q) {
  leaky_q8_params p = leaky_q8_params_init(q.is_signed ? LEAKY_QS8 : LEAKY_QU8);
  p.input = {q.input_scale, q.input_zero_point};
  p.output = {q.output_scale, q.output_zero_point};
  p.output_min = q.output_min;
  p.output_max = q.output_max;
  return p;
}

leaky_q8_params ParamsOf(Fp8 format, int saturate) {
  leaky_q8_params p = leaky_q8_params_init(format == Fp8::kE4M3 ? LEAKY_FP8_E4M3 : LEAKY_FP8_E5M2);
  p.saturate = saturate;
  return p;
}

std::string Fp8Name(Fp8 format, int saturate) {
  return std::string(LayoutOf(format).name) + " saturate=" + std::to_string(saturate);
}

// -0.0: its sign shows in -x * slope (a one-bit change a table cache must see).
const double kFp8Slopes[] = {0.0, -0.0, 0.01, 0.1, 0.2, 1.0 / 3.0, 1.0, -0.5, 5.0, 1e-300};

// ---------------------------------------------------------------- reference self-checks

TEST(EightBitReference, DecodesKnownValues) {
  // OCP's table: E4M3 max 448 = S.1111.110, min normal 2^-6, min subnormal
  // 2^-9; E5M2 max 57344 = S.11110.11, min normal 2^-14, min subnormal 2^-16.
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x7e).magnitude, Rational(448));
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x38).magnitude, Rational(1));
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x08).magnitude, Pow2(-6));
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x01).magnitude, Pow2(-9));
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x07).magnitude, Rational(7) * Pow2(-9));
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x7f).kind, Value::kNan);
  EXPECT_EQ(Decode(Fp8::kE4M3, 0xff).kind, Value::kNan);
  EXPECT_EQ(Decode(Fp8::kE4M3, 0x78).magnitude, Rational(256));  // no infinity
  EXPECT_EQ(Decode(Fp8::kE5M2, 0x7b).magnitude, Rational(57344));
  EXPECT_EQ(Decode(Fp8::kE5M2, 0x3c).magnitude, Rational(1));
  EXPECT_EQ(Decode(Fp8::kE5M2, 0x04).magnitude, Pow2(-14));
  EXPECT_EQ(Decode(Fp8::kE5M2, 0x01).magnitude, Pow2(-16));
  EXPECT_EQ(Decode(Fp8::kE5M2, 0x7c).kind, Value::kInfinite);
  EXPECT_EQ(Decode(Fp8::kE5M2, 0xfc).kind, Value::kInfinite);
  EXPECT_TRUE(Decode(Fp8::kE5M2, 0xfc).negative);
  for (uint8_t nan : {0x7d, 0x7e, 0x7f}) EXPECT_EQ(Decode(Fp8::kE5M2, nan).kind, Value::kNan);
  int nans = 0;
  for (int b = 0; b < 256; ++b) nans += IsNanCode(Fp8::kE4M3, static_cast<uint8_t>(b));
  EXPECT_EQ(nans, 2);
  nans = 0;
  for (int b = 0; b < 256; ++b) nans += IsNanCode(Fp8::kE5M2, static_cast<uint8_t>(b));
  EXPECT_EQ(nans, 6);
  // Every finite code encodes back to itself, in both modes.
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int b = 0; b < 256; ++b) {
      const Value v = Decode(format, static_cast<uint8_t>(b));
      if (v.kind != Value::kFinite) continue;
      EXPECT_EQ(Encode(format, v, 0), b);
      EXPECT_EQ(Encode(format, v, 1), b);
    }
  }
}

TEST(EightBitReference, RoundsExactly) {
  EXPECT_EQ(RoundHalfEven(Rational(5, 2)), 2);
  EXPECT_EQ(RoundHalfEven(Rational(7, 2)), 4);
  EXPECT_EQ(RoundHalfEven(Rational(-5, 2)), -2);
  EXPECT_EQ(RoundHalfEven(Rational(-7, 2)), -4);
  EXPECT_EQ(RoundHalfEven(Rational(-1, 2)), 0);
  EXPECT_EQ(RoundHalfEven(Rational(-2, 3)), -1);
  EXPECT_EQ(Exact(0.1), Rational(Integer(3602879701896397), Integer(1) << 55));
  EXPECT_EQ(Exact(-1e-300) * Exact(1e300) < 0, true);
  // The overflow thresholds: E4M3 464 rounds to 448 (tie to the even 448),
  // above it overflows; E5M2 61440 ties to 65536 and overflows.
  EXPECT_EQ(Encode(Fp8::kE4M3, FromDouble(464.0), 0), 0x7e);
  EXPECT_EQ(Encode(Fp8::kE4M3, FromDouble(464.0 + 1.0 / 1024), 0), 0x7f);
  EXPECT_EQ(Encode(Fp8::kE4M3, FromDouble(464.0 + 1.0 / 1024), 1), 0x7e);
  EXPECT_EQ(Encode(Fp8::kE5M2, FromDouble(61440.0 - 1.0 / 1024), 0), 0x7b);
  EXPECT_EQ(Encode(Fp8::kE5M2, FromDouble(61440.0), 0), 0x7c);
  EXPECT_EQ(Encode(Fp8::kE5M2, FromDouble(-61440.0), 1), 0xfb);
  // Subnormals: half the smallest rounds to zero (even), keeping the sign.
  EXPECT_EQ(Encode(Fp8::kE4M3, FromDouble(-std::ldexp(1.0, -10)), 0), 0x80);
  EXPECT_EQ(Encode(Fp8::kE4M3, FromDouble(std::ldexp(3.0, -10)), 0), 0x02);  // 1.5 ulp -> 2
  EXPECT_EQ(Encode(Fp8::kE5M2, FromDouble(std::ldexp(1.0, -17) * 1.0000001), 0), 0x01);
  // A rounding up across a binade: 1.1111 (E4M3, 1 + 15/16) -> 2.
  EXPECT_EQ(Encode(Fp8::kE4M3, FromDouble(1.9375), 0), 0x40);
}

// ---------------------------------------------------------------- fp8 conversions

TEST(EightBitFp8Conversions, ToF32EveryCode) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    const leaky_type8 type = format == Fp8::kE4M3 ? LEAKY_FP8_E4M3 : LEAKY_FP8_E5M2;
    std::array<uint8_t, 256> codes{};
    for (int b = 0; b < 256; ++b) codes[b] = static_cast<uint8_t>(b);
    ForEachTarget([&](const std::string& target) {
      std::array<float, 256> got{};
      got.fill(-12345.0f);
      ASSERT_EQ(LEAKY_OK, leaky_fp8_to_f32(type, 256, codes.data(), got.data()))
          << leaky_last_error();
      log.Compared(256);
      for (int b = 0; b < 256; ++b) {
        const float want = ToFloat(Decode(format, static_cast<uint8_t>(b)));
        const bool ok = std::isnan(want)
                            ? std::isnan(got[b])
                            : std::bit_cast<uint32_t>(want) == std::bit_cast<uint32_t>(got[b]);
        if (!ok) {
          char text[160];
          std::snprintf(text, sizeof(text), "%s to_f32 [%s] code %s: expected %a, got %a",
                        LayoutOf(format).name, target.c_str(),
                        Hex8(static_cast<uint8_t>(b)).c_str(), static_cast<double>(want),
                        static_cast<double>(got[b]));
          log.Mismatch(std::string(LayoutOf(format).name) + " " + std::to_string(b), text);
        }
      }
    });
  }
}

// Every representable value, the midpoints between neighbours (the value
// past the largest being the one the exponent would give next: 480, 65536),
// the floats either side of each, zero, the subnormal range of both types
// and of f32, the overflow region, infinities and NaNs; both signs.
std::vector<float> BoundaryFloats(Fp8 format) {
  std::vector<double> magnitudes;
  std::vector<Rational> values;
  for (int b = 0; b < 0x80; ++b) {
    const Value v = Decode(format, static_cast<uint8_t>(b));
    if (v.kind == Value::kFinite) values.push_back(v.magnitude);
  }
  std::sort(values.begin(), values.end());
  const Rational max = values.back();
  const Rational last_ulp = max - values[values.size() - 2];
  values.push_back(max + last_ulp);
  values.push_back(max + 2 * last_ulp);
  std::vector<float> out;
  auto add_around = [&](float f) {
    out.push_back(f);
    out.push_back(std::nextafter(f, INFINITY));
    out.push_back(std::nextafter(f, -INFINITY));
  };
  for (size_t i = 0; i < values.size(); ++i) {
    add_around(values[i].convert_to<float>());
    if (i + 1 < values.size()) {
      const Rational mid = (values[i] + values[i + 1]) / 2;
      const float f = mid.convert_to<float>();
      EXPECT_EQ(Rational(static_cast<double>(f)), mid) << "a midpoint is not a float";
      add_around(f);
      // A quarter of the way and three quarters, too.
      add_around(((values[i] * 3 + values[i + 1]) / 4).convert_to<float>());
      add_around(((values[i] + values[i + 1] * 3) / 4).convert_to<float>());
    }
  }
  for (float f : {FLT_TRUE_MIN,
                  2 * FLT_TRUE_MIN,
                  FLT_MIN,
                  std::nextafter(FLT_MIN, 0.0f),
                  1e-10f,
                  1e-30f,
                  464.0f,
                  480.0f,
                  500.0f,
                  512.0f,
                  1000.0f,
                  57344.0f,
                  61440.0f,
                  65536.0f,
                  1e5f,
                  1e6f,
                  1e30f,
                  FLT_MAX,
                  INFINITY,
                  std::ldexp(1.0f, -17),
                  std::ldexp(1.0f, -10),
                  std::ldexp(3.0f, -18),
                  std::ldexp(3.0f, -11)}) {
    add_around(f);
  }
  for (float f : SpecialFloats()) out.push_back(f);
  out.push_back(std::numeric_limits<float>::quiet_NaN());
  out.push_back(std::bit_cast<float>(0x7fa00001u));  // signalling, payload
  out.push_back(std::bit_cast<float>(0x7fc12345u));
  const size_t positives = out.size();
  for (size_t i = 0; i < positives; ++i) out.push_back(-out[i]);
  (void)magnitudes;
  return out;
}

TEST(EightBitFp8Conversions, FromF32EveryBoundary) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    const leaky_type8 type = format == Fp8::kE4M3 ? LEAKY_FP8_E4M3 : LEAKY_FP8_E5M2;
    const std::vector<float> x = BoundaryFloats(format);
    for (int saturate : {0, 1}) {
      std::vector<uint8_t> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = Encode(format, FromFloat(x[i]), saturate);
      ForEachTarget([&](const std::string& target) {
        for (size_t misalign : {0, 3}) {
          Guarded y(x.size(), misalign);
          ASSERT_EQ(LEAKY_OK, leaky_fp8_from_f32(type, x.size(), x.data(), y.data(), saturate))
              << leaky_last_error();
          EXPECT_TRUE(y.GuardsIntact()) << "from_f32 wrote outside its output";
          log.Compared(x.size());
          for (size_t i = 0; i < x.size(); ++i) {
            if (y.data()[i] != want[i]) {
              char text[200];
              std::snprintf(
                  text, sizeof(text),
                  "%s from_f32 [%s misalign %zu] %a (%.9g, bits 0x%08x): expected %s, got %s",
                  Fp8Name(format, saturate).c_str(), target.c_str(), misalign,
                  static_cast<double>(x[i]), static_cast<double>(x[i]),
                  std::bit_cast<uint32_t>(x[i]), Hex8(want[i]).c_str(), Hex8(y.data()[i]).c_str());
              log.Mismatch(Fp8Name(format, saturate) + " " +
                               std::to_string(std::bit_cast<uint32_t>(x[i])) + " " +
                               Hex8(y.data()[i]),
                           text);
            }
          }
        }
      });
    }
  }
}

// ---------------------------------------------------------------- quantized ops

UnaryCall LeakyReluCall(const leaky_q8_params& p, double slope) {
  return [p, slope](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
    return leaky_q8_leaky_relu_forward(&p, n, x, y, slope, o);
  };
}

// The output a double-precision computation would give, to show that the
// grid tells it from the exact result.
uint8_t InDouble(const Quantized& q, uint8_t byte, double slope) {
  const double v = q.input_scale * (q.Code(byte) - q.input_zero_point);
  const double t = std::nearbyint((v > 0 ? v : v * slope) / q.output_scale);
  const double y = std::clamp(q.output_zero_point + std::clamp(t, -1024.0, 1024.0),
                              double(q.output_min), double(q.output_max));
  return Quantized::Byte(static_cast<int>(y));
}

TEST(EightBitQuantized, LeakyRelu) {
  Log log;
  int index = 0;
  size_t double_differs = 0;
  for (const Quantized& q : QuantizedGrid(false)) {
    for (double slope : kQuantizedSlopes) {
      const Rational exact_slope = Exact(slope);
      const Expected e{
          "leaky_relu " + q.Describe() + " slope " + Show(slope),
          QuantizedTable(q, [&](const Rational& v) { return LeakyReluReal(v, exact_slope); }),
          std::nullopt};
      for (int b = 0; b < 256; ++b)
        double_differs += InDouble(q, static_cast<uint8_t>(b), slope) != e.table.expected[b];
      CheckUnary(e, LeakyReluCall(ParamsOf(q), slope), ++index % 97 == 0, log);
    }
  }
  std::cout << "[ grid ] a computation in double differs from the exact table on " << double_differs
            << " (case, input) pairs\n";
  EXPECT_GT(double_differs, 0u)
      << "the grid no longer has a case that only exact arithmetic gets right";
  // The long calls were split: the library's pool has threads.
  EXPECT_GT(leaky_pool_threads(), 0) << "no call ran on more than one thread";
}

TEST(EightBitQuantized, PlainRelu) {
  Log log;
  int index = 0;
  for (const Quantized& q : QuantizedGrid(false)) {
    const Expected e{"plain_relu " + q.Describe(), QuantizedTable(q, PlainReluReal), std::nullopt};
    const leaky_q8_params p = ParamsOf(q);
    CheckUnary(
        e,
        [p](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
          return leaky_q8_plain_relu_forward(&p, n, x, y, o);
        },
        ++index % 31 == 0, log);
  }
}

// (lower, upper): the slope is their mean computed in double ((0.1 + 0.2)
// / 2 is 0.15000000000000002 there).
const std::pair<double, double> kRreluBounds[] = {{0.125, 1.0 / 3.0}, {0.1, 0.2}, {0.0, 0.0},
                                                  {-0.5, 0.5},        {0.3, 0.3}, {1e-300, 3e-300}};

TEST(EightBitQuantized, RreluEval) {
  Log log;
  for (const Quantized& q : QuantizedGrid(true)) {
    for (const auto& [lower, upper] : kRreluBounds) {
      const double slope = (lower + upper) / 2;
      const Rational exact_slope = Exact(slope);
      const Expected e{
          "rrelu_eval " + q.Describe() + " lower " + Show(lower) + " upper " + Show(upper),
          QuantizedTable(q, [&](const Rational& v) { return LeakyReluReal(v, exact_slope); }),
          std::nullopt};
      const leaky_q8_params p = ParamsOf(q);
      CheckUnary(
          e,
          [p, lower, upper](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
            return leaky_q8_rrelu_eval_forward(&p, n, x, y, lower, upper, o);
          },
          false, log);
    }
  }
}

// The header's slope is (lower + upper) / 2 in double: for the smallest
// subnormal that is 2^-1074 (lower / 2 + upper / 2 would be 0), which a
// scale ratio of 1e330 makes visible.
TEST(EightBitQuantized, RreluEvalSlopeInDouble) {
  Log log;
  const double tiny = std::numeric_limits<double>::denorm_min();
  for (bool is_signed : {false, true}) {
    const int zp = is_signed ? 0 : 128;
    const Quantized q{is_signed, 1e300, zp, 1e-30, zp, is_signed ? -128 : 0, is_signed ? 127 : 255};
    const Rational exact_slope = Exact((tiny + tiny) / 2);
    const Expected e{
        "rrelu_eval " + q.Describe() + " lower = upper = 2^-1074",
        QuantizedTable(q, [&](const Rational& v) { return LeakyReluReal(v, exact_slope); }),
        std::nullopt};
    const leaky_q8_params p = ParamsOf(q);
    CheckUnary(
        e,
        [p, tiny](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
          return leaky_q8_rrelu_eval_forward(&p, n, x, y, tiny, tiny, o);
        },
        false, log);
  }
}

// Calls whose parameters differ from the previous call's in one field,
// cycled more often than a small per-thread cache of tables holds, on one
// thread and split over two: each must get its own table.
TEST(EightBitQuantized, InterleavedParameters) {
  struct Variant {
    std::string what;
    leaky_q8_params params;
    double slope;
    Table table;
  };
  std::vector<Variant> variants;
  const Quantized base{false, 0.1, 100, 0.05, 100, 0, 255};
  auto add_quantized = [&](const std::string& what, const Quantized& q, double slope) {
    const Rational exact_slope = Exact(slope);
    variants.push_back(
        {what + ": " + q.Describe() + " slope " + Show(slope), ParamsOf(q), slope,
         QuantizedTable(q, [&](const Rational& v) { return LeakyReluReal(v, exact_slope); })});
  };
  add_quantized("base", base, 0.5);
  Quantized q = base;
  q.input_zero_point = 101;
  add_quantized("input zero point", q, 0.5);
  q = base;
  q.output_zero_point = 99;
  add_quantized("output zero point", q, 0.5);
  q = base;
  q.input_scale = 0.2;
  add_quantized("input scale", q, 0.5);
  q = base;
  q.output_scale = 0.1;
  add_quantized("output scale", q, 0.5);
  q = base;
  q.output_min = 1;
  add_quantized("output_min", q, 0.5);
  q = base;
  q.output_max = 254;
  add_quantized("output_max", q, 0.5);
  add_quantized("slope", base, 0.25);
  q = base;
  q.is_signed = true;
  q.output_min = -128;
  q.output_max = 127;
  add_quantized("type qs8", q, 0.5);
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (double slope : {5.0, -0.0, 0.0}) {
        const Value s = SlopeF32(slope);
        variants.push_back(
            {"fp8 " + Fp8Name(format, saturate) + " slope " + Show(slope),
             ParamsOf(format, saturate), slope,
             Fp8Table(format, saturate, [&](const Value& x) { return LeakyReluFp8(x, s); })});
      }
    }
  }
  for (size_t i = 1; i < variants.size(); ++i) {
    ASSERT_NE(variants[i].table.expected, variants[i - 1].table.expected)
        << variants[i].what
        << " gives the table of the case before it: the test would not see a stale table";
  }
  Log log;
  ForEachTarget([&](const std::string& target) {
    for (int round = 0; round < 3; ++round) {
      for (const Variant& v : variants) {
        const Expected e{v.what, v.table,
                         v.params.type == LEAKY_FP8_E4M3   ? std::optional<Fp8>(Fp8::kE4M3)
                         : v.params.type == LEAKY_FP8_E5M2 ? std::optional<Fp8>(Fp8::kE5M2)
                                                           : std::nullopt};
        const UnaryCall call = LeakyReluCall(v.params, v.slope);
        RunUnaryLayout(e, call, target + " round " + std::to_string(round), 1000 + 37, false, 1,
                       false, 1, log);
        RunUnaryLayout(e, call, target + " round " + std::to_string(round), (size_t{1} << 17) + 37,
                       false, 1, false, 2, log);
      }
    }
  });
}

const EluParameters kQuantizedElu[] = {{1.0, 1.0, 1.0},
                                       {1.6732632423543772, 1.0507009873554805, 1.0},  // SELU
                                       {0.5, 2.0, 0.75},
                                       {1.0, 1.0, 1e-3},
                                       {0.1, 3.3, 7.0}};

TEST(EightBitQuantized, Elu) {
  Log log;
  for (const Quantized& q : QuantizedGrid(true)) {
    for (const EluParameters& elu : kQuantizedElu) {
      Expected e{"elu " + q.Describe() + " alpha " + Show(elu.alpha) + " scale " + Show(elu.scale) +
                     " input_scale " + Show(elu.input_scale),
                 QuantizedEluTable(q, elu), std::nullopt};
      const leaky_q8_params p = ParamsOf(q);
      CheckUnary(
          e,
          [p, elu](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
            return leaky_q8_elu_forward(&p, n, x, y, elu.alpha, elu.scale, elu.input_scale, o);
          },
          false, log);
    }
  }
}

// PReLU: one weight per channel (f32), x viewed as [outer, channels, inner].
const float kPreluWeights[] = {0.25f, -0.5f, 0.0f, 1e-30f, 3.0f, 0.1f};
constexpr size_t kPreluChannels = std::size(kPreluWeights);

// expected[c]: the table of channel c.
using ChannelTables = std::vector<Table>;

void CheckPrelu(const std::string& what, const leaky_q8_params& p, const ChannelTables& tables,
                const std::optional<Fp8>& fp8, Log& log) {
  const float* weights = kPreluWeights;
  // [outer, channels, inner] shapes: inner long (NCHW-like), inner 1
  // (channels last), and one with an odd inner length.
  const std::array<size_t, 3> shapes[] = {
      {2, kPreluChannels, 256}, {300, kPreluChannels, 1}, {3, kPreluChannels, 37}};
  ForEachTarget([&](const std::string& target) {
    for (int threads : {1, 2}) {
      for (const auto& [outer, channels, inner] : shapes) {
        for (bool in_place : {false, true}) {
          const size_t n = outer * channels * inner;
          const std::vector<uint8_t> x = Inputs(n, false);
          Guarded input(n, 1), output(n, 1);
          std::memcpy(input.data(), x.data(), n);
          uint8_t* y = in_place ? input.data() : output.data();
          const leaky_options opts = Options(threads);
          const std::string layout = target + " [" + std::to_string(outer) + ", " +
                                     std::to_string(channels) + ", " + std::to_string(inner) + "]" +
                                     (in_place ? " in-place" : "") +
                                     " threads=" + std::to_string(threads);
          const leaky_status s =
              leaky_q8_prelu_forward(&p, outer, channels, inner, input.data(), weights, y, &opts);
          if (s != LEAKY_OK) {
            log.Mismatch(what + " [" + layout + "]: status " + leaky_status_string(s) + ": " +
                         leaky_last_error());
            continue;
          }
          if (!input.GuardsIntact() || !output.GuardsIntact())
            log.Mismatch(what + " [" + layout + "]: wrote outside the output");
          log.Compared(n);
          for (size_t i = 0; i < n; ++i) {
            const size_t c = (i / inner) % channels;
            const Expected e{what, tables[c], fp8};
            if (!Matches(e, x[i], y[i], log)) {
              const std::string detail =
                  " channel " + std::to_string(c) + " (weight " + Show(weights[c]) + ") input " +
                  Hex8(x[i]) + ": expected " + ExpectedText(e, x[i]) + ", got " + Hex8(y[i]);
              log.Mismatch(what + detail,
                           what + " [" + layout + "] index " + std::to_string(i) + detail);
            }
          }
        }
      }
    }
  });
}

TEST(EightBitQuantized, Prelu) {
  Log log;
  for (const Quantized& q : QuantizedGrid(true)) {
    ChannelTables tables;
    for (float w : kPreluWeights) {
      const Rational weight = Exact(w);
      tables.push_back(
          QuantizedTable(q, [&](const Rational& v) { return LeakyReluReal(v, weight); }));
    }
    CheckPrelu("prelu " + q.Describe(), ParamsOf(q), tables, std::nullopt, log);
  }
}

// ---------------------------------------------------------------- fp8 ops

TEST(EightBitFp8, LeakyReluForward) {
  Log log;
  int index = 0;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (double slope : kFp8Slopes) {
        const Value s = SlopeF32(slope);
        const Expected e{
            "fp8 leaky_relu " + Fp8Name(format, saturate) + " slope " + Show(slope),
            Fp8Table(format, saturate, [&](const Value& x) { return LeakyReluFp8(x, s); }), format};
        CheckUnary(e, LeakyReluCall(ParamsOf(format, saturate), slope), ++index % 9 == 0, log);
      }
    }
  }
}

TEST(EightBitFp8, PlainReluForward) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      const Expected e{"fp8 plain_relu " + Fp8Name(format, saturate),
                       Fp8Table(format, saturate, PlainReluFp8), format};
      const leaky_q8_params p = ParamsOf(format, saturate);
      CheckUnary(
          e,
          [p](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
            return leaky_q8_plain_relu_forward(&p, n, x, y, o);
          },
          saturate == 1, log);
    }
  }
}

TEST(EightBitFp8, RreluEval) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (const auto& [lower, upper] : kRreluBounds) {
        const Value s = SlopeF32((lower + upper) / 2);
        const Expected e{
            "fp8 rrelu_eval " + Fp8Name(format, saturate) + " lower " + Show(lower) + " upper " +
                Show(upper),
            Fp8Table(format, saturate, [&](const Value& x) { return LeakyReluFp8(x, s); }), format};
        const leaky_q8_params p = ParamsOf(format, saturate);
        CheckUnary(
            e,
            [p, lower, upper](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
              return leaky_q8_rrelu_eval_forward(&p, n, x, y, lower, upper, o);
            },
            false, log);
      }
    }
  }
}

// Floats whose products are floats too (alpha * scale exact in f32), so the
// result does not depend on whether the op rounds them to f32 first.
const EluParameters kFp8Elu[] = {
    {1.0, 1.0, 1.0}, {1.5, 0.75, 0.5}, {1.0, 2.0, 1.0}, {0.25, 1.0, 3.0}};

TEST(EightBitFp8, Elu) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (const EluParameters& elu : kFp8Elu) {
        const Expected e{"fp8 elu " + Fp8Name(format, saturate) + " alpha " + Show(elu.alpha) +
                             " scale " + Show(elu.scale) + " input_scale " + Show(elu.input_scale),
                         Fp8EluTable(format, saturate, elu), format};
        const leaky_q8_params p = ParamsOf(format, saturate);
        CheckUnary(
            e,
            [p, elu](size_t n, const uint8_t* x, uint8_t* y, const leaky_options* o) {
              return leaky_q8_elu_forward(&p, n, x, y, elu.alpha, elu.scale, elu.input_scale, o);
            },
            false, log);
      }
    }
  }
}

TEST(EightBitFp8, Prelu) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      ChannelTables tables;
      for (float w : kPreluWeights) {
        const Value weight = FromFloat(w);
        tables.push_back(
            Fp8Table(format, saturate, [&](const Value& x) { return LeakyReluFp8(x, weight); }));
      }
      CheckPrelu("fp8 prelu " + Fp8Name(format, saturate), ParamsOf(format, saturate), tables,
                 format, log);
    }
  }
}

// Backward: dx = choose[saved] ? when_true[dy] : when_false[dy], or with
// `rows` (ELU) rows[saved][dy].
struct ExpectedBackward {
  std::string what;
  Fp8 format;
  Table when_true, when_false;
  std::array<bool, 256> choose{};
  std::vector<Table> rows;
  const Table& Row(uint8_t saved) const {
    if (!rows.empty()) return rows[saved];
    return choose[saved] ? when_true : when_false;
  }
};

using BinaryCall = std::function<leaky_status(size_t n, const uint8_t* dy, const uint8_t* saved,
                                              uint8_t* dx, const leaky_options* opts)>;

void CheckBackward(const ExpectedBackward& e, const BinaryCall& call, Log& log) {
  // All 65536 (dy, saved) pairs; then an odd, misaligned length in place
  // over dy and over saved.
  enum Placement { kOutOfPlace, kOverDy, kOverSaved };
  struct Layout {
    size_t n, misalign;
    Placement placement;
  };
  const Layout layouts[] = {
      {65536, 0, kOutOfPlace}, {1000 + 37, 1, kOverDy}, {1000 + 37, 3, kOverSaved}};
  // The expectation of each saved byte, built once (not per element).
  std::vector<Expected> by_saved;
  for (int b = 0; b < 256; ++b) by_saved.push_back({e.what, e.Row(static_cast<uint8_t>(b)), e.format});
  ForEachTarget([&](const std::string& target) {
    for (int threads : {1, 2}) {
      for (const Layout& l : layouts) {
        std::vector<uint8_t> dy_values(l.n), saved_values(l.n);
        for (size_t i = 0; i < l.n; ++i) {
          dy_values[i] = static_cast<uint8_t>(l.n == 65536 ? i : i * 167 + 13);
          saved_values[i] = static_cast<uint8_t>(l.n == 65536 ? i >> 8 : i * 89 + 7);
        }
        Guarded dy(l.n, l.misalign), saved(l.n, l.misalign), dx(l.n, l.misalign);
        std::memcpy(dy.data(), dy_values.data(), l.n);
        std::memcpy(saved.data(), saved_values.data(), l.n);
        uint8_t* out = l.placement == kOverDy      ? dy.data()
                       : l.placement == kOverSaved ? saved.data()
                                                   : dx.data();
        const leaky_options opts = Options(threads);
        const std::string layout = target + " n=" + std::to_string(l.n) +
                                   (l.placement == kOverDy      ? " dx=dy"
                                    : l.placement == kOverSaved ? " dx=saved"
                                                                : "") +
                                   " threads=" + std::to_string(threads);
        const leaky_status s = call(l.n, dy.data(), saved.data(), out, &opts);
        if (s != LEAKY_OK) {
          log.Mismatch(e.what + " [" + layout + "]: status " + leaky_status_string(s) + ": " +
                       leaky_last_error());
          continue;
        }
        if (!dy.GuardsIntact() || !saved.GuardsIntact() || !dx.GuardsIntact()) {
          log.Mismatch(e.what + " [" + layout + "]: wrote outside the output");
        }
        log.Compared(l.n);
        for (size_t i = 0; i < l.n; ++i) {
          const uint8_t g = dy_values[i], sv = saved_values[i];
          const Expected& one = by_saved[sv];
          if (!Matches(one, g, out[i], log)) {
            const std::string detail = " dy " + Hex8(g) + " saved " + Hex8(sv) + ": expected " +
                                       ExpectedText(one, g) + ", got " + Hex8(out[i]);
            log.Mismatch(e.what + detail,
                         e.what + " [" + layout + "] index " + std::to_string(i) + detail);
          }
        }
      }
    }
  });
}

TEST(EightBitFp8, LeakyReluBackward) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (double slope : kFp8Slopes) {
        const Value s = SlopeF32(slope);
        ExpectedBackward e{
            "",
            format,
            Fp8Table(format, saturate, [](const Value& dy) { return dy; }),
            Fp8Table(format, saturate, [&](const Value& dy) { return Multiply(dy, s); }),
            {}};
        for (int b = 0; b < 256; ++b)
          e.choose[b] = Positive(Decode(format, static_cast<uint8_t>(b)));
        const leaky_q8_params p = ParamsOf(format, saturate);
        for (int from_result : {0, 1}) {
          if (from_result && slope < 0) continue;  // refused: EightBitErrors
          e.what = "fp8 leaky_relu_backward " + Fp8Name(format, saturate) + " slope " +
                   Show(slope) + (from_result ? " saved_is_result" : "");
          CheckBackward(
              e,
              [p, slope, from_result](size_t n, const uint8_t* dy, const uint8_t* saved,
                                      uint8_t* dx, const leaky_options* o) {
                return leaky_q8_leaky_relu_backward(&p, n, dy, saved, from_result, dx, slope, o);
              },
              log);
        }
      }
    }
  }
}

TEST(EightBitFp8, PlainReluBackward) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      // dx = saved <= 0 ? +0 : dy (a NaN saved passes dy).
      ExpectedBackward e{"fp8 plain_relu_backward " + Fp8Name(format, saturate),
                         format,
                         Fp8Table(format, saturate, [](const Value&) { return Finite(false, 0); }),
                         Fp8Table(format, saturate, [](const Value& dy) { return dy; }),
                         {}};
      for (int b = 0; b < 256; ++b)
        e.choose[b] = NegativeOrZero(Decode(format, static_cast<uint8_t>(b)));
      const leaky_q8_params p = ParamsOf(format, saturate);
      CheckBackward(
          e,
          [p](size_t n, const uint8_t* dy, const uint8_t* saved, uint8_t* dx,
              const leaky_options* o) {
            return leaky_q8_plain_relu_backward(&p, n, dy, saved, dx, o);
          },
          log);
    }
  }
}

TEST(EightBitFp8, RreluEvalBackward) {
  Log log;
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (const auto& [lower, upper] : kRreluBounds) {
        // LeakyReLU's backward from the input with the slope (lower + upper) / 2.
        const Value s = SlopeF32((lower + upper) / 2);
        ExpectedBackward e{
            "fp8 rrelu_eval_backward " + Fp8Name(format, saturate) + " lower " + Show(lower) +
                " upper " + Show(upper),
            format,
            Fp8Table(format, saturate, [](const Value& dy) { return dy; }),
            Fp8Table(format, saturate, [&](const Value& dy) { return Multiply(dy, s); }),
            {}};
        for (int b = 0; b < 256; ++b)
          e.choose[b] = Positive(Decode(format, static_cast<uint8_t>(b)));
        const leaky_q8_params p = ParamsOf(format, saturate);
        CheckBackward(
            e,
            [p, lower, upper](size_t n, const uint8_t* dy, const uint8_t* x, uint8_t* dx,
                              const leaky_options* o) {
              return leaky_q8_rrelu_eval_backward(&p, n, dy, x, dx, lower, upper, o);
            },
            log);
      }
    }
  }
}

// LEAKY_TEST_ONE_PARAMETER_SET (the sanitizer and QEMU runs): the exhaustive
// fp8 backward suites take one parameter set, and one saturation mode per
// format (the modes differ in the tables, not in the kernel's path).
bool OneParameterSet() { return std::getenv("LEAKY_TEST_ONE_PARAMETER_SET") != nullptr; }
bool OneSetSaturation(Fp8 format, int saturate) {
  return saturate == (format == Fp8::kE5M2 ? 1 : 0);
}

// ELU's backward: the forward's parameters, one with a negative scale (the
// result's side flips; alpha >= 0 still allows the result), one whose
// alpha * scale is not a float (48 bits: the sum y + alpha * scale and the
// product by dy * input_scale must be exact), tiny or huge input_scale
// (exp's argument far out: 0), a negative input_scale (exp's argument
// positive: past long double's range at E5M2's large inputs), and two
// whose alpha * scale =
// 1 - 2^-46 puts dy * input_scale * alpha * scale just below a tie that
// rounds up (E4M3 1.1875, E5M2 1.375): an f32 intermediate would make it
// the tie.
const EluParameters kFp8EluBackward[] = {{1.0, 1.0, 1.0},
                                         {1.5, 0.75, 0.5},
                                         {0.25, 1.0, 3.0},
                                         {2.0, -0.5, 0.25},
                                         {0.1f, 1.0507010f, 0.7f},
                                         {1.0, 1.0, 1e-30f},
                                         {0.5, 3.0, 1e4f},
                                         {1.0, 1.0, -0.5},
                                         {1.0 + 0x1p-23, 1.0 - 0x1p-23, 1.1875},
                                         {1.0 + 0x1p-23, 1.0 - 0x1p-23, 1.375}};

TEST(EightBitFp8, EluBackward) {
  Log log;
  // Fewer parameter sets where time is dear: the rational reference of all
  // ten is 70-90 s in a release build, which checks every one;
  // LEAKY_TEST_QUICK_SWEEP takes four; LEAKY_TEST_ONE_PARAMETER_SET (the
  // sanitizer run, whose kernels' memory accesses do not depend on the
  // parameters, and QEMU, where the four took 245 s on NEON) only the
  // set just below a tie, which checks the table builder's arithmetic,
  // with one saturation mode per format.
  const bool quick = std::getenv("LEAKY_TEST_QUICK_SWEEP") != nullptr;
  const bool one_set = OneParameterSet();
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    for (int saturate : {0, 1}) {
      for (size_t k = 0; k < std::size(kFp8EluBackward); ++k) {
        if (one_set ? k != 8 : quick && k != 0 && k != 3 && k != 7 && k != 8) continue;
        if (one_set && !OneSetSaturation(format, saturate)) continue;
        const EluParameters& elu = kFp8EluBackward[k];
        for (int from_result : {0, 1}) {
          ExpectedBackward e{"fp8 elu_backward " + Fp8Name(format, saturate) + " alpha " +
                                 Show(elu.alpha) + " scale " + Show(elu.scale) + " input_scale " +
                                 Show(elu.input_scale) + (from_result ? " saved_is_result" : ""),
                             format,
                             {},
                             {},
                             {},
                             Fp8EluBackwardRows(format, saturate, elu, from_result != 0)};
          const leaky_q8_params p = ParamsOf(format, saturate);
          CheckBackward(
              e,
              [p, elu, from_result](size_t n, const uint8_t* dy, const uint8_t* saved,
                                    uint8_t* dx, const leaky_options* o) {
                return leaky_q8_elu_backward(&p, n, dy, saved, from_result, dx, elu.alpha,
                                             elu.scale, elu.input_scale, o);
              },
              log);
        }
      }
    }
  }
}

// PReLU's backward: dx per channel as LeakyReLU's with the channel's weight;
// dweight against the exact sum of the Value terms rounded once to f32.
// Data: every (x, dy) pair in each channel (NaN and infinite codes make
// dweight NaN), and finite codes only (dweight a number: the exact sum).
TEST(EightBitFp8, PreluBackward) {
  Log log;
  const float* weights = kPreluWeights;
  struct Shape {
    size_t outer, channels, inner;
    bool all_pairs;  // element k of a channel: dy = k % 256, x = k / 256
  };
  const Shape shapes[] = {{1, kPreluChannels, 65536, true},
                          {65536, 3, 1, true},
                          {2, kPreluChannels, 1000 + 37, false},
                          {300, kPreluChannels, 1, false}};
  // LEAKY_TEST_QUICK_SWEEP leaves out the second all-pairs shape (215 s
  // under ASan with it), LEAKY_TEST_ONE_PARAMETER_SET (the sanitizer and
  // QEMU runs) the one with inner > 1 and finite codes too, keeping a
  // shape of every kernel path (all pairs in rows, and channels-last), and
  // one saturation mode per format; the release run checks everything.
  const bool quick = std::getenv("LEAKY_TEST_QUICK_SWEEP") != nullptr;
  const bool one_set = OneParameterSet();
  for (Fp8 format : {Fp8::kE4M3, Fp8::kE5M2}) {
    auto finite_code = [&](size_t k, size_t multiplier) {
      uint8_t b = static_cast<uint8_t>(k * multiplier + 13);
      while (Decode(format, b).kind != Value::kFinite) b = static_cast<uint8_t>(b + 1);
      return b;
    };
    for (const Shape& shape : shapes) {
      if ((quick || one_set) && &shape == &shapes[1]) continue;
      if (one_set && &shape == &shapes[2]) continue;
      const size_t n = shape.outer * shape.channels * shape.inner;
      std::vector<uint8_t> dy_values(n), x_values(n);
      for (size_t i = 0; i < n; ++i) {
        // k: the element's place within its channel (outer-major).
        const size_t k = (i / (shape.inner * shape.channels)) * shape.inner + i % shape.inner;
        dy_values[i] = shape.all_pairs ? static_cast<uint8_t>(k % 256) : finite_code(i, 167);
        x_values[i] = shape.all_pairs ? static_cast<uint8_t>(k / 256) : finite_code(i, 89);
      }
      // The exact dweight of each channel (the same for both saturate modes).
      std::vector<float> dweight_expected(shape.channels);
      for (size_t c = 0; c < shape.channels; ++c) {
        Value sum = Finite(false, 0);
        for (size_t o = 0; o < shape.outer; ++o) {
          for (size_t i = 0; i < shape.inner; ++i) {
            const size_t index = (o * shape.channels + c) * shape.inner + i;
            sum = Add(sum, PreluWeightTerm(Decode(format, x_values[index]),
                                           Decode(format, dy_values[index])));
          }
        }
        dweight_expected[c] = ToFloatOfSum(sum);
      }
      for (int saturate : {0, 1}) {
        if (one_set && !OneSetSaturation(format, saturate)) continue;
        const std::string what = "fp8 prelu_backward " + Fp8Name(format, saturate);
        std::vector<Table> dx_tables;
        const Table pass = Fp8Table(format, saturate, [](const Value& dy) { return dy; });
        for (size_t c = 0; c < shape.channels; ++c) {
          const Value weight = FromFloat(weights[c]);
          dx_tables.push_back(
              Fp8Table(format, saturate, [&](const Value& dy) { return Multiply(dy, weight); }));
        }
        const leaky_q8_params p = ParamsOf(format, saturate);
        ForEachTarget([&](const std::string& target) {
          for (int threads : {1, 2}) {
            for (int placement = 0; placement < 3; ++placement) {  // out, over dy, over x
              Guarded dy(n, 1), x(n, 1), dx(n, 1);
              std::memcpy(dy.data(), dy_values.data(), n);
              std::memcpy(x.data(), x_values.data(), n);
              uint8_t* out = placement == 1 ? dy.data() : placement == 2 ? x.data() : dx.data();
              std::vector<float> dweight(shape.channels + 2, -7.0f);
              const leaky_options opts = Options(threads);
              const std::string layout =
                  target + " [" + std::to_string(shape.outer) + ", " +
                  std::to_string(shape.channels) + ", " + std::to_string(shape.inner) + "]" +
                  (placement == 1 ? " dx=dy" : placement == 2 ? " dx=x" : "") +
                  " threads=" + std::to_string(threads);
              const leaky_status s =
                  leaky_q8_prelu_backward(&p, shape.outer, shape.channels, shape.inner, dy.data(),
                                          x.data(), weights, out, dweight.data() + 1, &opts);
              if (s != LEAKY_OK) {
                log.Mismatch(what + " [" + layout + "]: status " + leaky_status_string(s) + ": " +
                             leaky_last_error());
                continue;
              }
              if (!dy.GuardsIntact() || !x.GuardsIntact() || !dx.GuardsIntact() ||
                  dweight.front() != -7.0f || dweight.back() != -7.0f) {
                log.Mismatch(what + " [" + layout + "]: wrote outside the outputs");
              }
              log.Compared(n + shape.channels);
              for (size_t c = 0; c < shape.channels; ++c) {
                const float got = dweight[c + 1], expected = dweight_expected[c];
                const bool same = std::isnan(expected)
                                      ? std::isnan(got)
                                      : std::memcmp(&got, &expected, sizeof(float)) == 0;
                if (!same) {
                  char text[160];
                  std::snprintf(text, sizeof(text), " dweight[%zu]: expected %a, got %a", c,
                                static_cast<double>(expected), static_cast<double>(got));
                  log.Mismatch(what + " [" + layout + "]" + text);
                }
              }
              for (size_t i = 0; i < n; ++i) {
                const size_t c = (i / shape.inner) % shape.channels;
                const uint8_t g = dy_values[i], v = x_values[i];
                const Expected one{what, Positive(Decode(format, v)) ? pass : dx_tables[c], format};
                if (!Matches(one, g, out[i], log)) {
                  const std::string detail = " channel " + std::to_string(c) + " (weight " +
                                             Show(weights[c]) + ") dy " + Hex8(g) + " x " +
                                             Hex8(v) + ": expected " + ExpectedText(one, g) +
                                             ", got " + Hex8(out[i]);
                  log.Mismatch(what + detail,
                               what + " [" + layout + "] index " + std::to_string(i) + detail);
                }
              }
            }
          }
        });
      }
    }
  }
}

// ---------------------------------------------------------------- parameters and bad input

TEST(EightBitParams, InitDefaults) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8, LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    const leaky_q8_params p = leaky_q8_params_init(type);
    SCOPED_TRACE("type " + std::to_string(type));
    EXPECT_EQ(p.type, type);
    EXPECT_EQ(p.input.scale, 1.0);
    EXPECT_EQ(p.output.scale, 1.0);
    EXPECT_EQ(p.input.zero_point, 0);
    EXPECT_EQ(p.output.zero_point, 0);
    EXPECT_EQ(p.saturate, 1);
    if (type == LEAKY_QU8) {
      EXPECT_EQ(p.output_min, 0);
      EXPECT_EQ(p.output_max, 255);
    } else if (type == LEAKY_QS8) {
      EXPECT_EQ(p.output_min, -128);
      EXPECT_EQ(p.output_max, 127);
    }
  }
}

// Runs every entry point with `p` and the given pointers; each must return
// `want`, and leave the outputs as they were.
struct Buffers {
  Buffers() {
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 37);
    y.fill(0x5a);
    f32.fill(1.5f);
  }
  std::array<uint8_t, 64> x{}, y{};
  std::array<float, 64> f32{};
  std::array<float, 8> weights{0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f, 0.25f};
};

void ExpectUntouched(const Buffers& b, const std::string& what) {
  for (uint8_t v : b.y) {
    if (v != 0x5a) {
      ADD_FAILURE() << what << ": an error wrote the output";
      return;
    }
  }
}

// The forward entry points, by name, with one bad parameter set.
struct Entry {
  const char* name;
  std::function<leaky_status(const leaky_q8_params*, size_t, const uint8_t*, uint8_t*)> call;
};
std::vector<Entry> ForwardEntries(const leaky_options* o, const float* weights) {
  return {
      {"leaky_relu_forward",
       [o](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_leaky_relu_forward(p, n, x, y, 0.1, o);
       }},
      {"plain_relu_forward",
       [o](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_plain_relu_forward(p, n, x, y, o);
       }},
      {"rrelu_eval_forward",
       [o](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_rrelu_eval_forward(p, n, x, y, 0.125, 1.0 / 3.0, o);
       }},
      {"elu_forward",
       [o](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_elu_forward(p, n, x, y, 1.0, 1.0, 1.0, o);
       }},
      {"prelu_forward",
       [o, weights](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_prelu_forward(p, n / 8, 8, 1, x, weights, y, o);
       }},
      {"fp8 leaky_relu_backward",  // y as dx, x as dy and saved (fp8 only)
       [o](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_leaky_relu_backward(p, n, x, x, 0, y, 0.1, o);
       }},
      {"fp8 plain_relu_backward",
       [o](const leaky_q8_params* p, size_t n, const uint8_t* x, uint8_t* y) {
         return leaky_q8_plain_relu_backward(p, n, x, x, y, o);
       }},
  };
}

bool IsFp8(leaky_type8 t) { return t == LEAKY_FP8_E4M3 || t == LEAKY_FP8_E5M2; }

TEST(EightBitErrors, NullPointers) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8, LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    const leaky_q8_params p = leaky_q8_params_init(type);
    Buffers b;
    for (const Entry& e : ForwardEntries(nullptr, b.weights.data())) {
      // Quantized backward is refused whatever its pointers (the header
      // does not order the two errors): QuantizedBackwardUnsupported.
      const bool backward = std::string(e.name).find("backward") != std::string::npos;
      if (backward && !IsFp8(type)) continue;
      const leaky_status ok = LEAKY_OK;
      SCOPED_TRACE(std::string(e.name) + " type " + std::to_string(type));
      EXPECT_EQ(LEAKY_ERROR_NULL_POINTER, e.call(&p, 64, nullptr, b.y.data()));
      ExpectUntouched(b, e.name);
      EXPECT_EQ(LEAKY_ERROR_NULL_POINTER, e.call(&p, 64, b.x.data(), nullptr));
      EXPECT_EQ(LEAKY_ERROR_NULL_POINTER, e.call(nullptr, 64, b.x.data(), b.y.data()));
      ExpectUntouched(b, e.name);
      // n == 0 accepts null data pointers.
      EXPECT_EQ(ok, e.call(&p, 0, nullptr, nullptr));
    }
    // One null source of two (backward).
    if (IsFp8(type)) {
      EXPECT_EQ(
          LEAKY_ERROR_NULL_POINTER,
          leaky_q8_leaky_relu_backward(&p, 64, b.x.data(), nullptr, 0, b.y.data(), 0.1, nullptr));
      EXPECT_EQ(LEAKY_ERROR_NULL_POINTER,
                leaky_q8_plain_relu_backward(&p, 64, nullptr, b.x.data(), b.y.data(), nullptr));
      ExpectUntouched(b, "backward with a null source");
    }
    EXPECT_EQ(LEAKY_ERROR_NULL_POINTER,
              leaky_q8_prelu_forward(&p, 8, 8, 1, b.x.data(), nullptr, b.y.data(), nullptr));
    ExpectUntouched(b, "prelu with null weights");
  }
  Buffers b;
  EXPECT_EQ(LEAKY_ERROR_NULL_POINTER,
            leaky_fp8_from_f32(LEAKY_FP8_E4M3, 64, nullptr, b.y.data(), 1));
  EXPECT_EQ(LEAKY_ERROR_NULL_POINTER,
            leaky_fp8_from_f32(LEAKY_FP8_E5M2, 64, b.f32.data(), nullptr, 1));
  ExpectUntouched(b, "fp8_from_f32");
  EXPECT_EQ(LEAKY_ERROR_NULL_POINTER, leaky_fp8_to_f32(LEAKY_FP8_E4M3, 64, nullptr, b.f32.data()));
  EXPECT_EQ(LEAKY_ERROR_NULL_POINTER, leaky_fp8_to_f32(LEAKY_FP8_E5M2, 64, b.x.data(), nullptr));
  EXPECT_EQ(LEAKY_OK, leaky_fp8_from_f32(LEAKY_FP8_E4M3, 0, nullptr, nullptr, 1));
  EXPECT_EQ(LEAKY_OK, leaky_fp8_to_f32(LEAKY_FP8_E5M2, 0, nullptr, nullptr));
}

// Quantization parameters a quantized call must refuse, with the field.
std::vector<std::pair<std::string, leaky_q8_params>> BadQuantizations(leaky_type8 type) {
  const leaky_q8_params good = leaky_q8_params_init(type);
  const int lowest = type == LEAKY_QU8 ? 0 : -128, highest = type == LEAKY_QU8 ? 255 : 127;
  std::vector<std::pair<std::string, leaky_q8_params>> bad;
  for (double scale : {0.0, -0.0, -1.0, std::nan(""), double{INFINITY}, -double{INFINITY}}) {
    leaky_q8_params p = good;
    p.input.scale = scale;
    bad.emplace_back("input.scale " + Show(scale), p);
    p = good;
    p.output.scale = scale;
    bad.emplace_back("output.scale " + Show(scale), p);
  }
  for (int zp : {lowest - 1, highest + 1, 100000, -100000}) {
    leaky_q8_params p = good;
    p.input.zero_point = zp;
    bad.emplace_back("input.zero_point " + std::to_string(zp), p);
    p = good;
    p.output.zero_point = zp;
    bad.emplace_back("output.zero_point " + std::to_string(zp), p);
  }
  leaky_q8_params p = good;
  p.output_min = lowest + 10;
  p.output_max = lowest + 9;
  bad.emplace_back("output_min > output_max", p);
  p = good;
  p.output_min = lowest - 1;
  bad.emplace_back("output_min below the type", p);
  p = good;
  p.output_max = highest + 1;
  bad.emplace_back("output_max above the type", p);
  return bad;
}

TEST(EightBitErrors, BadQuantization) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    Buffers b;
    for (const auto& [field, p] : BadQuantizations(type)) {
      for (const Entry& e : ForwardEntries(nullptr, b.weights.data())) {
        if (std::string(e.name).find("backward") != std::string::npos) continue;
        EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER, e.call(&p, 64, b.x.data(), b.y.data()))
            << e.name << " type " << type << " with " << field << ": " << leaky_last_error();
        ExpectUntouched(b, std::string(e.name) + " with " + field);
      }
    }
  }
}

TEST(EightBitErrors, OutOfRangeType) {
  Buffers b;
  for (int t : {-1, 4, 100}) {
    leaky_q8_params p = leaky_q8_params_init(LEAKY_QU8);
    p.type = static_cast<leaky_type8>(t);
    for (const Entry& e : ForwardEntries(nullptr, b.weights.data())) {
      EXPECT_EQ(LEAKY_ERROR_INVALID_DTYPE, e.call(&p, 64, b.x.data(), b.y.data()))
          << e.name << " type " << t;
      ExpectUntouched(b, e.name);
    }
  }
  // The conversions take fp8 types only.
  for (int t : {int{LEAKY_QU8}, int{LEAKY_QS8}, -1, 4}) {
    EXPECT_EQ(LEAKY_ERROR_INVALID_DTYPE,
              leaky_fp8_from_f32(static_cast<leaky_type8>(t), 64, b.f32.data(), b.y.data(), 1))
        << "from_f32 type " << t;
    ExpectUntouched(b, "from_f32");
    std::array<float, 64> f = b.f32;
    EXPECT_EQ(LEAKY_ERROR_INVALID_DTYPE,
              leaky_fp8_to_f32(static_cast<leaky_type8>(t), 64, b.x.data(), f.data()))
        << "to_f32 type " << t;
    EXPECT_EQ(f, b.f32) << "to_f32 wrote its output on error";
  }
}

TEST(EightBitErrors, QuantizedBackwardUnsupported) {
  Buffers b;
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8}) {
    const leaky_q8_params p = leaky_q8_params_init(type);
    for (int from_result : {0, 1}) {
      EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
                leaky_q8_leaky_relu_backward(&p, 64, b.x.data(), b.x.data(), from_result,
                                             b.y.data(), 0.1, nullptr));
    }
    EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
              leaky_q8_plain_relu_backward(&p, 64, b.x.data(), b.x.data(), b.y.data(), nullptr));
    EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
              leaky_q8_rrelu_eval_backward(&p, 64, b.x.data(), b.x.data(), b.y.data(), 0.1, 0.2,
                                           nullptr));
    EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
              leaky_q8_elu_backward(&p, 64, b.x.data(), b.x.data(), 0, b.y.data(), 1.0, 1.0, 1.0,
                                    nullptr));
    float weight[4] = {0.25f, 0.25f, 0.25f, 0.25f}, dweight[4] = {7, 7, 7, 7};
    EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
              leaky_q8_prelu_backward(&p, 4, 4, 4, b.x.data(), b.x.data(), weight, b.y.data(),
                                      dweight, nullptr));
    EXPECT_EQ(dweight[0], 7.0f);
    ExpectUntouched(b, "quantized backward");
  }
}

TEST(EightBitErrors, Fp8BackwardRefusals) {
  Buffers b;
  const leaky_q8_params p = leaky_q8_params_init(LEAKY_FP8_E4M3);
  EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
            leaky_q8_elu_backward(&p, 64, b.x.data(), b.x.data(), 1, b.y.data(), -1.0, 1.0, 1.0,
                                  nullptr));
  EXPECT_NE(std::string(leaky_last_error()).find("needs alpha >= 0"), std::string::npos);
  EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
            leaky_q8_elu_backward(&p, 64, b.x.data(), b.x.data(), 0, b.y.data(), 1.0, NAN, 1.0,
                                  nullptr));
  EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
            leaky_q8_rrelu_eval_backward(&p, 64, b.x.data(), b.x.data(), b.y.data(), 0.3, 0.2,
                                         nullptr));
  float weight[4] = {0.25f, NAN, 0.25f, 0.25f}, dweight[4] = {7, 7, 7, 7};
  EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
            leaky_q8_prelu_backward(&p, 4, 4, 4, b.x.data(), b.x.data(), weight, b.y.data(),
                                    dweight, nullptr));
  EXPECT_NE(std::string(leaky_last_error()).find("weight[1] is not finite"), std::string::npos);
  EXPECT_EQ(LEAKY_ERROR_NULL_POINTER,
            leaky_q8_prelu_backward(&p, 4, 4, 4, nullptr, b.x.data(), weight, b.y.data(),
                                    dweight, nullptr));
  for (float d : dweight) EXPECT_EQ(d, 7.0f);
  ExpectUntouched(b, "fp8 backward refusals");
  // n == 0: dweight is zeros, as the float op's.
  EXPECT_EQ(LEAKY_OK, leaky_q8_prelu_backward(&p, 0, 4, 4, nullptr, nullptr, weight, nullptr,
                                              dweight, nullptr));
  for (float d : dweight) EXPECT_EQ(d, 0.0f);
}

TEST(EightBitErrors, BadOpParameters) {
  Buffers b;
  const double bad_values[] = {std::nan(""), double{INFINITY}, -double{INFINITY}};
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_QS8, LEAKY_FP8_E4M3, LEAKY_FP8_E5M2}) {
    const leaky_q8_params p = leaky_q8_params_init(type);
    SCOPED_TRACE("type " + std::to_string(type));
    for (double v : bad_values) {
      EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                leaky_q8_leaky_relu_forward(&p, 64, b.x.data(), b.y.data(), v, nullptr))
          << "slope " << v;
      EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                leaky_q8_rrelu_eval_forward(&p, 64, b.x.data(), b.y.data(), v, 0.3, nullptr))
          << "lower " << v;
      EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                leaky_q8_rrelu_eval_forward(&p, 64, b.x.data(), b.y.data(), 0.1, v, nullptr))
          << "upper " << v;
      EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                leaky_q8_elu_forward(&p, 64, b.x.data(), b.y.data(), v, 1.0, 1.0, nullptr))
          << "alpha " << v;
      EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                leaky_q8_elu_forward(&p, 64, b.x.data(), b.y.data(), 1.0, v, 1.0, nullptr))
          << "scale " << v;
      EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                leaky_q8_elu_forward(&p, 64, b.x.data(), b.y.data(), 1.0, 1.0, v, nullptr))
          << "input_scale " << v;
      std::array<float, 8> weights = b.weights;
      weights[5] = static_cast<float>(v);
      EXPECT_EQ(
          LEAKY_ERROR_INVALID_PARAMETER,
          leaky_q8_prelu_forward(&p, 8, 8, 1, b.x.data(), weights.data(), b.y.data(), nullptr))
          << "weight " << v;
      if (IsFp8(type)) {
        EXPECT_EQ(
            LEAKY_ERROR_INVALID_PARAMETER,
            leaky_q8_leaky_relu_backward(&p, 64, b.x.data(), b.x.data(), 0, b.y.data(), v, nullptr))
            << "backward slope " << v;
      }
    }
    EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
              leaky_q8_rrelu_eval_forward(&p, 64, b.x.data(), b.y.data(), 0.3, 0.1, nullptr))
        << "lower > upper";
    ExpectUntouched(b, "a bad op parameter");
    if (IsFp8(type)) {
      // Backward from the result needs slope >= 0.
      EXPECT_EQ(LEAKY_ERROR_UNSUPPORTED,
                leaky_q8_leaky_relu_backward(&p, 64, b.x.data(), b.x.data(), 1, b.y.data(), -0.5,
                                             nullptr));
      // saturate is 0 or 1.
      for (int saturate : {-1, 2}) {
        leaky_q8_params q = p;
        q.saturate = saturate;
        for (const Entry& e : ForwardEntries(nullptr, b.weights.data())) {
          EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER, e.call(&q, 64, b.x.data(), b.y.data()))
              << e.name << " saturate " << saturate;
        }
        EXPECT_EQ(LEAKY_ERROR_INVALID_PARAMETER,
                  leaky_fp8_from_f32(type, 64, b.f32.data(), b.y.data(), saturate))
            << "from_f32 saturate " << saturate;
      }
      ExpectUntouched(b, "fp8 bad parameters");
    }
  }
}

TEST(EightBitErrors, OverlapAndOptions) {
  for (leaky_type8 type : {LEAKY_QU8, LEAKY_FP8_E4M3}) {
    const leaky_q8_params p = leaky_q8_params_init(type);
    std::array<uint8_t, 80> buffer{};
    for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<uint8_t>(i);
    const std::array<uint8_t, 80> before = buffer;
    EXPECT_EQ(LEAKY_ERROR_OVERLAP,
              leaky_q8_leaky_relu_forward(&p, 64, buffer.data(), buffer.data() + 1, 0.1, nullptr));
    EXPECT_EQ(LEAKY_ERROR_OVERLAP,
              leaky_q8_plain_relu_forward(&p, 64, buffer.data() + 8, buffer.data(), nullptr));
    EXPECT_EQ(buffer, before) << "an overlap error wrote the output";
    Buffers b;
    for (int threads : {-1, -100}) {
      const leaky_options o{threads, -1, nullptr};
      for (const Entry& e : ForwardEntries(&o, b.weights.data())) {
        if (!IsFp8(type) && std::string(e.name).find("backward") != std::string::npos) continue;
        EXPECT_EQ(LEAKY_ERROR_INVALID_OPTIONS, e.call(&p, 64, b.x.data(), b.y.data()))
            << e.name << " num_threads " << threads;
      }
    }
    ExpectUntouched(b, "bad options");
  }
}

}  // namespace
}  // namespace leaky::test::eight_bit

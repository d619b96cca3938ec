#include "eight_bit_models.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "eight_bit_data.h"

namespace leaky::toolkit {

namespace {

using u128 = unsigned __int128;

enum class Rule { kEven, kAway, kTowardZero, kFloor };

// t = scale_in * k * factor / scale_out, exactly: the doubles are integers
// times powers of two, so t is P / (D * 2^s) with P < 2^114 and D < 2^53.
struct Quotient {
  bool huge = false;  // |t| >= 2^40: every rule clamps it (its integer unknown here)
  bool negative = false;
  uint64_t whole = 0;    // floor(|t|)
  bool inexact = false;  // |t| is not an integer
  int half = -1;         // the fraction against 1/2: -1 below, 0 a tie, 1 above
};

uint64_t Mantissa(double d, int* exponent) {  // d = mantissa * 2^exponent, 53 bits
  const double m = std::frexp(std::fabs(d), exponent);
  *exponent -= 53;
  return static_cast<uint64_t>(std::ldexp(m, 53));
}

Quotient Divide(double scale_in, int32_t k, double factor, double scale_out) {
  Quotient t;
  if (k == 0 || factor == 0) return t;
  t.negative = (k < 0) != (factor < 0);
  int e_in = 0, e_factor = 0, e_out = 0;
  const u128 p = static_cast<u128>(Mantissa(scale_in, &e_in)) * static_cast<uint64_t>(std::abs(k)) *
                 Mantissa(factor, &e_factor);
  const uint64_t d = Mantissa(scale_out, &e_out);
  const int e = e_in + e_factor - e_out;
  // p >= 2^104 and d < 2^53: with e >= 0, |t| > 2^51.
  if (e >= 0) {
    t.huge = true;
    return t;
  }
  if (-e > 74) {  // |t| < 2^114 / 2^126: far below a half
    t.inexact = true;
    return t;
  }
  const u128 denominator = static_cast<u128>(d) << -e;
  const u128 whole = p / denominator, rest = p % denominator;
  if (whole >= (u128{1} << 40)) {
    t.huge = true;
    return t;
  }
  t.whole = static_cast<uint64_t>(whole);
  t.inexact = rest != 0;
  const u128 twice = rest * 2;
  t.half = twice < denominator ? -1 : twice == denominator ? 0 : 1;
  return t;
}

int64_t Round(const Quotient& t, Rule rule) {
  uint64_t m = t.whole;
  if (t.inexact) {
    switch (rule) {
      case Rule::kEven:
        m += t.half > 0 || (t.half == 0 && (m & 1));
        break;
      case Rule::kAway:
        m += t.half >= 0;
        break;
      case Rule::kTowardZero:
        break;
      case Rule::kFloor:
        m += t.negative;
        break;
    }
  }
  return t.negative ? -static_cast<int64_t>(m) : static_cast<int64_t>(m);
}

// The exact f(v) / output.scale of a quantized input.
Quotient Requantized(const Q8Problem& p, uint8_t x) {
  const int32_t k = Q8Integer(p.q.type, x) - p.q.input.zero_point;
  return Divide(p.q.input.scale, k, k > 0 ? 1.0 : p.negative_slope, p.q.output.scale);
}

// A rounded floating-point value under `rule`.
double RoundAs(double t, Rule rule) {
  switch (rule) {
    case Rule::kEven:
      return std::nearbyint(t);
    case Rule::kAway:
      return std::round(t);
    case Rule::kTowardZero:
      return std::trunc(t);
    case Rule::kFloor:
      return std::floor(t);
  }
  return t;
}

Rule RuleOf(Q8Model::Rounding r) {
  switch (r) {
    case Q8Model::Rounding::kTiesAway:
      return Rule::kAway;
    case Q8Model::Rounding::kTowardZero:
      return Rule::kTowardZero;
    case Q8Model::Rounding::kDown:
      return Rule::kFloor;
    default:
      return Rule::kEven;
  }
}

std::optional<uint8_t> Quantized(const Q8Problem& p, const Q8Model& model, uint8_t x) {
  using A = Q8Model::Arithmetic;
  const leaky_q8_params& q = p.q;
  const int32_t k = Q8Integer(q.type, x) - q.input.zero_point;
  const Rule rule = RuleOf(model.rounding);
  // The rounded integer r, or a huge value whose side is all that counts.
  int64_t r = 0;
  bool huge = false;
  if (model.arithmetic == A::kExact) {
    const Quotient t = Requantized(p, x);
    huge = t.huge;
    r = huge ? (t.negative ? -(int64_t{1} << 40) : int64_t{1} << 40) : Round(t, rule);
  } else {
    double t = 0;
    if (model.arithmetic == A::kDouble) {
      const double v = q.input.scale * k;
      t = (v > 0 ? v : v * p.negative_slope) / q.output.scale;
    } else if (model.arithmetic == A::kFloat) {
      const float v = static_cast<float>(q.input.scale) * static_cast<float>(k);
      t = (v > 0 ? v : v * static_cast<float>(p.negative_slope)) /
          static_cast<float>(q.output.scale);
    } else {
      float f = static_cast<float>(k) * static_cast<float>(q.input.scale / q.output.scale);
      if (k <= 0) f *= static_cast<float>(p.negative_slope);
      t = f;
    }
    if (!(std::fabs(t) < 0x1p40)) return std::nullopt;
    r = static_cast<int64_t>(RoundAs(t, rule));
  }
  if (huge && model.clamp == Q8Model::Clamp::kWrapped) return std::nullopt;
  const int64_t v = (model.input_zero_point ? q.input.zero_point : q.output.zero_point) + r;
  switch (model.clamp) {
    case Q8Model::Clamp::kWrapped:
      return static_cast<uint8_t>(v & 0xff);
    case Q8Model::Clamp::kTypeRange:
      return static_cast<uint8_t>(std::clamp<int64_t>(v, Type8Min(q.type), Type8Max(q.type)) &
                                  0xff);
    default:
      return static_cast<uint8_t>(std::clamp<int64_t>(v, q.output_min, q.output_max) & 0xff);
  }
}

// ------------------------------------------------------------------ fp8

struct Fp8Format {
  int mantissa_bits, bias;
  uint8_t max_code;  // the largest finite magnitude's code
};

Fp8Format FormatOf(leaky_type8 type) {
  return type == LEAKY_FP8_E4M3 ? Fp8Format{3, 7, 0x7e} : Fp8Format{2, 15, 0x7b};
}

// An exact double (an fp8 value times an f32 slope needs at most 28 bits) to
// fp8 under `rule` (kEven, kAway, kTowardZero); overflow as leaky/eight_bit.h.
uint8_t Encode(leaky_type8 type, double t, Rule rule, bool saturate) {
  const Fp8Format f = FormatOf(type);
  const uint8_t sign = std::signbit(t) ? 0x80 : 0;
  // Infinity (E5M2) or NaN (E4M3) unless saturating; a finite value cut
  // toward zero never overflows.
  const uint8_t infinite = saturate ? f.max_code : type == LEAKY_FP8_E5M2 ? 0x7c : 0x7f;
  const uint8_t overflow = rule == Rule::kTowardZero ? f.max_code : infinite;
  const double a = std::fabs(t);
  if (a == 0) return sign;
  int e2 = 0;
  std::frexp(a, &e2);  // a in [2^(e2-1), 2^e2)
  const int emin = 1 - f.bias;
  const int e = std::max(e2 - 1, emin);
  if (std::isinf(a)) return sign | infinite;
  if (e > 40) return sign | overflow;
  const double n = std::ldexp(a, f.mantissa_bits - e);  // a in quanta of its binade, exact
  const double whole = std::floor(n), fraction = n - whole;
  bool up = false;
  switch (rule) {
    case Rule::kEven:
      up = fraction > 0.5 || (fraction == 0.5 && std::fmod(whole, 2) == 1);
      break;
    case Rule::kAway:
      up = fraction >= 0.5;
      break;
    default:
      break;
  }
  // The exponent field carries when the mantissa rounds up to 2^m, and a
  // subnormal (e == emin, whole < 2^m) lands on field 0 by the same sum.
  const int64_t code = (int64_t{e + f.bias} << f.mantissa_bits) + static_cast<int64_t>(whole) + up -
                       (int64_t{1} << f.mantissa_bits);
  return sign | (code > f.max_code ? overflow : static_cast<uint8_t>(code));
}

std::optional<uint8_t> Fp8(const Q8Problem& p, const Q8Model& model, uint8_t x, uint8_t dy) {
  const leaky_type8 type = p.q.type;
  const double saved = Q8Real(p.q, false, x);
  const double base = p.backward ? Q8Real(p.q, false, dy) : saved;
  if (std::isnan(saved) || std::isnan(base)) return std::nullopt;
  const float slope = static_cast<float>(p.negative_slope);
  // An fp8 value times an f32 slope is exact in double; f32 rounds it.
  double t = saved > 0 ? base : base * static_cast<double>(slope);
  if (model.arithmetic == Q8Model::Arithmetic::kFloat) {
    t = saved > 0 ? static_cast<float>(base) : static_cast<float>(base) * slope;
  }
  if (std::isnan(t)) return std::nullopt;  // -inf * 0: the op's own NaN
  const bool saturate = (p.q.saturate != 0) != (model.clamp == Q8Model::Clamp::kFlipped);
  return Encode(type, t, RuleOf(model.rounding), saturate);
}

}  // namespace

std::vector<Q8Model> Q8Mistakes(const Q8Problem& p) {
  using M = Q8Model;
  const bool quantized = IsQuantized(p.q.type);
  std::vector<M::Arithmetic> arithmetic = {M::Arithmetic::kExact, M::Arithmetic::kFloat};
  std::vector<M::Rounding> rounding = {M::Rounding::kNearestEven, M::Rounding::kTiesAway,
                                       M::Rounding::kTowardZero};
  std::vector<M::Clamp> clamps = {M::Clamp::kOutput, M::Clamp::kFlipped};
  std::vector<bool> zero_points = {false};
  if (quantized) {
    arithmetic = {M::Arithmetic::kExact, M::Arithmetic::kDouble, M::Arithmetic::kFloat,
                  M::Arithmetic::kFloatMultiplier};
    rounding.push_back(M::Rounding::kDown);
    clamps = {M::Clamp::kOutput, M::Clamp::kWrapped, M::Clamp::kTypeRange};
    if (p.q.input.zero_point != p.q.output.zero_point) zero_points.push_back(true);
  }
  std::vector<M> models;
  for (auto a : arithmetic)
    for (auto r : rounding)
      for (auto c : clamps)
        for (bool z : zero_points) {
          const M m{a, r, c, z};
          if (m.Deviations() > 0) models.push_back(m);
        }
  std::stable_sort(models.begin(), models.end(),
                   [](const M& a, const M& b) { return a.Deviations() < b.Deviations(); });
  return models;
}

std::optional<uint8_t> PredictQ8(const Q8Problem& p, const Q8Model& model, uint8_t x, uint8_t dy) {
  return IsQuantized(p.q.type) ? Quantized(p, model, x) : Fp8(p, model, x, dy);
}

bool Q8IsTie(const Q8Problem& p, uint8_t x) {
  if (!IsQuantized(p.q.type)) return false;
  const Quotient t = Requantized(p, x);
  return !t.huge && t.inexact && t.half == 0;
}

std::optional<uint64_t> Q8Steps(leaky_type8 type, uint8_t a, uint8_t b) {
  if (IsQuantized(type)) {
    return static_cast<uint64_t>(std::abs(Q8Integer(type, a) - Q8Integer(type, b)));
  }
  auto nan = [&](uint8_t c) {
    return type == LEAKY_FP8_E4M3 ? (c & 0x7f) == 0x7f : (c & 0x7f) > 0x7c;
  };
  if (nan(a) || nan(b)) return std::nullopt;
  auto ordered = [](uint8_t c) -> int { return c & 0x80 ? -(c & 0x7f) : c; };
  return static_cast<uint64_t>(std::abs(ordered(a) - ordered(b)));
}

}  // namespace leaky::toolkit

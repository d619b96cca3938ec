#include "explain_values.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "leaky/leaky.hpp"

namespace leaky::toolkit {

namespace {

// base * slope as the kernel computes it (f32 for f32 and the half types,
// f64 for f64), stored to `dtype` under `rounding`. The half types round
// the f32 product once more on the store, and that store is where a port's
// rounding mode differs (vstore_half_rtz, bf16 by truncation); f32 and f64
// round the product itself.
uint64_t Product(leaky_dtype dtype, double base, double slope, ValueModel::Rounding rounding) {
  uint64_t bits = 0;
  int too_far = 0;  // +1: the nearest-even result lies farther from 0 than the exact one
  double stored = 0;  // f32 and the half types: the product as the store rounds it
  if (dtype == LEAKY_F64) {
    const double p = base * slope;
    bits = FromDouble(dtype, p);
    const double error = std::fma(base, slope, -p);  // exact - p
    if (std::isfinite(p) && error != 0) too_far = std::signbit(error) != std::signbit(p) ? 1 : -1;
  } else {
    // A half or f32 value times an f32 slope is exact in double.
    const double exact = base * static_cast<double>(static_cast<float>(slope));
    stored = dtype == LEAKY_F32 ? exact : static_cast<double>(static_cast<float>(exact));
    bits = FromDouble(dtype, stored);
    const double back = ToDouble(dtype, bits);
    if (!std::isnan(stored) && back != stored)
      too_far = std::fabs(back) > std::fabs(stored) ? 1 : -1;
  }
  // One step of the magnitude: the patterns are sign-magnitude.
  if (rounding == ValueModel::Rounding::kTowardZero && too_far > 0) --bits;
  if (rounding == ValueModel::Rounding::kAwayFromZero && too_far < 0) ++bits;
  // Ties away from zero (a hand-written half store adding half an ulp): an
  // exact tie that nearest-even rounded toward zero goes one step out.
  if (rounding == ValueModel::Rounding::kNearestAway && too_far < 0 && dtype != LEAKY_F64) {
    const double down = std::fabs(ToDouble(dtype, bits)), up = std::fabs(ToDouble(dtype, bits + 1));
    if (up - std::fabs(stored) == std::fabs(stored) - down) ++bits;
  }
  return bits;
}

// `slope` stored as `type`, to nearest even or truncated toward zero.
double StoredAs(leaky_dtype type, double slope, bool truncated) {
  const uint64_t bits = FromDouble(type, slope);
  const double back = ToDouble(type, bits);
  if (truncated && std::fabs(back) > std::fabs(slope)) return ToDouble(type, bits - 1);
  return back;
}

// What a model has going for it over the differing elements.
struct Score {
  uint64_t explained = 0, predicted = 0, contradicted = 0;
};

Score Evaluate(const ValueInput& in, const ValueModel& m, const std::vector<char>& differs) {
  Score s;
  const uint64_t n = in.golden->bits.size();
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t p = Predict(in, m, i);
    if (SameValue(in.dtype, p, in.golden->bits[i])) continue;
    ++s.predicted;
    if (!differs[i])
      ++s.contradicted;
    else if (SameValue(in.dtype, p, in.output->bits[i]))
      ++s.explained;
  }
  return s;
}

// The slopes a wrong negative side suggests: the median ratio of output to
// input, as f32 and rounded to 1-3 significant digits (a hard-coded 0.01).
std::vector<double> SlopeGuesses(const ValueInput& in, const std::vector<uint64_t>& differing) {
  std::vector<double> ratios;
  for (uint64_t i : differing) {
    const double gate = in.input->values[i];
    const double base = in.backward ? in.dy->values[i] : gate;
    const double out = in.output->values[i];
    if (gate > 0 || !std::isfinite(base) || base == 0 || !std::isfinite(out)) continue;
    if (std::fabs(base) < 1e-30) continue;  // tiny inputs say nothing of the slope
    ratios.push_back(out / base);
  }
  // The slope's simple relations: 1/s (divided), s^2 (applied twice),
  // 1 - s, -s (a sign slip).
  const double s = in.negative_slope;
  std::vector<double> guesses = {0.0, 1.0};
  for (double r : {s != 0 ? 1 / s : 0.0, s * s, 1 - s, -s}) {
    guesses.push_back(in.dtype == LEAKY_F64 ? r : static_cast<float>(r));
  }
  if (ratios.empty()) return guesses;
  std::nth_element(ratios.begin(), ratios.begin() + static_cast<long>(ratios.size() / 2),
                   ratios.end());
  const double median = ratios[ratios.size() / 2];
  guesses.push_back(static_cast<float>(median));
  for (int digits = 1; digits <= 3 && median != 0; ++digits) {
    const double scale = std::pow(10.0, digits - 1 - std::floor(std::log10(std::fabs(median))));
    guesses.push_back(std::round(median * scale) / scale);
  }
  return guesses;
}

}  // namespace

std::vector<ValueModel> ValueCandidates(const ValueInput& in,
                                        const std::vector<uint64_t>& differing) {
  using M = ValueModel;
  const bool half = in.dtype == LEAKY_F16 || in.dtype == LEAKY_BF16;
  const double exact =
      in.dtype == LEAKY_F64 ? in.negative_slope : static_cast<float>(in.negative_slope);
  std::vector<M> models;
  M op;
  op.slope_value = exact;
  op.flush_type = in.dtype == LEAKY_F64 ? LEAKY_F64 : LEAKY_F32;
  std::vector<M> slopes = {op};
  // The slope stored in a narrower type first: the half types (and f32
  // under f64 data), to nearest or truncated.
  std::vector<leaky_dtype> narrower = {LEAKY_F16, LEAKY_BF16};
  if (in.dtype == LEAKY_F64) narrower.push_back(LEAKY_F32);
  std::vector<double> seen = {exact};
  for (leaky_dtype t : narrower) {
    for (bool truncated : {false, true}) {
      const double v = StoredAs(t, in.negative_slope, truncated);
      if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
      seen.push_back(v);
      M m = op;
      m.slope = M::Slope::kRounded;
      m.slope_value = v;
      m.slope_type = t;
      m.slope_truncated = truncated;
      slopes.push_back(m);
    }
  }
  // The product through a half type before an f32/f64 store.
  if (!half) {
    for (leaky_dtype t : {LEAKY_F16, LEAKY_BF16}) {
      M m = op;
      m.through = t;
      m.through_set = true;
      models.push_back(m);
    }
  }
  // Another slope, the compare, the rounding mode: one change each.
  for (size_t k = 1; k < slopes.size(); ++k) models.push_back(slopes[k]);
  for (double guess : SlopeGuesses(in, differing)) {
    if (std::find(seen.begin(), seen.end(), guess) != seen.end()) continue;
    M m = op;
    m.slope = M::Slope::kOther;
    m.slope_value = guess;
    models.push_back(m);
  }
  {
    M relu = op;  // `x > 0 ? x : 0`: not x * 0, which keeps NaN, -inf's NaN and -0
    relu.slope = M::Slope::kOther;
    relu.slope_value = 0;
    relu.zero_branch = true;
    models.push_back(relu);
  }
  for (M::Gate gate :
       {M::Gate::kGreaterEqual, M::Gate::kNone, M::Gate::kSwapped, M::Gate::kNanPasses}) {
    M m = op;
    m.gate = gate;
    models.push_back(m);
  }
  for (const M& s : slopes) {
    for (M::Rounding r : {M::Rounding::kTowardZero, M::Rounding::kAwayFromZero}) {
      M m = s;
      m.rounding = r;
      models.push_back(m);
    }
  }
  // Flushing, at the arithmetic's threshold: f32's (f64's), or f16's where
  // an f16 kernel multiplied in f16.
  std::vector<leaky_dtype> thresholds = {op.flush_type};
  if (in.dtype == LEAKY_F16) thresholds.push_back(LEAKY_F16);
  for (const M& s : slopes) {
    for (leaky_dtype t : thresholds) {
      for (int flush = 1; flush <= 3; ++flush) {
        M m = s;
        m.flush_type = t;
        m.flush_results = flush & 1;
        m.flush_inputs = flush & 2;
        models.push_back(m);
      }
    }
  }
  // Ties rounded away from zero on the store (the exact slope).
  {
    M m = op;
    m.rounding = M::Rounding::kNearestAway;
    models.push_back(m);
  }
  // Backward: an operand from the wrong array - slope * x for slope * dy,
  // the mask from dy's sign, the forward result (x passed and scaled).
  if (in.backward) {
    M scaled_x = op;
    scaled_x.negative_operand = M::Operand::kInput;
    M mask_dy = op;
    mask_dy.gate_operand = M::Operand::kDy;
    M forward = op;
    forward.positive_operand = forward.negative_operand = M::Operand::kInput;
    M pass_x = op;
    pass_x.positive_operand = M::Operand::kInput;
    M swapped = forward;  // the two input streams swapped: x's values, dy's sign
    swapped.gate_operand = M::Operand::kDy;
    for (const M& m : {scaled_x, mask_dy, forward, pass_x, swapped}) models.push_back(m);
    // dy from another index: the shifts at which the positives' outputs
    // (dy passed through) are found in dy, the most common few.
    std::unordered_map<uint64_t, uint64_t> where;
    const uint64_t n = in.dy->bits.size();
    for (uint64_t j = 0; j < n; ++j) where.emplace(in.dy->bits[j], j);
    std::map<int64_t, uint64_t> shifts;
    uint64_t looked = 0;
    for (uint64_t i : differing) {
      if (!(in.input->values[i] > 0) || ++looked > 20000) continue;
      const auto it = where.find(in.output->bits[i]);
      if (it != where.end() && it->second != i) {
        shifts[static_cast<int64_t>(it->second) - static_cast<int64_t>(i)]++;
      }
    }
    std::vector<std::pair<uint64_t, int64_t>> common;
    for (const auto& [k, count] : shifts) {
      if (count >= 4) common.emplace_back(count, k);
    }
    std::sort(common.rbegin(), common.rend());
    for (size_t k = 0; k < common.size() && k < 3; ++k) {
      M m = op;
      m.dy_shift = common[k].second;
      models.push_back(m);
    }
  }
  // Infinities stored as the largest finite value (a saturating convert).
  {
    M m = op;
    m.saturate = true;
    models.push_back(m);
  }
  // Half data read and/or written in the other half format.
  if (half) {
    for (const auto& [read, write] : {std::pair{true, true}, {false, true}, {true, false}}) {
      M m = op;
      m.foreign_read = read;
      m.foreign_write = write;
      models.push_back(m);
    }
  }
  // Every value read twice or half as large (an exponent bias off by one).
  for (int k : {1, -1}) {
    M m = op;
    m.read_scale = k;
    models.push_back(m);
  }
  return models;
}


bool SameValue(leaky_dtype dtype, uint64_t a, uint64_t b) {
  if (a == b) return true;
  if (IsZeroBits(dtype, a) && IsZeroBits(dtype, b)) return true;
  return IsNanBits(dtype, a) && IsNanBits(dtype, b);
}

int ValueModel::Cost() const {
  return (slope != Slope::kExact) + through_set + (gate != Gate::kGreater) +
         (rounding != Rounding::kNearestEven) + flush_results + flush_inputs +
         (positive_operand != Operand::kUsual) + (negative_operand != Operand::kUsual) +
         (gate_operand != Operand::kUsual) + (dy_shift != 0) + saturate + (foreign_read || foreign_write) +
         (foreign_read != foreign_write) + (read_scale != 0);
}

uint64_t Predict(const ValueInput& in, const ValueModel& m, uint64_t i) {
  using Operand = ValueModel::Operand;
  const double smallest = DtypeSmallestNormal(m.flush_type);
  auto daz = [&](double v) {
    return m.flush_inputs && v != 0 && std::fabs(v) < smallest ? std::copysign(0.0, v) : v;
  };
  // The arrays as the kernel read them: in the other half format if it
  // used the wrong one (its bits are what it then writes back).
  const leaky_dtype other = in.dtype == LEAKY_F16 ? LEAKY_BF16 : LEAKY_F16;
  const leaky_dtype read_as = m.foreign_read ? other : in.dtype;
  const leaky_dtype write_as = m.foreign_write ? other : in.dtype;
  // Whether values are decoded and encoded again, not copied as bits.
  const bool converted = m.foreign_read || m.foreign_write || m.read_scale != 0;
  const Array* usual = in.backward ? in.dy : in.input;
  auto operand = [&](Operand o) -> const Array* {
    return o == Operand::kUsual ? usual : o == Operand::kInput ? in.input : in.dy;
  };
  // dy from another index (another tile's slot): past either end, the
  // model says nothing (the golden, which no wrong element equals).
  const int64_t dy_at = static_cast<int64_t>(i) + m.dy_shift;
  if (m.dy_shift != 0 && (dy_at < 0 || static_cast<uint64_t>(dy_at) >= in.golden->bits.size())) {
    return in.golden->bits[i];
  }
  auto at = [&](const Array* a) { return a == in.dy ? static_cast<uint64_t>(dy_at) : i; };
  auto value = [&](const Array* a) {
    const double v = m.foreign_read ? ToDouble(read_as, a->bits[at(a)]) : a->values[at(a)];
    // The exponent field's bias: normal values only (a hand-written
    // widening takes zeros, subnormals and specials apart).
    const bool normal = std::isfinite(v) && std::fabs(v) >= DtypeSmallestNormal(in.dtype);
    return daz(m.read_scale != 0 && normal ? std::ldexp(v, m.read_scale) : v);
  };
  const double gate = value(m.gate_operand == Operand::kDy ? in.dy : in.input);
  const Array* passed = operand(m.positive_operand);
  const double base = value(operand(m.negative_operand));
  bool pass = false;
  switch (m.gate) {
    case ValueModel::Gate::kGreater:
      pass = gate > 0;
      break;
    case ValueModel::Gate::kGreaterEqual:
      pass = gate >= 0;
      break;
    case ValueModel::Gate::kNone:
      break;
    case ValueModel::Gate::kSwapped:
      pass = !(gate > 0);
      break;
    case ValueModel::Gate::kNanPasses:
      pass = !(gate <= 0);
      break;
  }
  uint64_t bits =
      pass ? (m.flush_inputs || converted ? FromDouble(write_as, value(passed))
                                          : passed->bits[at(passed)])
      : m.zero_branch ? uint64_t{0}
      : m.through_set
          // Rounded to the narrower type, then stored exactly in the wider.
          ? FromDouble(in.dtype,
                       ToDouble(m.through, Product(m.through, base, m.slope_value, m.rounding)))
          : Product(write_as, base, m.slope_value, m.rounding);
  // Flush-to-zero acts on the product; a select passes x through untouched.
  if (m.flush_results && !pass) {
    const double v = ToDouble(in.dtype, bits);
    if (v != 0 && std::fabs(v) < smallest) bits = FromDouble(in.dtype, std::copysign(0.0, v));
  }
  if (m.saturate) {
    const double v = ToDouble(in.dtype, bits);
    if (std::isinf(v)) bits = FromDouble(in.dtype, std::copysign(DtypeLargest(in.dtype), v));
  }
  return bits;
}

ValueExplanation ExplainWith(const ValueInput& in, const ValueModel& model,
                             const std::vector<uint64_t>& elements) {
  ValueExplanation e;
  e.model = model;
  const double smallest = DtypeSmallestNormal(model.flush_type);
  for (uint64_t i : elements) {
    const uint64_t p = Predict(in, model, i);
    if (!SameValue(in.dtype, p, in.output->bits[i])) continue;
    e.explained.push_back(i);
    const double x = in.input->values[i];
    const double base = in.backward ? in.dy->values[i] : x;
    const bool tiny_input =
        (x != 0 && std::fabs(x) < smallest) || (base != 0 && std::fabs(base) < smallest);
    if (model.flush_inputs && tiny_input) {
      ++e.flushed_inputs;
      if (x > 0) ++e.positive_flushed_inputs;
    } else if (model.flush_results && in.output->values[i] == 0) {
      ++e.flushed_results;
    }
    if (model.rounding != ValueModel::Rounding::kNearestEven &&
        UlpDistance(in.dtype, p, in.golden->bits[i]) == 1) {
      ++e.rounded;
    }
  }
  return e;
}

std::optional<ValueExplanation> ExplainValues(const ValueInput& in,
                                              const std::vector<uint64_t>& differing) {
  if (differing.empty()) return std::nullopt;
  const uint64_t n = in.golden->bits.size();
  std::vector<char> differs(n, 0);
  for (uint64_t i : differing) differs[i] = 1;
  std::vector<std::pair<ValueModel, Score>> accepted;
  for (const ValueModel& m : ValueCandidates(in, differing)) {
    const Score s = Evaluate(in, m, differs);
    // It must predict its own differences (90%: another fault may cover
    // some of them) and none that the output does not have.
    // A handful of elements is no evidence, unless it is every one.
    if (s.explained == 0 || (s.explained < 4 && s.explained < differing.size()) ||
        s.explained * 10 < s.predicted * 9 ||
        s.contradicted * 100 > s.predicted) {
      continue;
    }
    accepted.emplace_back(m, s);
  }
  if (accepted.empty()) return std::nullopt;
  // The most explained, then the simplest.
  std::stable_sort(accepted.begin(), accepted.end(), [](const auto& a, const auto& b) {
    if (a.second.explained != b.second.explained) return a.second.explained > b.second.explained;
    return a.first.Cost() < b.first.Cost();
  });
  return ExplainWith(in, accepted.front().first, differing);
}

}  // namespace leaky::toolkit

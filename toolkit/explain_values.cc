#include "explain_values.h"

#include <algorithm>
#include <cmath>

#include "leaky/leaky.hpp"

namespace leaky::tools {

namespace {

// base * slope as the kernel computes it (f32 for f32 and the half types,
// f64 for f64), stored to `dtype` under `rounding`. The half types round
// the f32 product once more on the store, and that store is where a port's
// rounding mode differs (vstore_half_rtz, bf16 by truncation); f32 and f64
// round the product itself.
uint64_t Product(leaky_dtype dtype, double base, double slope, ValueModel::Rounding rounding) {
  uint64_t bits = 0;
  int too_far = 0;  // +1: the nearest-even result lies farther from 0 than the exact one
  if (dtype == LEAKY_F64) {
    const double p = base * slope;
    bits = FromDouble(dtype, p);
    const double error = std::fma(base, slope, -p);  // exact - p
    if (std::isfinite(p) && error != 0) too_far = std::signbit(error) != std::signbit(p) ? 1 : -1;
  } else {
    // A half or f32 value times an f32 slope is exact in double.
    const double exact = base * static_cast<double>(static_cast<float>(slope));
    const double stored =
        dtype == LEAKY_F32 ? exact : static_cast<double>(static_cast<float>(exact));
    bits = FromDouble(dtype, stored);
    const double back = ToDouble(dtype, bits);
    if (!std::isnan(stored) && back != stored)
      too_far = std::fabs(back) > std::fabs(stored) ? 1 : -1;
  }
  // One step of the magnitude: the patterns are sign-magnitude.
  if (rounding == ValueModel::Rounding::kTowardZero && too_far > 0) --bits;
  if (rounding == ValueModel::Rounding::kAwayFromZero && too_far < 0) ++bits;
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
  std::vector<double> guesses = {0.0, 1.0};
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

std::vector<ValueModel> Candidates(const ValueInput& in, const std::vector<uint64_t>& differing) {
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
  for (M::Gate gate : {M::Gate::kGreaterEqual, M::Gate::kNone, M::Gate::kSwapped}) {
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
  return models;
}

}  // namespace

bool SameValue(leaky_dtype dtype, uint64_t a, uint64_t b) {
  if (a == b) return true;
  if (IsZeroBits(dtype, a) && IsZeroBits(dtype, b)) return true;
  return IsNanBits(dtype, a) && IsNanBits(dtype, b);
}

int ValueModel::Cost() const {
  return (slope != Slope::kExact) + through_set + (gate != Gate::kGreater) +
         (rounding != Rounding::kNearestEven) + flush_results + flush_inputs;
}

uint64_t Predict(const ValueInput& in, const ValueModel& m, uint64_t i) {
  const double smallest = DtypeSmallestNormal(m.flush_type);
  auto daz = [&](double v) {
    return m.flush_inputs && v != 0 && std::fabs(v) < smallest ? std::copysign(0.0, v) : v;
  };
  const double gate = daz(in.input->values[i]);
  const double base = in.backward ? daz(in.dy->values[i]) : gate;
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
  }
  uint64_t bits =
      pass            ? (m.flush_inputs ? FromDouble(in.dtype, base)
                                        : (in.backward ? in.dy : in.input)->bits[i])
      : m.zero_branch ? uint64_t{0}
      : m.through_set
          // Rounded to the narrower type, then stored exactly in the wider.
          ? FromDouble(in.dtype,
                       ToDouble(m.through, Product(m.through, base, m.slope_value, m.rounding)))
          : Product(in.dtype, base, m.slope_value, m.rounding);
  // Flush-to-zero acts on the product; a select passes x through untouched.
  if (m.flush_results && !pass) {
    const double v = ToDouble(in.dtype, bits);
    if (v != 0 && std::fabs(v) < smallest) bits = FromDouble(in.dtype, std::copysign(0.0, v));
  }
  return bits;
}

std::optional<ValueExplanation> ExplainValues(const ValueInput& in,
                                              const std::vector<uint64_t>& differing) {
  if (differing.empty()) return std::nullopt;
  const uint64_t n = in.golden->bits.size();
  std::vector<char> differs(n, 0);
  for (uint64_t i : differing) differs[i] = 1;
  std::vector<std::pair<ValueModel, Score>> accepted;
  for (const ValueModel& m : Candidates(in, differing)) {
    const Score s = Evaluate(in, m, differs);
    // It must predict its own differences (90%: another fault may cover
    // some of them) and none that the output does not have.
    if (s.explained == 0 || s.explained * 10 < s.predicted * 9 ||
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
  const ValueModel* best = &accepted.front().first;
  ValueExplanation e;
  e.model = *best;
  const double smallest = DtypeSmallestNormal(best->flush_type);
  for (uint64_t i : differing) {
    const uint64_t p = Predict(in, *best, i);
    if (!SameValue(in.dtype, p, in.output->bits[i])) continue;
    e.explained.push_back(i);
    const double x = in.input->values[i];
    const double base = in.backward ? in.dy->values[i] : x;
    const bool tiny_input =
        (x != 0 && std::fabs(x) < smallest) || (base != 0 && std::fabs(base) < smallest);
    if (best->flush_inputs && tiny_input) {
      ++e.flushed_inputs;
      if (x > 0) ++e.positive_flushed_inputs;
    } else if (best->flush_results && in.output->values[i] == 0) {
      ++e.flushed_results;
    }
    if (best->rounding != ValueModel::Rounding::kNearestEven &&
        UlpDistance(in.dtype, p, in.golden->bits[i]) == 1) {
      ++e.rounded;
    }
  }
  return e;
}

}  // namespace leaky::tools

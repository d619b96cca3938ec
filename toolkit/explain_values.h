// The first question of `leaky check`: is every wrong element what the
// right op gives with one thing changed in how it computes? The things a
// kernel port changes: the slope (rounded to the half type, hard-coded, 0,
// 1), the compare (`>=`, or no select at all), the rounding of the product
// or of the store (toward zero, away from zero), and flushing (results below
// the smallest normal to zero, FTZ; subnormal inputs read as zero, DAZ), at
// the threshold of the arithmetic type (f16's for a half multiply). Each
// combination predicts every element exactly; the one that predicts the
// output's differences, and no difference the output does not have, names
// the cause. Pure: no I/O.
#ifndef LEAKY_TOOLKIT_EXPLAIN_VALUES_H_
#define LEAKY_TOOLKIT_EXPLAIN_VALUES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "golden_io.h"

namespace leaky::toolkit {

struct ValueInput {
  leaky_dtype dtype = LEAKY_F32;
  bool backward = false;
  double negative_slope = 0;
  const Array* input = nullptr;  // x (forward) / saved x (backward)
  const Array* dy = nullptr;     // backward only
  const Array* golden = nullptr;
  const Array* output = nullptr;
  // Set for one-byte data: elements are the same when their bytes are, and
  // a "zero" left in memory is the byte 0.
  const leaky_q8_params* eight_bit = nullptr;
};

// One way of computing the op.
struct ValueModel {
  enum class Slope { kExact, kRounded, kOther };
  // x > 0, x >= 0, always the product, the branches swapped (x > 0 ? slope * x : x,
  // what max(x, slope * x) computes for a slope above 1)
  // kNanPasses: `x <= 0 ? slope * x : x`, where a NaN x takes the pass
  // branch.
  enum class Gate { kGreater, kGreaterEqual, kNone, kSwapped, kNanPasses };
  enum class Rounding { kNearestEven, kTowardZero, kAwayFromZero, kNearestAway };
  // Backward: which array an operand came from (kUsual: dy passes and is
  // scaled, x's sign selects).
  enum class Operand { kUsual, kInput, kDy };
  Slope slope = Slope::kExact;
  double slope_value = 0;    // the slope the model multiplies by
  bool zero_branch = false;  // the negative branch returns +0 (a plain ReLU)
  // kRounded: the slope stored as this type first, to nearest or truncated.
  leaky_dtype slope_type = LEAKY_F16;
  bool slope_truncated = false;
  // The product rounded to `through` before an f32/f64 store (half
  // arithmetic on wider data, or a scratch buffer of halves).
  bool through_set = false;
  leaky_dtype through = LEAKY_F16;
  Gate gate = Gate::kGreater;
  Rounding rounding = Rounding::kNearestEven;  // of the store (half types) or the product
  bool flush_results = false;                  // FTZ
  bool flush_inputs = false;                   // DAZ
  leaky_dtype flush_type = LEAKY_F32;          // whose smallest normal the flushing uses
  Operand positive_operand = Operand::kUsual;  // backward: what the positive side passes
  Operand negative_operand = Operand::kUsual;  // backward: what the slope multiplies
  Operand gate_operand = Operand::kUsual;      // backward: whose sign selects
  int64_t dy_shift = 0;          // backward: dy read from index i + dy_shift
  bool saturate = false;         // +-inf stored as the largest finite value
  // Half data converted with the other half format's routine: on the read
  // (decoded as the other), on the write (encoded as the other), or both.
  bool foreign_read = false, foreign_write = false;
  // Every value read as value x 2^read_scale (a hand-written widening with
  // its exponent bias off), the result stored as computed.
  int read_scale = 0;

  int Cost() const;  // how many things differ from the op: the simpler model wins a tie
};

// What the best model explains.
struct ValueExplanation {
  ValueModel model;
  std::vector<uint64_t> explained;  // differing elements it predicts exactly, ascending
  uint64_t flushed_results = 0;     // of `explained`: results flushed to zero
  uint64_t flushed_inputs = 0;      // ... inputs read as zero (positive_flushed: of x > 0)
  uint64_t positive_flushed_inputs = 0;
  uint64_t rounded = 0;  // ... one step off by the rounding mode
};

// The element's value under `model`, as `dtype`'s bit pattern.
uint64_t Predict(const ValueInput& in, const ValueModel& model, uint64_t i);

// The models ExplainValues tries for these differing elements (the slope
// guesses are read from them); the op itself is not among them.
std::vector<ValueModel> ValueCandidates(const ValueInput& in,
                                        const std::vector<uint64_t>& differing);

// What `model` explains of `elements`: those it predicts exactly, with the
// counts a finding reports.
ValueExplanation ExplainWith(const ValueInput& in, const ValueModel& model,
                             const std::vector<uint64_t>& elements);

// The best model for the elements in `differing` (ascending: every element
// whose output differs from the golden by more than the sign of a zero),
// or nothing when no model other than the op itself predicts at least 90%
// of its own differences and contradicts the output nowhere.
std::optional<ValueExplanation> ExplainValues(const ValueInput& in,
                                              const std::vector<uint64_t>& differing);

// Same value for the diagnosis: equal bits, both NaN, or both zero.
bool SameValue(leaky_dtype dtype, uint64_t a, uint64_t b);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_EXPLAIN_VALUES_H_

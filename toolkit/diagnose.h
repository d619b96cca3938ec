// The heart of `leaky check`: compare a kernel's output with the golden and
// explain every wrong element - the op computed another way, something never
// written, a correct result at another index - in the plan's terms, one
// finding per fault, "ambiguous" where two causes fit the output equally.
// Pure: no I/O.
#ifndef LEAKY_TOOLKIT_DIAGNOSE_H_
#define LEAKY_TOOLKIT_DIAGNOSE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "finding_kinds.h"
#include "golden_io.h"
#include "layout.h"
#include "leaky/tiling.h"

namespace leaky::toolkit {

struct CheckInput {
  leaky_dtype dtype = LEAKY_F32;
  bool backward = false;      // output is dx; `input` is the saved forward input
  double negative_slope = 0;
  Array input;                // x (forward) / saved x (backward)
  Array dy;                   // backward only
  Array golden;
  Array output;
  uint64_t max_ulp = 0;
  bool strict_zero_sign = false;     // -0 against +0 is a mismatch, not a note
  bool allow_rounding = false;       // a systematic rounding mode passes within max_ulp
  std::optional<Layout> plan;        // the kernel's split: maps indices to cores and tiles
  // The op is LeakyReLU, whose ways of being computed wrong the value
  // models know (a slope, a rounding, a flush). Another op of the family
  // (leaky/family.h) is checked by place only: what never was written,
  // what landed elsewhere, NaNs and zero signs; its wrong values are left
  // unexplained rather than explained as a LeakyReLU's.
  bool leaky_relu_values = true;
  // One-byte data (leaky/eight_bit.h): its type and parameters; `dtype`,
  // max_ulp and allow_rounding are then unused (bytes compare exactly).
  // The arrays' bits are the bytes, their values the real values
  // (Q8Real): scale * (q - zero_point), or the decoded fp8 value.
  std::optional<leaky_q8_params> eight_bit;
};

// Made only by the detectors (finding_kinds.h), each from a kind listed
// under it.
struct Finding {
  template <FindingDetector D>
  Finding(ReportedKind<D> reported, std::string text, nlohmann::json facts)
      : kind(reported.name), message(std::move(text)), details(std::move(facts)) {}
  std::string kind;     // one of kFindingKinds
  std::string message;  // what it looks like, where, and the usual cause
  nlohmann::json details;
};

struct CheckResult {
  bool pass = true;
  uint64_t elements = 0;
  uint64_t mismatches = 0;
  uint64_t zero_sign_differences = 0;  // -0 vs +0 (mismatches only if strict)
  int64_t first_mismatch = -1;
  uint64_t max_ulp = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::vector<Finding> findings;  // most specific first
  nlohmann::json ToJson() const;
};

// Default tolerance: 0 ulp in every dtype, as the golden is exact (half
// types computed in f32 and rounded once). `--max-ulp 1` is for a device
// that can only compute in f16/bf16 arithmetic.
uint64_t DefaultMaxUlp(leaky_dtype dtype);

CheckResult Diagnose(const CheckInput& input);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_DIAGNOSE_H_

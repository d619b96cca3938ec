// The heart of `leaky check`: compare a kernel's output with the golden and
// name the classic porting bugs by their fingerprints. Pure: no I/O.
#ifndef LEAKY_TOOLS_DIAGNOSE_H_
#define LEAKY_TOOLS_DIAGNOSE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "golden_io.h"
#include "leaky/tiling.h"

namespace leaky::tools {

struct CheckInput {
  leaky_dtype dtype = LEAKY_F32;
  bool backward = false;      // output is dx; `input` is the saved forward input
  double negative_slope = 0;
  Array input;                // x (forward) / saved x (backward)
  Array dy;                   // backward only
  Array golden;
  Array output;
  uint64_t max_ulp = 0;
  std::optional<leaky_tiling> plan;  // to map indices to cores and tiles
};

struct Finding {
  std::string kind;     // all_zeros, zero_block, tail_not_processed, slope_mismatch,
                        // f16_underflow, periodic, unexpected_nan, lost_nan, mismatch
  std::string message;  // what it looks like and what to look at
  nlohmann::json details;
};

struct CheckResult {
  bool pass = true;
  uint64_t elements = 0;
  uint64_t mismatches = 0;
  int64_t first_mismatch = -1;
  uint64_t max_ulp = 0;
  double max_abs_error = 0;
  double max_rel_error = 0;
  std::vector<Finding> findings;  // most specific first
  nlohmann::json ToJson() const;
};

// Default tolerance: the op is exact in every dtype, but a device computing
// in f16/bf16 may double-round once, so half types allow 1 ulp by default.
uint64_t DefaultMaxUlp(leaky_dtype dtype);

CheckResult Diagnose(const CheckInput& input);

}  // namespace leaky::tools

#endif  // LEAKY_TOOLS_DIAGNOSE_H_

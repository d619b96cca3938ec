// The detectors of special values, on what the others left open: NaN made
// or dropped, and zeros of the other sign.
#include <cmath>

#include "findings.h"

namespace leaky::toolkit {

namespace {

// The open elements where the output is NaN and the golden is not (or,
// lost, the other way round).
std::vector<uint64_t> NanDifferences(const Analysis& s, bool lost) {
  std::vector<uint64_t> found;
  if (s.in.eight_bit) return found;  // bytes compare exactly; EightBitValues names saturation
  for (uint64_t i : s.Open()) {
    const bool out_nan = std::isnan(s.in.output.values[i]),
               gold_nan = std::isnan(s.in.golden.values[i]);
    if (lost ? (gold_nan && !out_nan) : (out_nan && !gold_nan)) found.push_back(i);
  }
  return found;
}

}  // namespace

void FindUnexpectedNan(Analysis& s) {
  using Kind = ReportedKind<FindingDetector::kUnexpectedNan>;
  const std::vector<uint64_t> found = NanDifferences(s, /*lost=*/false);
  if (found.empty()) return;
  s.Explain(found);
  s.findings.push_back({Kind("unexpected_nan"),
                        std::to_string(found.size()) +
                            " NaN outputs where the golden is a number: "
                            "uninitialised memory, or 0 * inf / inf - inf in a rewritten formula",
                        {{"count", found.size()}, {"first", found.front()}}});
}

void FindLostNan(Analysis& s) {
  using Kind = ReportedKind<FindingDetector::kLostNan>;
  const std::vector<uint64_t> found = NanDifferences(s, /*lost=*/true);
  if (found.empty()) return;
  s.Explain(found);
  // A max/min formula also loses the sign of zero: the same fault.
  uint64_t signs = 0;
  for (uint64_t i : s.zero_sign) signs += !s.explained[i];
  if (!s.in.strict_zero_sign) s.Explain(s.zero_sign);
  s.findings.push_back({Kind("lost_nan"),
                        std::to_string(found.size()) +
                            " NaN inputs did not give NaN: a max/min-based "
                            "formula or a compare that treats NaN as negative/zero drops it" +
                            (signs > 0 && !s.in.strict_zero_sign
                                 ? " (and " + std::to_string(signs) +
                                       " zeros came out with the other sign, as such a formula "
                                       "does)"
                                 : std::string()),
                        {{"count", found.size()}, {"first", found.front()}}});
}

void FindZeroSign(Analysis& s) {
  using Kind = ReportedKind<FindingDetector::kZeroSign>;
  uint64_t open = 0;
  for (uint64_t i : s.zero_sign) open += !s.explained[i];
  if (open == 0) return;
  s.Explain(s.zero_sign);
  s.findings.push_back(
      {Kind("zero_sign"),
       std::to_string(s.zero_sign.size()) +
           " zeros have the other sign (-0 against "
           "+0), the first at " +
           std::to_string(s.zero_sign.front()) +
           (s.in.strict_zero_sign ? ": counted as mismatches (--strict-zero-sign)"
                                  : ": not counted as mismatches (--strict-zero-sign counts them)") +
           ". Usual cause: a zero constant selected instead of x * slope, or a "
           "max(x, 0)-style formula",
       {{"count", s.zero_sign.size()}, {"first", s.zero_sign.front()}}});
}

}  // namespace leaky::toolkit

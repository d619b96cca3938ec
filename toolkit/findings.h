// What the diagnosis's detectors share. finding_kinds.inc lists them, in
// the order Diagnose runs them, each with the kinds it reports; each is a
// FindName(Analysis&) in a findings_*.cc by family (the op computed another
// way; results moved; regions never written; NaN and the sign of zero; what
// nothing explains), and works on what the detectors before it left open.
// Internal to the toolkit.
#ifndef LEAKY_TOOLKIT_FINDINGS_H_
#define LEAKY_TOOLKIT_FINDINGS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "diagnose.h"
#include "explain_places.h"
#include "explain_regions.h"
#include "explain_values.h"
#include "findings_regions.h"

namespace leaky::toolkit {

// The comparison's wrong elements, which of them the findings so far
// explain, and the explanations more than one detector reads.
struct Analysis {
  explicit Analysis(const CheckInput& in);

  const CheckInput& in;
  const uint64_t n;
  const ValueInput values;
  const PlaceInput places;
  std::vector<uint64_t> wrong;      // outside the tolerance, ascending
  std::vector<uint64_t> differing;  // any difference beyond a zero's sign (the tolerance aside)
  std::vector<uint64_t> zero_sign;  // -0 against +0
  std::vector<char> explained;
  std::vector<Finding> findings;
  bool fails_anyway = false;  // a rounding mode, which no tolerance hides

  std::vector<uint64_t> Open() const;
  void Explain(const std::vector<uint64_t>& indices);
  void Explain(ElementRange s);
  bool NegativeSide(uint64_t i) const { return !(in.input.values[i] > 0); }
  double Base(uint64_t i) const { return in.backward ? in.dy.values[i] : in.input.values[i]; }

  // ExplainPlaces over `open`; the golden's 6-grams are indexed once, on
  // the first call.
  PlaceExplanation PlacesOf(const std::vector<uint64_t>& open);
  // What the elements still open when the first place detector asks hold,
  // and where: Moved, Permuted and Unwritten each take their part of it
  // (Moved also the regions never written that belong to its fault).
  PlaceExplanation& OpenPlaces();
  // Each index's place in the plan, for regions found from indices (built
  // on the first call); null for outputs over kMaxRegionElements, which
  // are not searched for regions.
  const RegionFeatures* Features();

 private:
  std::optional<RegionFeatures> features_;
  std::optional<GoldenGrams> grams_;
  std::optional<PlaceExplanation> open_places_;
};

// One declaration per LEAKY_DETECTOR line; each adds its findings (of the
// kinds listed under it) and marks the elements they explain.
#define LEAKY_DETECTOR(name, looks_for) void Find##name(Analysis& s);
#define LEAKY_KIND(kind, looks_like)
#define LEAKY_ALSO(kind)
#include "finding_kinds.inc"
#undef LEAKY_DETECTOR
#undef LEAKY_KIND
#undef LEAKY_ALSO

std::vector<ElementRange> SpansOf(const std::vector<Unwritten>& unwritten);

// The usual cause of a region found from its indices (DescribeInferred's
// facts in `details`), read from its constraints' numbers; "never computed
// or copied out there" when none applies.
std::string CauseOfInferred(const nlohmann::json& details, const Layout* plan);

// One-byte data (findings_eight_bit.cc): the exact comparison Diagnose
// makes instead of the float one, and an element said in bytes and real
// values ("index 7: input 0x85 (-1.5) gives 0x26 (-0.125), the output has
// 0x25 (-0.1875)") and as JSON.
void CompareBytes(Analysis& s, CheckResult* r);
std::string ByteExample(const Analysis& s, uint64_t i);
nlohmann::json ByteExamples(const Analysis& s, const std::vector<uint64_t>& indices);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FINDINGS_H_

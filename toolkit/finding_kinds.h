// The finding kinds and the detectors that report them, made from the one
// list in finding_kinds.inc: kFindingKinds, the detectors' order, and the
// check, when compiled, that a detector reports only kinds listed under it.
#ifndef LEAKY_TOOLKIT_FINDING_KINDS_H_
#define LEAKY_TOOLKIT_FINDING_KINDS_H_

#include <cstddef>
#include <iterator>
#include <string_view>

namespace leaky::toolkit {

// The detectors, in the order Diagnose runs them (finding_kinds.inc).
enum class FindingDetector {
#define LEAKY_DETECTOR(name, looks_for) k##name,
#define LEAKY_KIND(kind, looks_like)
#define LEAKY_ALSO(kind)
#include "finding_kinds.inc"
#undef LEAKY_DETECTOR
#undef LEAKY_KIND
#undef LEAKY_ALSO
};

// Every kind a finding can have, in the order the diagnosis reports them:
// the op computed another way, correct results at other indices, regions
// never written, then what is left (finding_kinds.inc).
inline constexpr const char* kFindingKinds[] = {
#define LEAKY_DETECTOR(name, looks_for)
#define LEAKY_KIND(kind, looks_like) #kind,
#define LEAKY_ALSO(kind)
#include "finding_kinds.inc"
#undef LEAKY_DETECTOR
#undef LEAKY_KIND
#undef LEAKY_ALSO
};

// What each kind of kFindingKinds looks like, in the same order.
inline constexpr const char* kFindingLooksLike[] = {
#define LEAKY_DETECTOR(name, looks_for)
#define LEAKY_KIND(kind, looks_like) looks_like,
#define LEAKY_ALSO(kind)
#include "finding_kinds.inc"
#undef LEAKY_DETECTOR
#undef LEAKY_KIND
#undef LEAKY_ALSO
};

namespace finding_list {

// finding_kinds.inc line by line: a detector's line, or one of its kinds.
struct Line {
  const char* detector;  // null on a kind's line
  const char* kind;      // null on a detector's line
};
inline constexpr Line kLines[] = {
#define LEAKY_DETECTOR(name, looks_for) {#name, nullptr},
#define LEAKY_KIND(kind, looks_like) {nullptr, #kind},
#define LEAKY_ALSO(kind) {nullptr, #kind},
#include "finding_kinds.inc"
#undef LEAKY_DETECTOR
#undef LEAKY_KIND
#undef LEAKY_ALSO
};

constexpr bool Listed(std::string_view kind) {
  for (const char* k : kFindingKinds) {
    if (kind == k) return true;
  }
  return false;
}

// Whether the list has `kind` under `detector`, and the kind in kFindingKinds.
constexpr bool Reports(FindingDetector detector, std::string_view kind) {
  int at = -1;
  for (const Line& line : kLines) {
    if (line.detector) {
      ++at;
    } else if (at == static_cast<int>(detector) && kind == line.kind) {
      return Listed(kind);
    }
  }
  return false;
}

// The list is whole: every detector reports a kind, no kind is listed twice,
// and every LEAKY_ALSO names a listed kind.
constexpr bool Whole() {
  for (size_t i = 0; i < std::size(kLines); ++i) {
    if (kLines[i].detector && (i + 1 == std::size(kLines) || kLines[i + 1].detector)) return false;
    if (kLines[i].kind && !Listed(kLines[i].kind)) return false;
  }
  for (size_t i = 0; i < std::size(kFindingKinds); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (std::string_view(kFindingKinds[i]) == kFindingKinds[j]) return false;
    }
  }
  return true;
}
static_assert(Whole(), "finding_kinds.inc: a detector without a kind, a kind listed twice, "
                       "or a LEAKY_ALSO of a kind not listed");

}  // namespace finding_list

// A kind that detector D reports, checked when compiled: a finding can only
// have a kind that finding_kinds.inc lists under the detector making it.
template <FindingDetector D>
struct ReportedKind {
  explicit consteval ReportedKind(const char* kind) : name(kind) {
    // Not a constant expression, so a kind not listed does not compile.
    if (!finding_list::Reports(D, kind)) throw "finding_kinds.inc lists no such kind under D";
  }
  const char* name;
};

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FINDING_KINDS_H_

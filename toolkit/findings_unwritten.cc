// The detector of regions never written (explain_places): one finding per
// leftover content, its region in the plan's terms and its usual cause.
#include <map>

#include "findings.h"

namespace leaky::tools {

using json = nlohmann::json;

std::vector<ElementRange> SpansOf(const std::vector<Unwritten>& u) {
  std::vector<ElementRange> spans;
  for (const Unwritten& w : u) spans.push_back(w.span);
  return spans;
}

namespace {

using Kind = ReportedKind<FindingDetector::kUnwritten>;

std::string CauseOfUnwritten(const std::string& region) {
  if (region == "remainder") {
    return "the remainder was dropped: the last core's length misses total % cores";
  }
  if (region == "last_tiles") {
    return "each core's loop stops early: a loop bound of tiles - 1, or the tail tile's short "
           "length dropped";
  }
  if (region == "first_tiles") {
    return "each core's first tile(s) were skipped: a loop starting at 1, or a prefetch whose "
           "result was never stored";
  }
  if (region == "cores") {
    return "those cores never ran their loop or wrote elsewhere: their block index, offset or "
           "length came from the wrong variable";
  }
  if (region == "tail") {
    return "a tail was not processed: the loop bound or the tail length was dropped";
  }
  return "read before the copy-in finished (a missing wait), or never computed or copied out";
}

std::vector<Finding> UnwrittenFindings(Analysis& s, const std::vector<Unwritten>& unwritten) {
  std::vector<Finding> found;
  // One finding per content: a fault leaves one kind of leftover.
  std::map<std::string, std::vector<Unwritten>> by_content;
  for (const Unwritten& w : unwritten) by_content[w.content].push_back(w);
  for (const auto& [content, list] : by_content) {
    json details;
    const std::vector<ElementRange> spans = SpansOf(list);
    const std::string region =
        DescribeRegion(s.in.plan ? &*s.in.plan : nullptr, s.n, spans, &details);
    details["content"] = content;
    for (const ElementRange& sp : spans) s.Explain(sp);
    // The whole output equal to the input: the compute skipped (or, in place,
    // the kernel never ran); a region of it: a region never written in place.
    const bool input = (content == "the input" || content == "dy") && details["region"] == "all";
    if (details["region"] == "all" && content == "zeros") {
      details["candidates"] = {"not_written", "compute_before_copy"};
      found.push_back({Kind("ambiguous"),
                       "the whole output is zeros: either never written back (no copy-out, or "
                       "the result written to another buffer), or computed from a buffer that "
                       "was never filled (the copy-in not waited for, on zeroed memory); the "
                       "output alone cannot tell which",
                       details});
      continue;
    }
    std::string cause = CauseOfUnwritten(details["region"]);
    // A tail that starts where the last core would end had every core c
    // started at c x S (S not its share): name S, the arithmetic trace of
    // the wrong per-core offset (7 x 256 + 1257 = 3049 for cores a tile
    // apart), not a dropped tail.
    if (s.in.plan && details["region"] == "tail" && s.in.plan->cores() > 1) {
      const Layout& plan = *s.in.plan;
      const uint64_t k = details["first"].get<uint64_t>(), last = plan.cores() - 1;
      const uint64_t length = plan.core_length.back();
      if (k > length && (k - length) % last == 0) {
        const uint64_t stride = (k - length) / last;
        if (stride != plan.core_start[1] - plan.core_start[0] && stride > 0) {
          details["core_stride"] = stride;
          cause = std::to_string(k) + " = " + std::to_string(last) + " x " +
                  std::to_string(stride) + " + " + std::to_string(length) +
                  ": every core c started at c x " + std::to_string(stride) +
                  (stride == plan.tile_length ? " (the tile length: the cores were placed a tile "
                                                "apart, not a core's length apart)"
                                              : "") +
                  " instead of its own start (c x " +
                  std::to_string(plan.core_start[1] - plan.core_start[0]) +
                  "), so the last core ended at " + std::to_string(k) +
                  " and nothing after was written";
        }
      }
    }
    if (input) {
      found.push_back(
          {Kind("input_copied"),
           "the whole output holds " + content +
               " unchanged: the compute was "
               "skipped and the input copied through (or, run in place, the kernel never "
               "wrote at all)",
           details});
    } else {
      found.push_back({Kind("not_written"),
                       "never written: " + region + ", still holding " + content +
                           (content == "the input" || content == "dy"
                                ? " (run in place; or the input copied through there). "
                                : " (the buffer's previous contents). ") +
                           cause,
                       details});
    }
  }
  return found;
}

}  // namespace

void FindUnwritten(Analysis& s) {
  for (Finding& f : UnwrittenFindings(s, s.OpenPlaces().unwritten)) s.findings.push_back(std::move(f));
}

}  // namespace leaky::tools

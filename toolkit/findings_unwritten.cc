// The detector of regions never written (explain_places): one finding per
// leftover content, its region in the plan's terms and its usual cause.
#include <algorithm>
#include <map>
#include <optional>

#include "findings.h"

namespace leaky::toolkit {

using json = nlohmann::json;

std::vector<ElementRange> SpansOf(const std::vector<Unwritten>& u) {
  std::vector<ElementRange> spans;
  for (const Unwritten& w : u) spans.push_back(w.span);
  return spans;
}

// The usual cause of a region found from its indices, from its
// constraints' numbers (DescribeInferred's facts).
std::string CauseOfInferred(const json& details, const Layout* plan) {
  if (!details.contains("constraints")) return "";
  for (const json& c : details["constraints"]) {
    const std::string feature = c["feature"], form = c["form"];
    if (form == "residue" && (feature == "offset_in_tile" || feature == "offset_in_core" ||
                              feature == "index")) {
      const uint64_t w = c["period"];
      if (plan && feature == "index" && plan->cores() > 1 && w == plan->core_length.front() + 1) {
        return "one element between neighbouring cores: the cores were stepped by " +
               std::to_string(w) + " = per_core + 1 while each covers " +
               std::to_string(w - 1) + " (a core step one too long)";
      }
      return "one element of every " + std::to_string(w) +
             " is never computed: a loop striding by " + std::to_string(w) + " over " +
             std::to_string(w - 1) +
             " workers (one work-item or lane reserved, or a local size one short of the "
             "stride)";
    }
    if (form == "range" && feature == "offset_from_tile_end" && c["first"] == 0) {
      const uint64_t k = c["last"].get<uint64_t>() + 1;
      return "each tile's count is " + std::to_string(k) + " short: a loop bound of length - " +
             std::to_string(k) + " (an off-by-one in the count, `<` where `<=` was meant)";
    }
    if (form == "range" && feature == "tile_half") {
      return "only the first half of each tile is written: a copy or loop length in the wrong "
             "unit (halved, or elements given where a count of 2-byte units was expected)";
    }
    if (form == "residue" && (feature == "tile" || feature == "global_tile")) {
      const uint64_t p = c["period"];
      return "only one tile in " + std::to_string(p) + " is processed: the tile loop steps by " +
             std::to_string(p) + " (the buffer count or the core count used as the stride)";
    }
    if (form == "fraction_tail") {
      const uint64_t q = c["fraction"], u = c["unit"];
      const std::string words =
          u > 1 ? " (moved as " + std::to_string(u) + "-element words)" : "";
      if (plan && q == plan->element_bytes) {
        return "only length / " + std::to_string(q) + " elements of each tile were moved" + words +
               ": " + std::to_string(q) + " is the element size, so the count of elements was "
               "taken as bytes (or divided by the element size once too often)";
      }
      return "only length / " + std::to_string(q) + " elements of each tile were moved" + words +
             ": a copy or loop length in the wrong unit";
    }
    if (form == "aligned_head") {
      const uint64_t m = c["multiple"];
      return "each core's alignment peel (its elements before the first multiple of " +
             std::to_string(m) + ") was never processed: the peel loop is missing or empty";
    }
    if (form == "aligned_tail") {
      const uint64_t m = c["multiple"];
      return "each length was rounded down to a multiple of " + std::to_string(m) +
             " (a vector width or alignment) and the remainder never processed";
    }
    if (form == "range" && feature == "offset_from_core_end" && c["first"] == 0) {
      const uint64_t k = c["last"].get<uint64_t>() + 1;
      return "each core stops " + std::to_string(k) + " elements early: its length is " +
             std::to_string(k) + " short";
    }
    if (form == "range" && feature == "offset_in_core" && c["first"] == 0) {
      const uint64_t k = c["last"].get<uint64_t>() + 1;
      return "each core's first " + std::to_string(k) +
             " elements are skipped: its loop starts past its own start";
    }
  }
  return "never computed or copied out there";
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

// A not_written finding's words: where, what it still holds, the cause.
std::string NeverWritten(const std::string& where, const std::string& content,
                         const std::string& cause) {
  return "never written: " + where + ", still holding " + content +
         (content == "the input" || content == "dy"
              ? " (run in place; or the input copied through there). "
              : " (the buffer's previous contents). ") +
         cause;
}

// A region holding the op's own pass-through operand (forward: the input;
// backward: dy) is wrong at negative inputs only, where it is what slope 1
// gives: the multiply skipped there, or never written over a copy of the
// input. The bits cannot tell; both are named. A part of the plan (the
// remainder, a core, a tile) left whole is most often a loop that never
// ran there: never written first; element positions inside each tile (one
// lane, a vector's component) a path that skips the multiply: that first.
bool PassThrough(const Analysis& s, const std::string& content) {
  return s.in.leaky_relu_values && content == (s.in.backward ? "dy" : "the input");
}

Finding PassThroughFinding(const Analysis& s, const std::string& where, const std::string& cause,
                           json details) {
  const bool whole_parts = details.value("region", "") != "composed";
  const std::string v = s.in.backward ? "dy" : "x";
  const std::string multiply = "the multiply by the slope is missing there (slope 1: one "
                               "component of an unrolled vector, a lane or path that stores " +
                               v + ")";
  const std::string unwritten = "never written over an output that held " +
                                std::string(s.in.backward ? "dy" : "the input") +
                                " (run in place, or copied through first): " + cause;
  details["candidates"] = whole_parts ? json{"not_written", "slope_mismatch"}
                                      : json{"slope_mismatch", "not_written"};
  return {Kind("ambiguous"),
          "in " + where + ", the negative inputs came out as " + v + " unscaled (the positives "
              "are " + v + " anyway), and two causes give these very bits: " +
              (whole_parts ? unwritten + " - or " + multiply : multiply + " - or " + unwritten),
          details};
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
        DescribeRegion(s.places.plan, s.n, spans, &details, s.Features());
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
    std::string cause = details["region"] == "composed" ? CauseOfInferred(details, s.places.plan)
                                                        : CauseOfUnwritten(details["region"]);
    // A tail that starts where the last core would end had every core c
    // started at c x S (S not its share): name S, the arithmetic trace of
    // the wrong per-core offset (7 x 256 + 1257 = 3049 for cores a tile
    // apart), not a dropped tail.
    if (s.in.plan && details["region"] == "tail" && s.in.plan->cores() > 1) {
      const Layout& plan = *s.in.plan;
      const uint64_t k = details["first"].get<uint64_t>(), last = plan.cores() - 1;
      // The split computed for cores + 1 shares, the last share unowned.
      const uint64_t shares = plan.cores() + 1, share = k / plan.cores();
      if (k % plan.cores() == 0 && (share == s.n / shares || share == (s.n + shares - 1) / shares)) {
        details["shares"] = shares;
        cause = std::to_string(k) + " = " + std::to_string(plan.cores()) + " x " +
                std::to_string(share) + ": the split was computed for " + std::to_string(shares) +
                " shares of " + std::to_string(share) + " (cores + 1), so the cores covered [0, " +
                std::to_string(k) + ") and no core took the last share";
      }
      const uint64_t length = plan.core_length.back();
      if (!details.contains("shares") && k > length && (k - length) % last == 0) {
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
    } else if (PassThrough(s, content)) {
      found.push_back(PassThroughFinding(s, region, cause, details));
    } else {
      found.push_back({Kind("not_written"), NeverWritten(region, content, cause), details});
    }
  }
  return found;
}

// Whether element i holds only its first k bytes of the result (k < the
// element's size, little-endian) and zeros after: a copy that ended
// mid-element, its length counted in bytes.
bool PartlyWritten(const Analysis& s, uint64_t i) {
  const uint64_t o = s.in.output.bits[i], g = s.in.golden.bits[i];
  const size_t bytes = DtypeBytes(s.in.dtype);
  for (size_t k = 1; k < bytes; ++k) {
    const uint64_t low = (uint64_t{1} << (8 * k)) - 1;
    if ((o & ~low) == 0 && (o & low) == (g & low) && o != g && (g & low) != 0) return true;
  }
  return false;
}

// What the spans leave: short runs of one leftover (a lane of every 8, the
// last element of each tile) whose place only the indices together show.
// One finding per content whose elements - with the spans of the same
// content found before, which then give way to it - fill a region found
// from them.
void FindScatteredUnwritten(Analysis& s, size_t first_span_finding) {
  const RegionFeatures* features = s.Features();
  if (!features) return;
  const CheckInput& in = s.in;
  const std::vector<uint64_t> open = s.Open();
  // A repeated value: the most common output among the open elements.
  std::map<uint64_t, uint64_t> counts;
  for (uint64_t i : open) counts[in.output.bits[i]]++;
  uint64_t fill = 0, most = 0;
  for (const auto& [bits, count] : counts) {
    if (count > most) {
      most = count;
      fill = bits;
    }
  }
  std::vector<Leftover> contents = {Leftover::kZero, Leftover::kInput};
  if (in.backward) contents.push_back(Leftover::kDy);
  if (most >= 4) contents.push_back(Leftover::kFill);
  std::vector<char> wrong(s.n, 0);
  for (uint64_t i : s.wrong) wrong[i] = 1;
  for (const Leftover content : contents) {
    const std::string name = LeftoverName(content);
    // Zeros: an element cut mid-way by a byte count belongs to the region too.
    const auto looks = [&](uint64_t i) {
      return HoldsLeftover(s.values, content, fill, i) ||
             (content == Leftover::kZero && PartlyWritten(s, i));
    };
    std::vector<uint64_t> members;
    for (uint64_t i : s.Open()) {
      if (looks(i)) members.push_back(i);
    }
    // Spans that DescribeRegion could only list (their ends stretched over
    // a coincident leftover): their wrong elements may still fill a region.
    bool listed = false;
    for (size_t k = first_span_finding; k < s.findings.size(); ++k) {
      const json& d = s.findings[k].details;
      listed = listed || (d.value("content", "") == name && d.value("region", "") == "extents");
    }
    if (members.empty() && !listed) continue;
    // The spans of this content found before.
    std::vector<uint64_t> spanned;
    for (const Unwritten& w : s.OpenPlaces().unwritten) {
      if (w.content != name) continue;
      for (uint64_t i = w.span.begin; i < w.span.end; ++i) {
        if (wrong[i]) spanned.push_back(i);
      }
    }
    // Positive inputs equal their result: a few elements alone say nothing.
    if (members.size() < 4 && spanned.empty()) continue;
    std::vector<uint64_t> all = members;
    all.insert(all.end(), spanned.begin(), spanned.end());
    std::sort(all.begin(), all.end());
    const std::optional<Region> region = InferRegion(*features, all, looks);
    if (!region || region->constraints.empty()) continue;
    // One index range says no more than the spans' own description.
    if (members.empty() && region->constraints.size() == 1 &&
        region->constraints[0].feature == RegionFeature::kIndex) {
      continue;
    }
    if (!spanned.empty()) {  // one fault: its spans' findings give way
      std::erase_if(s.findings, [&, k = size_t{0}](const Finding& f) mutable {
        return k++ >= first_span_finding && f.kind == std::string("not_written") &&
               f.details.value("content", "") == name;
      });
    }
    json details;
    const std::string where = DescribeInferred(*features, *region, &details);
    details["content"] = name;
    s.Explain(members);
    // Its zeros of the other sign are the same leftover.
    for (uint64_t i : s.zero_sign) {
      if (features->In(*region, i) && looks(i)) s.explained[i] = 1;
    }
    std::string cause = CauseOfInferred(details, s.places.plan);
    const auto partly = content != Leftover::kZero
                            ? 0
                            : std::count_if(members.begin(), members.end(),
                                            [&](uint64_t i) { return PartlyWritten(s, i); });
    if (partly > 0) {
      details["partly_written"] = partly;
      cause += "; " + std::to_string(partly) +
               " element(s) at the region's start hold only their first bytes: the copy ended "
               "mid-element, its length counted in bytes";
    }
    s.findings.push_back(PassThrough(s, name)
                             ? PassThroughFinding(s, where, cause, details)
                             : Finding{Kind("not_written"), NeverWritten(where, name, cause), details});
  }
}

}  // namespace

void FindUnwritten(Analysis& s) {
  const size_t first = s.findings.size();
  for (Finding& f : UnwrittenFindings(s, s.OpenPlaces().unwritten)) s.findings.push_back(std::move(f));
  FindScatteredUnwritten(s, first);
}

}  // namespace leaky::toolkit

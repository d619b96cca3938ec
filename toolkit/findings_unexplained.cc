// The detector of last resort: what no other explains is said as such,
// never guessed at, with where it sits.
#include <map>
#include <utility>

#include "findings.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

// Where unexplained errors sit: runs at a regular stride say "a wrong offset
// per tile or per core" even when their values say nothing.
std::string Repeats(const Analysis& s, const std::vector<uint64_t>& open, json* details) {
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [start, end)
  constexpr uint64_t kJoin = 16;
  for (uint64_t i : open) {
    if (!runs.empty() && i - runs.back().second <= kJoin)
      runs.back().second = i + 1;
    else
      runs.emplace_back(i, i + 1);
  }
  if (runs.size() < 3) return "";
  std::map<uint64_t, uint64_t> counts;
  for (size_t j = 1; j < runs.size(); ++j) counts[runs[j].first - runs[j - 1].first]++;
  uint64_t period = 0, best = 0;
  for (const auto& [g, count] : counts) {
    if (count > best) {
      best = count;
      period = g;
    }
  }
  uint64_t near = 0;
  for (const auto& [g, count] : counts)
    near += g + kJoin >= period && g <= period + kJoin ? count : 0;
  if (near * 10 < (runs.size() - 1) * 8) return "";
  (*details)["period"] = period;
  (*details)["runs"] = runs.size();
  std::string text = "; they come in " + std::to_string(runs.size()) + " runs every " +
                     std::to_string(period) + " elements";
  if (s.in.plan && period == s.in.plan->tile_length) {
    text += " (the plan's tile length: something wrong per tile)";
  } else if (s.in.plan && !s.in.plan->core_length.empty() &&
             period == s.in.plan->core_length.front()) {
    text += " (one core's share: something wrong per core)";
  }
  return text;
}

}  // namespace

void FindUnexplained(Analysis& s) {
  using Kind = ReportedKind<FindingDetector::kUnexplained>;
  const std::vector<uint64_t> open = s.Open();
  if (open.empty()) return;
  json details = {{"index", open.front()}, {"count", open.size()}};
  std::string repeats = Repeats(s, open, &details);
  if (s.in.eight_bit) {
    details["examples"] = ByteExamples(s, open);
    repeats += "; " + ByteExample(s, open.front());
  }
  s.findings.push_back({Kind("mismatch"),
                        std::to_string(open.size()) +
                            " mismatches that no explanation covers " +
                            (s.in.leaky_relu_values
                                 ? "(not the op computed another way, not a value of another "
                                   "index, not an unwritten region)"
                                 : "(not a value of another index, not an unwritten region, "
                                   "and none of the faults modelled for this op)") +
                            "; the first at index " +
                            std::to_string(open.front()) + repeats,
                        details});
}

}  // namespace leaky::toolkit

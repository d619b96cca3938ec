#include "findings_regions.h"

#include <map>
#include <optional>

namespace leaky::toolkit {

using json = nlohmann::json;

std::string NumberList(const std::vector<uint64_t>& numbers) {
  std::string text;
  for (size_t k = 0; k < numbers.size();) {
    size_t e = k;
    while (e + 1 < numbers.size() && numbers[e + 1] == numbers[e] + 1) ++e;
    if (!text.empty()) text += ", ";
    text += std::to_string(numbers[k]);
    if (e > k) text += "-" + std::to_string(numbers[e]);
    k = e + 1;
  }
  return text;
}

std::string Where(const Layout& plan, uint64_t index, json* details, const std::string& prefix) {
  const Layout::Location at = plan.Locate(index);
  if (!at.inside) return "past the planned range";
  (*details)[prefix + "core"] = at.core;
  (*details)[prefix + "tile"] = at.tile;
  std::string where = "core " + std::to_string(at.core) + " of " + std::to_string(plan.cores()) +
                      ", tile " + std::to_string(at.tile) + " of " +
                      std::to_string(at.tiles_in_core);
  const bool tail_tile = at.tile + 1 == at.tiles_in_core;
  const bool last_core = at.core + 1 == plan.cores();
  if (tail_tile && last_core)
    where += " (the last core's tail tile)";
  else if (tail_tile)
    where += " (that core's tail tile)";
  if (index == at.tile_start) where += ", at the tile's first element";
  return where;
}

std::string DescribeRegion(const Layout* plan, uint64_t n, const std::vector<ElementRange>& spans,
                           json* details, const RegionFeatures* features) {
  auto extent = [](const ElementRange& s) {
    return "[" + std::to_string(s.begin) + ", " + std::to_string(s.end) + ")";
  };
  uint64_t total = 0;
  for (const ElementRange& s : spans) total += s.size();
  (*details)["elements"] = total;
  if (spans.size() == 1 && spans[0].begin == 0 && spans[0].end == n) {
    (*details)["region"] = "all";
    return "the whole output";
  }
  if (plan && plan->cores() > 0) {
    const Layout& p = *plan;
    // The even split's remainder: the last core's n % cores elements.
    if (spans.size() == 1 && p.split == "even" && spans[0].end == n &&
        spans[0].begin == RemainderStart(p) && spans[0].begin > p.core_start.back()) {
      (*details)["region"] = "remainder";
      (*details)["first"] = spans[0].begin;
      (*details)["core"] = p.cores() - 1;
      return "the even split's remainder " + extent(spans[0]) + ", the last " +
             std::to_string(spans[0].size()) + " elements of core " +
             std::to_string(p.cores() - 1) + " (n % cores)";
    }
    // Whole cores.
    std::vector<uint64_t> cores;
    bool whole = true;
    for (const ElementRange& s : spans) {
      uint64_t at = s.begin;
      while (whole && at < s.end) {
        const Layout::Location l = p.Locate(at);
        whole = l.inside && l.core_start == at && at + l.core_length <= s.end;
        if (whole) {
          cores.push_back(l.core);
          at += l.core_length;
        }
      }
      whole = whole && at == s.end;
    }
    if (whole && !cores.empty()) {
      (*details)["region"] = "cores";
      (*details)["cores"] = cores;
      return std::string(cores.size() > 1 ? "cores " : "core ") + NumberList(cores) + " (of " +
             std::to_string(p.cores()) + "), whole";
    }
    // Whole tiles: each core's first or last ones.
    std::map<uint32_t, std::vector<uint64_t>> tiles;
    bool aligned = true;
    for (const ElementRange& s : spans) {
      uint64_t at = s.begin;
      while (aligned && at < s.end) {
        const Layout::Location l = p.Locate(at);
        aligned = l.inside && l.tile_start == at && at + l.tile_length <= s.end;
        if (aligned) {
          tiles[l.core].push_back(l.tile);
          at += l.tile_length;
        }
      }
      aligned = aligned && at == s.end;
    }
    if (aligned && !tiles.empty()) {
      std::vector<uint64_t> which;
      for (const auto& [core, list] : tiles) which.push_back(core);
      const uint64_t k = tiles.begin()->second.size();
      bool first = true, last = true;
      for (const auto& [core, list] : tiles) {
        const uint64_t count = p.TileCount(core);
        first = first && list.size() == k;
        last = last && list.size() == k;
        for (uint64_t j = 0; j < list.size(); ++j) {
          first = first && list[j] == j;
          last = last && list[j] == count - list.size() + j;
        }
      }
      const std::string each = which.size() > 1 ? " of each of cores " + NumberList(which)
                                                : " of core " + NumberList(which);
      const std::string count = k == 1 ? " tile" : " " + std::to_string(k) + " tiles";
      (*details)["cores"] = which;
      (*details)["tiles_per_core"] = k;
      if (last && !(first && k == 1 && p.TileCount(tiles.begin()->first) == 1)) {
        (*details)["region"] = "last_tiles";
        return "the last" + count + each + " (of " + std::to_string(p.cores()) + ")";
      }
      bool all_but_last = true;
      for (const auto& [core, list] : tiles) {
        const uint64_t tiles_in_core = p.TileCount(core);
        all_but_last = all_but_last && tiles_in_core >= 2 && list.size() == tiles_in_core - 1 &&
                       list[0] == 0 && list.back() == tiles_in_core - 2;
      }
      if (all_but_last) {
        (*details)["region"] = "all_but_last_tile";
        return "every tile but the last" + each + " (of " + std::to_string(p.cores()) + ")";
      }
      if (first) {
        (*details)["region"] = "first_tiles";
        return "the first" + count + each + " (of " + std::to_string(p.cores()) + ")";
      }
    }
  }
  // The same number of elements at the start (or the end) of each core.
  if (plan && plan->cores() > 0 && spans.size() >= 2) {
    const Layout& p = *plan;
    bool starts = true, ends = true;
    std::vector<uint64_t> which;
    for (const ElementRange& s : spans) {
      const Layout::Location l = p.Locate(s.begin);
      starts = starts && l.inside && s.begin == l.core_start && s.size() == spans[0].size() &&
               s.end < l.core_start + l.core_length;
      ends = ends && l.inside && s.end == l.core_start + l.core_length &&
             s.size() == spans[0].size() && s.begin > l.core_start;
      which.push_back(l.core);
    }
    if (starts || ends) {
      (*details)["region"] = starts ? "core_starts" : "core_ends";
      (*details)["cores"] = which;
      (*details)["width"] = spans[0].size();
      return std::string("the ") + (starts ? "first " : "last ") + std::to_string(spans[0].size()) +
             " elements of each of cores " + NumberList(which) + " (of " +
             std::to_string(p.cores()) + ")";
    }
  }
  if (spans.size() == 1 && spans[0].end == n) {
    (*details)["region"] = "tail";
    (*details)["first"] = spans[0].begin;
    std::string text = "from index " + std::to_string(spans[0].begin) + " to the end";
    if (plan) text += " (from " + Where(*plan, spans[0].begin, details) + ")";
    return text;
  }
  // Any other shape: the simplest region the spans fill exactly (a lane
  // of every 8, each tile's second half, every other tile, ...).
  if (features && plan && plan->cores() > 0 && spans.size() >= 2) {
    std::vector<char> inside(n, 0);
    std::vector<uint64_t> members;
    for (const ElementRange& s : spans) {
      for (uint64_t i = s.begin; i < s.end; ++i) {
        inside[i] = 1;
        members.push_back(i);
      }
    }
    const std::optional<Region> region =
        InferRegion(*features, members, [&](uint64_t i) { return inside[i] != 0; });
    if (region) return DescribeInferred(*features, *region, details);
  }
  (*details)["region"] = "extents";
  json list = json::array();
  std::string text;
  for (size_t k = 0; k < spans.size(); ++k) {
    json one = {{"first", spans[k].begin}, {"last", spans[k].end - 1}};
    std::string where = extent(spans[k]);
    if (plan) where += " (" + Where(*plan, spans[k].begin, &one) + ")";
    list.push_back(one);
    if (k < 4) text += (text.empty() ? "" : "; ") + where;
  }
  if (spans.size() > 4) text += "; and " + std::to_string(spans.size() - 4) + " more";
  (*details)["extents"] = list;
  return text;
}

}  // namespace leaky::toolkit

// The findings' words for where things are: spans, indices and lists of
// cores or tiles in the plan's own terms (explain_places finds the spans).
#ifndef LEAKY_TOOLKIT_FINDINGS_REGIONS_H_
#define LEAKY_TOOLKIT_FINDINGS_REGIONS_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "explain_places.h"
#include "explain_regions.h"
#include "layout.h"

namespace leaky::toolkit {

// Spans in the plan's terms: "the whole output", "cores 2-7 (of 8)",
// "the last tile of each of cores 0-7", "the first 2 tiles of each core",
// "the remainder of the even split [10000, 10007) (core 7)", "[k, n): from
// core c tile t to the end", else a list of extents. `details` gets the
// same facts (a "region" name and its numbers).
// Spans of no named shape are searched for the simplest region they fill
// (explain_regions) when `features` is given.
std::string DescribeRegion(const Layout* plan, uint64_t n, const std::vector<ElementRange>& spans,
                           nlohmann::json* details, const RegionFeatures* features = nullptr);

// "core 1 of 8, tile 3 of 4 (that core's tail tile)".
std::string Where(const Layout& plan, uint64_t index, nlohmann::json* details,
                  const std::string& prefix = "");

// "0-3, 5, 7": a sorted list of numbers with runs joined.
std::string NumberList(const std::vector<uint64_t>& numbers);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FINDINGS_REGIONS_H_

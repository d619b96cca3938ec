// report.html: one self-contained page from the results and the run
// directory: tables, Vega-Lite charts (gan/results/charts.h; the charting scripts
// inlined, toolkit/vega.h), PNGs as data URIs; nothing from the network.
#ifndef LEAKY_GAN_REPORT_H_
#define LEAKY_GAN_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "records.h"
#include "vega.h"

namespace leaky::gan {

// Without the charting scripts (`scripts.missing`), the page has every
// table and sample and says in place of each chart section how to fetch them.
std::string RenderReport(const Results& results, const std::string& run_dir,
                         const toolkit::VegaScripts& scripts);

// The report's first paragraph: which variant did best on the final
// sample quality (images: FCD; ring8: modes covered), or that they tie,
// and whether the seeds can tell ("" when no variant measured it).
std::string Headline(const Results& results);

// The claims' section: their table, folded to one line when no claim has a
// verdict (fewer than 3 seeds).
std::string ClaimsSection(const std::vector<Claim>& claims);

// `bytes` in Base64 (the report's images are data URIs).
std::string Base64(const std::vector<uint8_t>& bytes);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_REPORT_H_

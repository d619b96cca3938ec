// report.html: one self-contained page (inline SVG charts, PNGs as data
// URIs, no scripts or network) from the results and the run directory.
#ifndef LEAKY_GAN_REPORT_H_
#define LEAKY_GAN_REPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "records.h"

namespace leaky::gan {

std::string RenderReport(const Results& results, const std::string& run_dir);

// `bytes` in Base64 (the report's images are data URIs).
std::string Base64(const std::vector<uint8_t>& bytes);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_REPORT_H_

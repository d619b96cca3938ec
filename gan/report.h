// report.html: one self-contained page (inline SVG charts, PNGs as data
// URIs, no scripts or network) from results.json and the run directory.
#ifndef LEAKY_GAN_REPORT_H_
#define LEAKY_GAN_REPORT_H_

#include <nlohmann/json.hpp>

#include <string>

namespace leaky::gan {

std::string RenderReport(const nlohmann::json& results, const std::string& run_dir);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_REPORT_H_

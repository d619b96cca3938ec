// The report's charts as Vega-Lite specs (toolkit/vega.h writes them into
// the page): small multiples, a panel per variant with the LeakyReLU(0.2)
// baseline of the same norm setting drawn in every panel, so no chart
// overlays more than two lines.
#ifndef LEAKY_GAN_CHARTS_H_
#define LEAKY_GAN_CHARTS_H_

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "records.h"
#include "vega.h"

namespace leaky::gan {

// Losses, D outputs, the gradient norm, step time and sample quality over
// training: one faceted chart per measure.
std::string TrainingCharts(const Results& results, const toolkit::VegaScripts& scripts);

// Fraction exactly 0, fraction <= 0 and dead channels over training: one
// chart per measure, a row of panels per variant and a column per layer.
std::string LayerCharts(const Results& results, const toolkit::VegaScripts& scripts);

// The study's headline across setups (docs/study/PLAN-4.md, "The tables
// registered for the README", 2): final FCD, ReLU minus LeakyReLU (paired
// by seed), mean and Student-t 95% interval per setup (label, study) and,
// where a setup has several LeakyReLU slopes, per slope. A Vega-Lite spec
// with its data inline (docs/study renders it to SVG: scripts/vega_svg.js).
nlohmann::json HeadlineChart(const std::vector<std::pair<std::string, Results>>& setups);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_CHARTS_H_

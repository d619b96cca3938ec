// The report's charts as Vega-Lite specs (toolkit/vega.h writes them into
// the page): small multiples, a panel per variant with the LeakyReLU(0.2)
// baseline of the same norm setting drawn in every panel, so no chart
// overlays more than two lines.
#ifndef LEAKY_GAN_CHARTS_H_
#define LEAKY_GAN_CHARTS_H_

#include <string>

#include "records.h"
#include "vega.h"

namespace leaky::gan {

// Losses, D outputs, the gradient norm, step time and sample quality over
// training: one faceted chart per measure.
std::string TrainingCharts(const Results& results, const toolkit::VegaScripts& scripts);

// Fraction exactly 0, fraction <= 0 and dead channels over training: one
// chart per measure, a row of panels per variant and a column per layer.
std::string LayerCharts(const Results& results, const toolkit::VegaScripts& scripts);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_CHARTS_H_

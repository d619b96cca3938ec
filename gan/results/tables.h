// The study's tables beyond the claims (docs/study/PLAN.md registered them
// before the runs): the setup crossing and where long training settles.
// Markdown, measured from the studies' results with measures.h, so
// docs/study/README.md can be checked against the committed results.
#ifndef LEAKY_GAN_TABLES_H_
#define LEAKY_GAN_TABLES_H_

#include <string>
#include <utility>
#include <vector>

#include "records.h"

namespace leaky::gan {

// One row per study and activation (relu, lrelu:0.2, without norm): ReLU's
// and LeakyReLU's layer-2 fraction exactly 0 at about step 2,000 and over
// the last third, the per-term D loss over the last third, the G-loss slope
// over the last two thirds, the final FCD beside the study's real-vs-real
// floor, and dead channels of layers 2 and 4 at the last probe; each mean
// [Student-t 95% interval] over seeds.
std::string CrossingMarkdown(const std::vector<Results>& studies);

// For a long study (relu and lrelu:0.2): per-term D loss and layer-2
// fractions averaged over each 500-step window (mean over seeds), then the
// slope per 1000 steps over the last quarter with its t-interval and
// whether it lies within +-kSettledSlope ("settled").
std::string SettleMarkdown(const Results& study);
inline constexpr double kSettledSlope = 0.02;

// Lab version 4 (docs/study/PLAN-4.md registered these before its runs).
//
// The slope sweep: per variant (relu, then each lrelu:<slope>, no norm), the
// final FCD, the final FCD and KID as ReLU minus the variant (paired by
// seed), layer 2's fraction <= 0 about step 2,000 and the per-term D loss
// over the last third; each mean [Student-t 95% interval] over seeds.
std::string SlopesMarkdown(const Results& study);

// Long training (relu and lrelu:0.2): per window of `window` steps, the
// per-term D loss, ReLU's layer-2 fraction exactly 0 and the FCD (the
// quality points in the window), each mean [t-interval] over seeds.
std::string LongMarkdown(const Results& study, double window = 2000);

// The quality measure per classifier (one per dataset): its accuracy on the
// images it did not train on, the three-way split, the real-vs-real floors
// (FCD of the reference against another 1,000; FCD and KID over random
// halvings, mean and spread) and the setups (label, study) that used it.
std::string FloorsMarkdown(const std::vector<std::pair<std::string, Results>>& studies);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_TABLES_H_

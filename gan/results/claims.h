// The article's claims about ReLU, LeakyReLU and PReLU in a DCGAN-style
// discriminator on MNIST, each measured on a study's results and given a
// verdict. The measures and bounds below were first fixed before the
// five-seed study (bcc22ff); issue 23 changed the statistics, split the
// second definitions into rows of their own and fixed the window at step
// 2,000 (the article's words), in a commit registered before its runs. The
// bounds are the article's words and are never tuned:
//
// - "ReLU: more than 85% (82% elsewhere) of layer 2's activations exactly
//   zero by about step 2,000": layer 2's fraction exactly zero, averaged over
//   the logged steps 1,900-2,100 (runs shorter than 2,100 steps: within
//   steps/30 of 2/3 of training). 85% and 82% are two rows.
// - "LeakyReLU: about 30% sparsity": the same window, "about 30%" = 25% to
//   35%; fraction <= 0 and fraction exactly 0 are two rows (only <= 0 can
//   mean 30%: LeakyReLU gives exactly 0 only for an input of exactly 0).
// - "ReLU: D loss stuck near 0.69, G loss climbing, samples like noise": the
//   per-term D loss (the lab's d_loss is the sum of the real and fake terms;
//   chance is ln 2 per term) over the last third within 0.05 of ln 2; the
//   G loss's least-squares slope over the last two thirds above zero; the
//   final FCD at least half the run's first measured FCD (training did not
//   halve the distance to real digits).
// - "LeakyReLU: D loss falling from 0.69 to about 0.45, G loss falling,
//   digits with clear outlines": per-term D loss over the last third within
//   0.40-0.50; the G loss slope below zero; final FCD below half the first;
//   all ten classes in every seed's samples.
// - "LeakyReLU trains a better generator than ReLU" (ReLU's samples "like
//   noise", LeakyReLU's "clear digits"): final FCD, ReLU minus LeakyReLU
//   per seed (paired), above zero.
// - "PReLU: larger loss oscillation and slower convergence than LeakyReLU":
//   oscillation = the std of the D loss over the last third of training;
//   convergence = the first step at which FCD falls to 1.5x LeakyReLU's mean
//   final FCD (same norm; the last step if never); both as PReLU minus
//   LeakyReLU per seed (paired).
// - "f16: small negative products underflow to zero unless computed in
//   f32": the precision table's counts.
//
// Statistics: every interval is the Student-t 95% interval of the mean over
// seeds (paired comparisons: of the per-seed differences, with an exact
// sign test beside it). A part holds when its whole interval satisfies the
// bound, fails when none of it does, else is unclear; with fewer than 3
// seeds it gets no result. One rule for every row: reproduced when every
// part holds, not reproduced when every part fails, mixed when some hold
// and some fail, else unclear (no verdict with fewer than 3 seeds); over
// the norm settings and over setups likewise.
#ifndef LEAKY_GAN_CLAIMS_H_
#define LEAKY_GAN_CLAIMS_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "records.h"

namespace leaky::gan {

// The claims measured on MNIST results with variants named relu and
// lrelu:0.2 (and prelu for its claim), without and with "+bn"; none for
// other studies.
std::optional<std::vector<Claim>> MeasureClaims(const Results& results);

// One measured part of a claim as a line of text.
std::string ClaimPartText(const ClaimPart& part);

// The claims as a Markdown table (docs/study/README.md; the report has
// its own HTML table).
std::string ClaimsMarkdown(const std::vector<Claim>& claims);

// The claims of several setups (label, MeasureClaims of its study) as one
// Markdown table, a row per claim and norm setting. Studies of lab version 4
// (registered claims): the primary measure, the setups where the claim is
// reproduced, refuted and not shown (Holm-corrected), and a column per
// setup with the primary measure's mean and uncorrected interval. Earlier
// studies: a verdict column per setup, and in how many setups the claim was
// reproduced.
std::string ClaimsBySetupMarkdown(
    const std::vector<std::pair<std::string, std::vector<Claim>>>& setups);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_CLAIMS_H_

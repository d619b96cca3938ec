// The article's claims about ReLU, LeakyReLU and PReLU in a DCGAN-style
// discriminator on MNIST, each measured on a study's results (mean and 95%
// bootstrap interval over seeds) and given a verdict. The measures and their
// thresholds are fixed here, before any study was run, and never tuned:
//
// - "ReLU: more than 85% (82% elsewhere) of layer 2's activations exactly
//   zero by about step 2,000": layer 2's fraction exactly zero, averaged over
//   the logged steps within steps/30 of 2/3 of training (1900-2100 at 3000).
// - "LeakyReLU: about 30% sparsity": the same window, both definitions
//   (exactly zero; <= 0); "about 30%" = 25% to 35%.
// - "ReLU: D loss stuck near 0.69, G loss climbing, samples like noise": the
//   per-term D loss (the lab's d_loss is the sum of the real and fake terms;
//   chance is ln 2 per term) over the last third within 0.05 of ln 2; the
//   G loss's least-squares slope over the last two thirds above zero; the
//   final FCD at least half the run's first measured FCD (training did not
//   halve the distance to real digits).
// - "LeakyReLU: D loss falling from 0.69 to about 0.45, G loss falling,
//   digits with clear outlines": per-term D loss over the last third within
//   0.40-0.50; the G loss slope below zero; final FCD below half the first
//   and all ten classes in every seed's samples.
// - "PReLU: larger loss oscillation and slower convergence than LeakyReLU":
//   oscillation = the std of the D loss over the last third of training;
//   convergence = the first step at which FCD falls to 1.5x LeakyReLU's mean
//   final FCD (same norm; the last step if never); both as PReLU minus
//   LeakyReLU per seed (same seed: same weights, data and noise).
// - "f16: small negative products underflow to zero unless computed in
//   f32": the precision table's counts.
//
// A bound holds when the whole interval satisfies it, fails when none of it
// does, else is unclear. A claim with several parts is reproduced when all
// hold, not reproduced when all fail, else mixed; over the two norm
// settings likewise.
#ifndef LEAKY_GAN_CLAIMS_H_
#define LEAKY_GAN_CLAIMS_H_

#include <nlohmann/json.hpp>

#include <string>

namespace leaky::gan {

// The claims measured on MNIST results with variants named relu and
// lrelu:0.2 (and prelu for its claim), without and with "+bn"; null for
// other studies.
nlohmann::json MeasureClaims(const nlohmann::json& results);

// One measured part of a claim as a line of text.
std::string ClaimPartText(const nlohmann::json& part);

// The claims as a Markdown table (docs/study/README.md; the report has
// its own HTML table).
std::string ClaimsMarkdown(const nlohmann::json& claims);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_CLAIMS_H_

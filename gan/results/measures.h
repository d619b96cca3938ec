// Measures of a study's runs (per-seed history rows, quality points and
// dead-unit probes): the one place that defines a window mean, a slope or a
// per-seed summary, for the claims (claims.h) and the study's tables
// (tables.h).
#ifndef LEAKY_GAN_MEASURES_H_
#define LEAKY_GAN_MEASURES_H_

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "records.h"
#include "stats.h"

namespace leaky::gan {

// A variant of a study by name; null if absent.
const VariantResults* FindVariant(const Results& results, const std::string& name);

// Whether a variant's runs have dead-unit probes (studies before lab
// version 3 have none).
bool Probed(const VariantResults& variant);

// A value of a row: a number, or one layer's entry of a per-layer value.
class RowField {
 public:
  RowField(double Row::*number) : number_(number) {}  // NOLINT: a field converts implicitly
  RowField(PerLayer Row::*per_layer, int layer) : per_layer_(per_layer), layer_(layer) {}
  // NaN for a layer the row does not have (a results.json with fewer).
  double operator()(const Row& row) const {
    if (number_) return row.*number_;
    const PerLayer& values = row.*per_layer_;
    return static_cast<size_t>(layer_) < values.size() ? values[static_cast<size_t>(layer_)] : NAN;
  }

 private:
  double Row::*number_ = nullptr;
  PerLayer Row::*per_layer_ = nullptr;
  int layer_ = 0;
};

// Mean of a field over the rows with from <= step <= to (NaN if none).
double WindowMean(const std::vector<Row>& rows, const RowField& field, double from, double to);

// Mean FCD of the quality points with from <= step <= to (NaN if none).
double FcdWindowMean(const std::vector<QualityPoint>& points, double from, double to);

// Sample std of a field over the rows with step > from.
double StdAfter(const std::vector<Row>& rows, const RowField& field, double from);

// Least-squares slope of a field per 1000 steps over the rows with
// from < step <= to.
double SlopeBetween(const std::vector<Row>& rows, const RowField& field, double from, double to);

// One number per seed (from its run), summarised.
using PerRun = std::function<double(const Run& run)>;
Summary PerSeed(const std::vector<Run>& runs, const PerRun& f);

// Per seed present in both variants (same seed: same weights, data and
// noise), a's value minus b's.
std::vector<double> PairedDifferences(const VariantResults& a, const VariantResults& b,
                                      const PerRun& f);

// The last quality point's FCD; its KID (NaN before lab version 4).
double FinalFcd(const Run& run);
double FinalKid(const Run& run);

// "about step 2,000": the logged steps 1,900-2,100; runs shorter than 2,100
// steps use 2/3 of training +- steps/30.
struct Window {
  double from, to;
};
Window Around2000(double steps);

// A number as the tables print it (3 significant digits; integers above 100).
std::string Format(double v);

// "mean [low, high]" of a summary's Student-t interval ("mean (n=1)" when
// there is no interval).
std::string FormatInterval(const Summary& s, double scale = 1.0);

}  // namespace leaky::gan

#endif  // LEAKY_GAN_MEASURES_H_

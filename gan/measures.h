// Measures of a study's runs as results.json holds them (per-seed history
// rows, quality points and dead-unit probes): the one place that defines a
// window mean, a slope or a per-seed summary, for the claims (claims.h) and
// the study's tables (tables.h).
#ifndef LEAKY_GAN_MEASURES_H_
#define LEAKY_GAN_MEASURES_H_

#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "stats.h"

namespace leaky::gan {

// A variant of a study by name; null if absent.
const nlohmann::json* FindVariant(const nlohmann::json& results, const std::string& name);

// The runs of a variant: per seed, its history rows, quality points and
// probes (probes empty for studies before lab version 3).
struct Runs {
  std::vector<const nlohmann::json*> rows, quality, probes;
};
Runs RunsOf(const nlohmann::json& variant);

// A field of a row: `layer` < 0 for a number, else the per-layer array's entry.
double Field(const nlohmann::json& row, const std::string& key, int layer);

// Mean of a field over the rows with from <= step <= to (NaN if none).
double WindowMean(const nlohmann::json& rows, const std::string& key, int layer, double from,
                  double to);

// Sample std of a field over the rows with step > from.
double StdAfter(const nlohmann::json& rows, const std::string& key, double from);

// Least-squares slope of a field per 1000 steps over the rows with
// from < step <= to.
double SlopeBetween(const nlohmann::json& rows, const std::string& key, int layer, double from,
                    double to);

// One number per seed (from its rows and quality points), summarised.
using PerRun = std::function<double(const nlohmann::json& rows, const nlohmann::json& quality)>;
Summary PerSeed(const Runs& runs, const PerRun& f);

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

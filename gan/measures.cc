#include "measures.h"

#include <cmath>
#include <cstdio>

namespace leaky::gan {

using json = nlohmann::json;

const json* FindVariant(const json& results, const std::string& name) {
  for (const json& v : results["variants"]) {
    if (v["name"] == name) return &v;
  }
  return nullptr;
}

Runs RunsOf(const json& v) {
  Runs r;
  for (size_t i = 0; i < v["history"].size(); ++i) {
    r.rows.push_back(&v["history"][i]);
    r.quality.push_back(&v["quality_history"][i]);
    if (v.contains("probe_history")) r.probes.push_back(&v["probe_history"][i]);
  }
  return r;
}

double Field(const json& row, const std::string& key, int layer) {
  return layer < 0 ? row[key].get<double>() : row[key][static_cast<size_t>(layer)].get<double>();
}

double WindowMean(const json& rows, const std::string& key, int layer, double from, double to) {
  double sum = 0;
  int n = 0;
  for (const json& row : rows) {
    const double step = row["step"].get<double>();
    if (step >= from && step <= to) sum += Field(row, key, layer), ++n;
  }
  return n ? sum / n : NAN;
}

double StdAfter(const json& rows, const std::string& key, double from) {
  std::vector<double> x;
  for (const json& row : rows) {
    if (row["step"].get<double>() > from) x.push_back(row[key].get<double>());
  }
  return x.size() < 2 ? NAN : Summarize(x).std;
}

double SlopeBetween(const json& rows, const std::string& key, int layer, double from, double to) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const json& row : rows) {
    const double step = row["step"].get<double>();
    if (step <= from || step > to) continue;
    const double x = step / 1000, y = Field(row, key, layer);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double d = n * sxx - sx * sx;
  return n >= 2 && d != 0 ? (n * sxy - sx * sy) / d : NAN;
}

Summary PerSeed(const Runs& runs, const PerRun& f) {
  std::vector<double> values;
  for (size_t i = 0; i < runs.rows.size(); ++i) values.push_back(f(*runs.rows[i], *runs.quality[i]));
  return Summarize(values);
}

Window Around2000(double steps) {
  if (steps >= 2100) return {1900, 2100};
  return {steps * 2 / 3 - steps / 30, steps * 2 / 3 + steps / 30};
}

std::string Format(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), std::fabs(v) >= 100 ? "%.0f" : "%.3g", v);
  return buffer;
}

std::string FormatInterval(const Summary& s, double scale) {
  if (s.n < 2) return Format(s.mean * scale) + " (n=" + std::to_string(s.n) + ")";
  return Format(s.mean * scale) + " [" + Format(s.ci_low * scale) + ", " + Format(s.ci_high * scale) + "]";
}

}  // namespace leaky::gan

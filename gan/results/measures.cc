#include "measures.h"

#include <cmath>
#include <cstdio>

namespace leaky::gan {

const VariantResults* FindVariant(const Results& results, const std::string& name) {
  for (const VariantResults& v : results.variants) {
    if (v.plan.name == name) return &v;
  }
  return nullptr;
}

bool Probed(const VariantResults& variant) {
  return !variant.runs.empty() && variant.runs.front().probe_history.has_value();
}

double WindowMean(const std::vector<Row>& rows, const RowField& field, double from, double to) {
  double sum = 0;
  int n = 0;
  for (const Row& row : rows) {
    const double step = row.step;
    if (step >= from && step <= to) sum += field(row), ++n;
  }
  return n ? sum / n : NAN;
}

double StdAfter(const std::vector<Row>& rows, const RowField& field, double from) {
  std::vector<double> x;
  for (const Row& row : rows) {
    if (row.step > from) x.push_back(field(row));
  }
  return x.size() < 2 ? NAN : Summarize(x).std;
}

double SlopeBetween(const std::vector<Row>& rows, const RowField& field, double from, double to) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const Row& row : rows) {
    const double step = row.step;
    if (step <= from || step > to) continue;
    const double x = step / 1000, y = field(row);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double d = n * sxx - sx * sx;
  return n >= 2 && d != 0 ? (n * sxy - sx * sy) / d : NAN;
}

Summary PerSeed(const std::vector<Run>& runs, const PerRun& f) {
  std::vector<double> values;
  for (const Run& run : runs) values.push_back(f(run));
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

std::vector<double> PairedDifferences(const VariantResults& a, const VariantResults& b,
                                      const PerRun& f) {
  std::vector<double> diff;
  for (const Run& ra : a.runs) {
    for (const Run& rb : b.runs) {
      if (ra.seed == rb.seed) diff.push_back(f(ra) - f(rb));
    }
  }
  return diff;
}

double FinalFcd(const Run& run) { return run.quality_history.back().quality.fcd.value(); }
double FinalKid(const Run& run) { return run.quality_history.back().quality.kid.value_or(NAN); }

double FcdWindowMean(const std::vector<QualityPoint>& points, double from, double to) {
  double sum = 0;
  int n = 0;
  for (const QualityPoint& p : points) {
    if (p.step >= from && p.step <= to && p.quality.fcd) sum += *p.quality.fcd, ++n;
  }
  return n ? sum / n : NAN;
}

}  // namespace leaky::gan

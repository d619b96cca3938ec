#include "tables.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "measures.h"

namespace leaky::gan {
namespace {

using json = nlohmann::json;

constexpr const char* kActs[] = {"relu", "lrelu:0.2"};

std::string SetupLabel(const json& study) {
  return "width " + std::to_string(study.value("width", 1)) + ", init " +
         study.value("init", std::string("dcgan (v2)"));
}

// Per seed, the last probe's dead-channel fraction of a layer.
Summary DeadAtLastProbe(const Runs& runs, int layer) {
  std::vector<double> values;
  for (const json* probes : runs.probes) {
    if (probes->empty()) continue;
    values.push_back(Field(probes->back(), "dead_channels", layer));
  }
  return Summarize(values);
}

}  // namespace

std::string CrossingMarkdown(const std::vector<json>& studies) {
  std::ostringstream md;
  md << "| setup | activation | seeds | layer 2 exactly 0, steps 1900-2100 | layer 2 exactly 0, "
        "last third | D loss per term, last third | G-loss slope per 1000 steps, last two thirds "
        "| final FCD | real-vs-real FCD | dead channels, layer 2 | dead channels, layer 4 |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const json& study : studies) {
    const double steps = study["steps"].get<double>();
    const Window w = Around2000(steps);
    const std::string floor =
        study.contains("classifier") ? Format(study["classifier"]["real_fcd_floor"].get<double>()) : "-";
    for (const char* act : kActs) {
      const json* v = FindVariant(study, act);
      if (!v) continue;
      const Runs runs = RunsOf(*v);
      const auto zero2 = [&](double from, double to) {
        return PerSeed(runs, [&](const json& rows, const json&) {
          return WindowMean(rows, "sparsity_zero", 1, from, to);
        });
      };
      const Summary d = PerSeed(runs, [&](const json& rows, const json&) {
        return WindowMean(rows, "d_loss", -1, steps * 2 / 3 + 1, steps) / 2;
      });
      const Summary g = PerSeed(runs, [&](const json& rows, const json&) {
        return SlopeBetween(rows, "g_loss", -1, steps / 3, steps);
      });
      const Summary fcd = PerSeed(runs, [](const json&, const json& q) {
        return q.back()["fcd"].get<double>();
      });
      const auto dead = [&](int layer) {
        return runs.probes.empty() ? std::string("-") : FormatInterval(DeadAtLastProbe(runs, layer));
      };
      md << "| " << SetupLabel(study) << " | " << act << " | " << runs.rows.size() << " | "
         << FormatInterval(zero2(w.from, w.to)) << " | "
         << FormatInterval(zero2(steps * 2 / 3 + 1, steps)) << " | " << FormatInterval(d) << " | "
         << FormatInterval(g) << " | " << FormatInterval(fcd) << " | " << floor << " | " << dead(1)
         << " | " << dead(3) << " |\n";
    }
  }
  return md.str();
}

std::string SettleMarkdown(const json& study) {
  const double steps = study["steps"].get<double>();
  std::ostringstream md;
  md << "| steps | ReLU D loss per term | ReLU layer 2 exactly 0 | LeakyReLU D loss per term | "
        "LeakyReLU layer 2 <= 0 |\n|---|---|---|---|---|\n";
  const json* relu = FindVariant(study, "relu");
  const json* lrelu = FindVariant(study, "lrelu:0.2");
  if (!relu || !lrelu) return "";
  const Runs r = RunsOf(*relu), l = RunsOf(*lrelu);
  const auto window = [](const Runs& runs, const char* key, int layer, double from, double to,
                         double scale) {
    return Format(scale * PerSeed(runs, [&](const json& rows, const json&) {
                            return WindowMean(rows, key, layer, from, to);
                          }).mean);
  };
  for (double from = 0; from < steps; from += 500) {
    const double to = std::min(from + 500, steps);
    md << "| " << Format(from + 1) << "-" << Format(to) << " | "
       << window(r, "d_loss", -1, from + 1, to, 0.5) << " | "
       << window(r, "sparsity_zero", 1, from + 1, to, 1) << " | "
       << window(l, "d_loss", -1, from + 1, to, 0.5) << " | "
       << window(l, "sparsity_nonpos", 1, from + 1, to, 1) << " |\n";
  }
  const double tail = steps * 3 / 4;
  md << "\nSlope per 1000 steps over steps " << Format(tail + 1) << "-" << Format(steps)
     << " (mean [95% t-interval] over seeds; settled: the interval within +-" << Format(kSettledSlope)
     << "):\n\n| measure | slope | settled |\n|---|---|---|\n";
  const auto slope = [&](const char* label, const Runs& runs, const char* key, int layer,
                         double scale) {
    const Summary s = PerSeed(runs, [&](const json& rows, const json&) {
      return scale * SlopeBetween(rows, key, layer, tail, steps);
    });
    const char* settled = s.n < 3 ? "no verdict (fewer than 3 seeds)"
                          : s.ci_low >= -kSettledSlope && s.ci_high <= kSettledSlope ? "yes"
                          : s.ci_high < -kSettledSlope || s.ci_low > kSettledSlope   ? "no"
                                                                                    : "unclear";
    md << "| " << label << " | " << FormatInterval(s) << " | " << settled << " |\n";
  };
  slope("ReLU D loss per term", r, "d_loss", -1, 0.5);
  slope("ReLU layer 2 exactly 0", r, "sparsity_zero", 1, 1);
  slope("LeakyReLU D loss per term", l, "d_loss", -1, 0.5);
  slope("LeakyReLU layer 2 <= 0", l, "sparsity_nonpos", 1, 1);
  return md.str();
}

}  // namespace leaky::gan

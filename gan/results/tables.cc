#include "tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "measures.h"

namespace leaky::gan {
namespace {

constexpr const char* kActs[] = {"relu", "lrelu:0.2"};

std::string SetupLabel(const Study& study) {
  return "width " + std::to_string(study.width.value_or(1)) + ", init " +
         study.init.value_or("dcgan (v2)");
}

// Per seed, the last probe's dead-channel fraction of a layer.
Summary DeadAtLastProbe(const std::vector<Run>& runs, int layer) {
  std::vector<double> values;
  for (const Run& run : runs) {
    if (run.probe_history->empty()) continue;
    values.push_back(run.probe_history->back().dead[static_cast<size_t>(layer)]);
  }
  return Summarize(values);
}

}  // namespace

std::string CrossingMarkdown(const std::vector<Results>& studies) {
  std::ostringstream md;
  // Runs shorter than 2,100 steps are measured two thirds in, and say where.
  md << "| setup | activation | seeds | layer 2 exactly 0, steps 1900-2100 (shorter runs: the "
        "steps given) | layer 2 exactly 0, "
        "last third | D loss per term, last third | G-loss slope per 1000 steps, last two thirds "
        "| final FCD | real-vs-real FCD | dead channels, layer 2 | dead channels, layer 4 |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const Results& study : studies) {
    const double steps = study.study.steps;
    const Window w = Around2000(steps);
    const std::string floor =
        study.study.classifier ? Format(study.study.classifier->real_fcd_floor) : "-";
    for (const char* act : kActs) {
      const VariantResults* v = FindVariant(study, act);
      if (!v) continue;
      const std::vector<Run>& runs = v->runs;
      const auto zero2 = [&](double from, double to) {
        return PerSeed(runs, [&](const Run& r) { return WindowMean(r.history, {&Row::zero, 1}, from, to); });
      };
      const Summary d = PerSeed(runs, [&](const Run& r) {
        return WindowMean(r.history, &Row::d_loss, steps * 2 / 3 + 1, steps) / 2;
      });
      const Summary g = PerSeed(runs, [&](const Run& r) {
        return SlopeBetween(r.history, &Row::g_loss, steps / 3, steps);
      });
      const Summary fcd = PerSeed(runs, FinalFcd);
      const auto dead = [&](int layer) {
        return Probed(*v) ? FormatInterval(DeadAtLastProbe(runs, layer)) : std::string("-");
      };
      md << "| " << SetupLabel(study.study) << " | " << act << " | " << runs.size() << " | "
         << FormatInterval(zero2(w.from, w.to))
         << (w.from == 1900 && w.to == 2100
                 ? std::string()
                 : " (steps " + Format(std::ceil(w.from)) + "-" + Format(std::floor(w.to)) + ")")
         << " | "
         << FormatInterval(zero2(steps * 2 / 3 + 1, steps)) << " | " << FormatInterval(d) << " | "
         << FormatInterval(g) << " | " << FormatInterval(fcd) << " | " << floor << " | " << dead(1)
         << " | " << dead(3) << " |\n";
    }
  }
  return md.str();
}

std::string SettleMarkdown(const Results& study) {
  const double steps = study.study.steps;
  std::ostringstream md;
  md << "| steps | ReLU D loss per term | ReLU layer 2 exactly 0 | LeakyReLU D loss per term | "
        "LeakyReLU layer 2 <= 0 |\n|---|---|---|---|---|\n";
  const VariantResults* relu = FindVariant(study, "relu");
  const VariantResults* lrelu = FindVariant(study, "lrelu:0.2");
  if (!relu || !lrelu) return "";
  const std::vector<Run>& r = relu->runs;
  const std::vector<Run>& l = lrelu->runs;
  const RowField d_loss(&Row::d_loss), zero2(&Row::zero, 1), nonpos2(&Row::nonpos, 1);
  const auto window = [](const std::vector<Run>& runs, const RowField& field, double from,
                         double to, double scale) {
    return Format(scale * PerSeed(runs, [&](const Run& run) {
                            return WindowMean(run.history, field, from, to);
                          }).mean);
  };
  for (double from = 0; from < steps; from += 500) {
    const double to = std::min(from + 500, steps);
    md << "| " << Format(from + 1) << "-" << Format(to) << " | "
       << window(r, d_loss, from + 1, to, 0.5) << " | " << window(r, zero2, from + 1, to, 1)
       << " | " << window(l, d_loss, from + 1, to, 0.5) << " | "
       << window(l, nonpos2, from + 1, to, 1) << " |\n";
  }
  const double tail = steps * 3 / 4;
  md << "\nSlope per 1000 steps over steps " << Format(tail + 1) << "-" << Format(steps)
     << " (mean [95% t-interval] over seeds; settled: the interval within +-" << Format(kSettledSlope)
     << "):\n\n| measure | slope | settled |\n|---|---|---|\n";
  const auto slope = [&](const char* label, const std::vector<Run>& runs, const RowField& field,
                         double scale) {
    const Summary s = PerSeed(runs, [&](const Run& run) {
      return scale * SlopeBetween(run.history, field, tail, steps);
    });
    const char* settled = s.n < 3 ? "no verdict (fewer than 3 seeds)"
                          : s.ci_low >= -kSettledSlope && s.ci_high <= kSettledSlope ? "yes"
                          : s.ci_high < -kSettledSlope || s.ci_low > kSettledSlope   ? "no"
                                                                                    : "unclear";
    md << "| " << label << " | " << FormatInterval(s) << " | " << settled << " |\n";
  };
  slope("ReLU D loss per term", r, d_loss, 0.5);
  slope("ReLU layer 2 exactly 0", r, zero2, 1);
  slope("LeakyReLU D loss per term", l, d_loss, 0.5);
  slope("LeakyReLU layer 2 <= 0", l, nonpos2, 1);
  return md.str();
}

std::string SlopesMarkdown(const Results& study) {
  const VariantResults* relu = FindVariant(study, "relu");
  if (!relu) return "";
  const double steps = study.study.steps;
  const Window w = Around2000(steps);
  std::ostringstream md;
  md << "| variant | seeds | final FCD | final FCD, ReLU minus this (paired) | final KID, ReLU "
        "minus this (paired) | layer 2 <= 0, steps "
     << Format(std::ceil(w.from)) << "-" << Format(std::floor(w.to))
     << " | D loss per term, last third |\n|---|---|---|---|---|---|---|\n";
  for (const VariantResults& v : study.variants) {
    const bool leaky = v.plan.name.rfind("lrelu:", 0) == 0;
    if (&v != relu && !leaky) continue;
    const auto paired = [&](const PerRun& f) {
      if (&v == relu) return std::string("-");
      const std::vector<double> diff = PairedDifferences(*relu, v, f);
      // Studies before lab version 4 have no KID.
      if (diff.empty() || std::any_of(diff.begin(), diff.end(), [](double d) { return std::isnan(d); })) {
        return std::string("-");
      }
      return FormatInterval(Summarize(diff));
    };
    md << "| " << v.plan.name << " | " << v.runs.size() << " | "
       << FormatInterval(PerSeed(v.runs, FinalFcd)) << " | " << paired(FinalFcd) << " | "
       << paired(FinalKid) << " | "
       << FormatInterval(PerSeed(v.runs, [&](const Run& r) {
            return WindowMean(r.history, {&Row::nonpos, 1}, w.from, w.to);
          }))
       << " | " << FormatInterval(PerSeed(v.runs, [&](const Run& r) {
            return WindowMean(r.history, &Row::d_loss, steps * 2 / 3 + 1, steps) / 2;
          }))
       << " |\n";
  }
  return md.str();
}

std::string LongMarkdown(const Results& study, double window) {
  const VariantResults* relu = FindVariant(study, "relu");
  const VariantResults* lrelu = FindVariant(study, "lrelu:0.2");
  if (!relu || !lrelu) return "";
  const double steps = study.study.steps;
  const RowField d_loss(&Row::d_loss), zero2(&Row::zero, 1);
  const auto rows = [](const std::vector<Run>& runs, const RowField& field, double from, double to,
                       double scale) {
    return FormatInterval(PerSeed(runs, [&](const Run& run) {
      return scale * WindowMean(run.history, field, from, to);
    }));
  };
  const auto fcd = [](const std::vector<Run>& runs, double from, double to) {
    return FormatInterval(PerSeed(runs, [&](const Run& run) {
      return FcdWindowMean(run.quality_history, from, to);
    }));
  };
  std::ostringstream md;
  md << "| steps | ReLU D loss per term | ReLU layer 2 exactly 0 | ReLU FCD | LeakyReLU D loss "
        "per term | LeakyReLU FCD |\n|---|---|---|---|---|---|\n";
  for (double from = 0; from < steps; from += window) {
    const double to = std::min(from + window, steps);
    md << "| " << Format(from + 1) << "-" << Format(to) << " | "
       << rows(relu->runs, d_loss, from + 1, to, 0.5) << " | "
       << rows(relu->runs, zero2, from + 1, to, 1) << " | " << fcd(relu->runs, from + 1, to)
       << " | " << rows(lrelu->runs, d_loss, from + 1, to, 0.5) << " | "
       << fcd(lrelu->runs, from + 1, to) << " |\n";
  }
  return md.str();
}

std::string FloorsMarkdown(const std::vector<std::pair<std::string, Results>>& studies) {
  // One row per classifier (its checksum), with the setups that used it.
  std::vector<std::pair<const Results*, std::string>> rows;
  for (const auto& [label, study] : studies) {
    if (!study.study.classifier) continue;
    // A named copy: clang 14 cannot capture a structured binding.
    const std::string& checksum = study.study.classifier_checksum;
    auto row = std::find_if(rows.begin(), rows.end(), [&](const auto& r) {
      return r.first->study.classifier_checksum == checksum;
    });
    if (row == rows.end()) {
      rows.emplace_back(&study, label);
    } else {
      row->second += ", " + label;
    }
  }
  if (rows.empty()) return "";
  const auto spread = [](const std::optional<Summary>& s) {
    return s ? Format(s->mean) + " ± " + Format(s->std) + " (n=" + std::to_string(s->n) + ")"
             : std::string("-");
  };
  std::ostringstream md;
  md << "| dataset | classifier's accuracy on the images it did not train on | images: "
        "classifier / reference / GAN | FCD floor: the reference against another 1,000 | FCD "
        "floor over random halvings, mean ± std | KID floor over random halvings, mean ± std | "
        "setups |\n|---|---|---|---|---|---|---|\n";
  for (const auto& [study, labels] : rows) {
    const ClassifierInfo& c = *study->study.classifier;
    const auto count = [](const std::optional<long long>& n) {
      return n ? std::to_string(*n) : std::string("-");
    };
    char accuracy[64];
    std::snprintf(accuracy, sizeof(accuracy), "%.2f%% of %lld", 100 * c.held_out_accuracy,
                  c.held_out_digits);
    md << "| " << (study->study.dataset == "fashion" ? "Fashion-MNIST" : "MNIST") << " | "
       << accuracy << " | " << c.train_digits << " / " << count(c.reference_images) << " / "
       << count(c.gan_images) << " | " << Format(c.real_fcd_floor) << " | "
       << spread(c.fcd_floor) << " | " << spread(c.kid_floor) << " | " << labels << " |\n";
  }
  return md.str();
}

}  // namespace leaky::gan

#include "results_json.h"

#include <fstream>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace leaky::gan {
namespace {

using json = nlohmann::json;

// An optional value under `key`, only when the object has it.
template <class T>
void Put(json& j, const char* key, const std::optional<T>& value) {
  if (value) j[key] = *value;
}
template <class T>
void Get(const json& j, const char* key, std::optional<T>& value) {
  if (!j.contains(key)) return;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    value = WholeNumber<T>(j[key]);
  } else {
    value = j[key].get<T>();
  }
}

// Counts are whole numbers in a run's records and means over seeds in a
// variant's final: results.json writes them as integers and as decimals.
enum class Counts { kWhole, kMean };

void PutQuality(json& j, const Quality& q, Counts counts) {
  const auto count = [&](double v) {
    return counts == Counts::kWhole ? json(static_cast<int>(v)) : json(v);
  };
  Put(j, "fcd", q.fcd);
  Put(j, "kid", q.kid);
  if (q.class_coverage) j["class_coverage"] = count(*q.class_coverage);
  Put(j, "class_kl", q.class_kl);
  if (q.modes_covered) j["modes_covered"] = count(*q.modes_covered);
  Put(j, "high_quality_share", q.high_quality_share);
}

Quality GetQuality(const json& j) {
  Quality q;
  Get(j, "fcd", q.fcd);
  Get(j, "kid", q.kid);
  Get(j, "class_coverage", q.class_coverage);
  Get(j, "class_kl", q.class_kl);
  Get(j, "modes_covered", q.modes_covered);
  Get(j, "high_quality_share", q.high_quality_share);
  return q;
}

json RowJson(const Row& r) {
  return {{"step", r.step},           {"d_loss", r.d_loss}, {"g_loss", r.g_loss},
          {"d_real", r.d_real},       {"d_fake", r.d_fake}, {"grad_norm_first_layer", r.grad_norm},
          {"step_ms", r.step_ms},     {"sparsity_zero", r.zero}, {"sparsity_nonpos", r.nonpos},
          {"dead_channels", r.dead}};
}

Row RowFrom(const json& j) {
  return {WholeNumber<int>(j.at("step")),
          j.at("d_loss").get<double>(),
          j.at("g_loss").get<double>(),
          j.at("d_real").get<double>(),
          j.at("d_fake").get<double>(),
          j.at("grad_norm_first_layer").get<double>(),
          j.at("step_ms").get<double>(),
          j.at("sparsity_zero").get<PerLayer>(),
          j.at("sparsity_nonpos").get<PerLayer>(),
          j.at("dead_channels").get<PerLayer>()};
}

json ProbeJson(const Probe& p) {
  return {{"step", p.step},
          {"dead_channels", p.dead},
          {"zero_real", p.zero_real},
          {"nonpos_real", p.nonpos_real},
          {"zero_fake", p.zero_fake},
          {"nonpos_fake", p.nonpos_fake}};
}

Probe ProbeFrom(const json& j) {
  return {WholeNumber<int>(j.at("step")),          j.at("dead_channels").get<PerLayer>(),
          j.at("zero_real").get<PerLayer>(), j.at("nonpos_real").get<PerLayer>(),
          j.at("zero_fake").get<PerLayer>(), j.at("nonpos_fake").get<PerLayer>()};
}

json QualityPointJson(const QualityPoint& p) {
  json j = {{"step", p.step}};
  PutQuality(j, p.quality, Counts::kWhole);
  return j;
}

json FinalJson(const Final& f, Counts counts) {
  json j = {{"d_loss", f.d_loss},
            {"g_loss", f.g_loss},
            {"d_real", f.d_real},
            {"d_fake", f.d_fake},
            {"grad_norm_first_layer", f.grad_norm_first_layer},
            {"step_ms", f.step_ms},
            {"sparsity_zero", f.sparsity_zero},
            {"sparsity_nonpos", f.sparsity_nonpos},
            {"dead_channels", f.dead_channels}};
  Put(j, "probe_dead_channels", f.probe_dead_channels);
  PutQuality(j, f.quality, counts);
  return j;
}

Final FinalFrom(const json& j) {
  Final f;
  f.d_loss = j.at("d_loss").get<double>();
  f.g_loss = j.at("g_loss").get<double>();
  f.d_real = j.at("d_real").get<double>();
  f.d_fake = j.at("d_fake").get<double>();
  f.grad_norm_first_layer = j.at("grad_norm_first_layer").get<double>();
  f.step_ms = j.at("step_ms").get<double>();
  f.sparsity_zero = j.at("sparsity_zero").get<PerLayer>();
  f.sparsity_nonpos = j.at("sparsity_nonpos").get<PerLayer>();
  f.dead_channels = j.at("dead_channels").get<PerLayer>();
  Get(j, "probe_dead_channels", f.probe_dead_channels);
  f.quality = GetQuality(j);
  return f;
}

json SummaryJson(const Summary& s) {
  return {{"mean", s.mean},         {"std", s.std},           {"ci_low", s.ci_low},
          {"ci_high", s.ci_high},   {"boot_low", s.boot_low}, {"boot_high", s.boot_high},
          {"n", s.n}};
}

// Studies before lab version 3 have no bootstrap interval: NaN.
Summary SummaryFrom(const json& j) {
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  return {j.at("mean").get<double>(),
          j.at("std").get<double>(),
          j.at("ci_low").get<double>(),
          j.at("ci_high").get<double>(),
          j.value("boot_low", kNone),
          j.value("boot_high", kNone),
          WholeNumber<int>(j.at("n"))};
}

json PlannedJson(const PlannedVariant& v) {
  return {{"name", v.name},
          {"activation", v.activation},
          {"d_norm", v.d_norm},
          {"layer_activations", v.layer_activations}};
}

PlannedVariant PlannedFrom(const json& j) {
  return {j.at("name").get<std::string>(), j.at("activation").get<std::string>(),
          j.at("d_norm").get<std::string>(),
          j.at("layer_activations").get<std::vector<std::string>>()};
}

// A run's logged rows, quality points and (when `probes` is given) probes
// from their JSON arrays: results.json's, a run record's, a checkpoint's.
void HistoriesFrom(const json& rows, const json& quality, const json* probes,
                   std::vector<Row>* rows_out, std::vector<QualityPoint>* quality_out,
                   std::vector<Probe>* probes_out) {
  for (const json& row : rows) rows_out->push_back(RowFrom(row));
  for (const json& p : quality) quality_out->push_back({WholeNumber<int>(p.at("step")), GetQuality(p)});
  if (probes != nullptr) {
    for (const json& p : *probes) probes_out->push_back(ProbeFrom(p));
  }
}

// results.json keeps a variant's runs as parallel arrays, one entry per seed.
json VariantJson(const VariantResults& v) {
  json j = PlannedJson(v.plan);
  json seeds = json::array(), per_seed = json::array(), history = json::array(),
       quality = json::array(), probes = json::array();
  for (const Run& r : v.runs) {
    seeds.push_back(r.seed);
    per_seed.push_back(FinalJson(r.final, Counts::kWhole));
    json rows = json::array(), points = json::array();
    for (const Row& row : r.history) rows.push_back(RowJson(row));
    for (const QualityPoint& p : r.quality_history) points.push_back(QualityPointJson(p));
    history.push_back(rows);
    quality.push_back(points);
    if (r.probe_history) {
      json run_probes = json::array();
      for (const Probe& p : *r.probe_history) run_probes.push_back(ProbeJson(p));
      probes.push_back(run_probes);
    }
  }
  json summary = json::object();
  for (const auto& [key, s] : v.summary) summary[key] = SummaryJson(s);
  j["seeds_completed"] = static_cast<int>(v.runs.size());
  j["seeds_run"] = seeds;
  j["final"] = FinalJson(v.final, Counts::kMean);
  j["per_seed"] = per_seed;
  j["summary"] = summary;
  j["history"] = history;
  j["quality_history"] = quality;
  if (!v.runs.empty() && v.runs.front().probe_history) j["probe_history"] = probes;
  // Lab version 4's per-run extras, one entry per seed (null where absent).
  json precision = json::array(), prelu = json::array();
  bool any_precision = false, any_prelu = false;
  for (const Run& r : v.runs) {
    precision.push_back(r.precision_history ? PrecisionPointsJson(*r.precision_history) : json());
    prelu.push_back(r.prelu_slopes ? PreluSlopesJson(*r.prelu_slopes) : json());
    any_precision |= r.precision_history.has_value();
    any_prelu |= r.prelu_slopes.has_value();
  }
  if (any_precision) j["precision_history"] = precision;
  if (any_prelu) j["prelu_slopes"] = prelu;
  return j;
}

// A run's lab-version-4 extras from `j`'s entries (a run record's, or a
// variant's entry of one seed).
void ExtrasFrom(const json* precision, const json* prelu, Run* r) {
  if (precision != nullptr && !precision->is_null()) r->precision_history = PrecisionPointsFrom(*precision);
  if (prelu != nullptr && !prelu->is_null()) r->prelu_slopes = PreluSlopesFrom(*prelu);
}

VariantResults VariantFrom(const json& j) {
  VariantResults v;
  v.plan = PlannedFrom(j);
  const json& seeds = j.at("seeds_run");
  for (size_t i = 0; i < seeds.size(); ++i) {
    Run r;
    r.variant = v.plan.name;
    r.seed = WholeNumber<int>(seeds[i]);
    r.final = FinalFrom(j.at("per_seed").at(i));
    const json* probes = j.contains("probe_history") ? &j["probe_history"].at(i) : nullptr;
    if (probes != nullptr) r.probe_history.emplace();
    HistoriesFrom(j.at("history").at(i), j.at("quality_history").at(i), probes, &r.history,
                  &r.quality_history, probes != nullptr ? &*r.probe_history : nullptr);
    ExtrasFrom(j.contains("precision_history") ? &j["precision_history"].at(i) : nullptr,
               j.contains("prelu_slopes") ? &j["prelu_slopes"].at(i) : nullptr, &r);
    v.runs.push_back(std::move(r));
  }
  v.final = FinalFrom(j.at("final"));
  for (const auto& [key, s] : j.at("summary").items()) v.summary[key] = SummaryFrom(s);
  return v;
}

json StudyJson(const Study& s) {
  json plan_variants = json::array();
  for (const PlannedVariant& v : s.plan.variants) plan_variants.push_back(PlannedJson(v));
  json j = {{"name", s.name},
            {"preset", s.preset},
            {"lab_version", s.lab_version},
            {"dataset", s.dataset},
            {"data_checksum", s.data_checksum},
            {"classifier_checksum", s.classifier_checksum},
            {"steps", s.steps},
            {"seeds", s.seeds},
            {"first_seed", s.first_seed},
            {"batch", s.batch},
            {"log_every", s.log_every},
            {"quality_every", s.quality_every},
            {"samples", s.samples},
            {"threads", s.threads},
            {"models", s.models},
            {"base_activation", s.base_activation},
            {"plan", {{"variants", plan_variants},
                      {"seeds", s.plan.seeds},
                      {"first_seed", s.plan.first_seed}}},
            {"stopped_early", s.stopped_early}};
  Put(j, "width", s.width);
  Put(j, "init", s.init);
  Put(j, "probe_every", s.probe_every);
  Put(j, "loss", s.loss);
  Put(j, "spectral_norm", s.spectral_norm);
  if (s.classifier) {
    const ClassifierInfo& c = *s.classifier;
    j["classifier"] = {{"train_digits", c.train_digits},
                       {"held_out_digits", c.held_out_digits},
                       {"held_out_accuracy", c.held_out_accuracy},
                       {"real_fcd_floor", c.real_fcd_floor},
                       {"what", c.what}};
    Put(j["classifier"], "gan_images", c.gan_images);
    Put(j["classifier"], "reference_images", c.reference_images);
    if (c.fcd_floor) j["classifier"]["fcd_floor"] = SummaryJson(*c.fcd_floor);
    if (c.kid_floor) j["classifier"]["kid_floor"] = SummaryJson(*c.kid_floor);
  }
  if (s.provenance) {
    const Provenance& p = *s.provenance;
    j["provenance"] = {{"commit", p.commit},           {"tree_clean", p.tree_clean},
                       {"library_version", p.library_version},
                       {"binary_sha256", p.binary_sha256}, {"command_line", p.command_line},
                       {"machine", p.machine},         {"started", p.started},
                       {"finished", p.finished}};
  }
  if (s.shard) j["shard"] = {{"index", s.shard->first}, {"count", s.shard->second}};
  Put(j, "threads_per_part", s.threads_per_part);
  if (s.partial) {
    j["partial"] = {{"missing_runs", s.partial->missing_runs},
                    {"missing_shards", s.partial->missing_shards}};
  }
  if (s.speed_check) {
    const SpeedCheck& c = *s.speed_check;
    j["speed_check"] = {{"leaky_ms", c.leaky_ms}, {"torch_ms", c.torch_ms}, {"ratio", c.ratio},
                        {"what", c.what}};
    Put(j["speed_check"], "ratio_quartiles", c.ratio_quartiles);
  }
  return j;
}

Study StudyFrom(const json& j) {
  Study s;
  s.name = j.at("name").get<std::string>();
  s.preset = j.at("preset").get<std::string>();
  s.lab_version = WholeNumber<int>(j.at("lab_version"));
  s.dataset = j.at("dataset").get<std::string>();
  s.data_checksum = j.at("data_checksum").get<std::string>();
  s.classifier_checksum = j.at("classifier_checksum").get<std::string>();
  s.steps = WholeNumber<int>(j.at("steps"));
  s.seeds = WholeNumber<int>(j.at("seeds"));
  s.first_seed = WholeNumber<int>(j.at("first_seed"));
  s.batch = WholeNumber<int>(j.at("batch"));
  s.log_every = WholeNumber<int>(j.at("log_every"));
  s.quality_every = WholeNumber<int>(j.at("quality_every"));
  s.samples = WholeNumber<int>(j.at("samples"));
  s.threads = WholeNumber<int>(j.at("threads"));
  s.models = j.at("models").get<std::string>();
  s.base_activation = j.at("base_activation").get<std::string>();
  for (const json& v : j.at("plan").at("variants")) s.plan.variants.push_back(PlannedFrom(v));
  s.plan.seeds = WholeNumber<int>(j["plan"].at("seeds"));
  s.plan.first_seed = WholeNumber<int>(j["plan"].at("first_seed"));
  s.stopped_early = j.at("stopped_early").get<bool>();
  Get(j, "width", s.width);
  Get(j, "init", s.init);
  Get(j, "probe_every", s.probe_every);
  Get(j, "loss", s.loss);
  Get(j, "spectral_norm", s.spectral_norm);
  if (j.contains("classifier")) {
    const json& c = j["classifier"];
    s.classifier = ClassifierInfo{WholeNumber<long long>(c.at("train_digits")),
                                  WholeNumber<long long>(c.at("held_out_digits")),
                                  c.at("held_out_accuracy").get<double>(),
                                  c.at("real_fcd_floor").get<double>(), c.at("what").get<std::string>(),
                                  std::nullopt, std::nullopt, std::nullopt, std::nullopt};
    if (c.contains("gan_images")) s.classifier->gan_images = WholeNumber<long long>(c["gan_images"]);
    if (c.contains("reference_images")) {
      s.classifier->reference_images = WholeNumber<long long>(c["reference_images"]);
    }
    if (c.contains("fcd_floor")) s.classifier->fcd_floor = SummaryFrom(c["fcd_floor"]);
    if (c.contains("kid_floor")) s.classifier->kid_floor = SummaryFrom(c["kid_floor"]);
  }
  if (j.contains("provenance")) {
    const json& p = j["provenance"];
    s.provenance = Provenance{p.at("commit").get<std::string>(), p.at("tree_clean").get<bool>(),
                              p.at("library_version").get<std::string>(),
                              p.at("binary_sha256").get<std::string>(),
                              p.at("command_line").get<std::string>(),
                              p.at("machine").get<std::string>(), p.at("started").get<std::string>(),
                              p.at("finished").get<std::string>()};
  }
  if (j.contains("shard")) {
    s.shard = {WholeNumber<int>(j["shard"].at("index")), WholeNumber<int>(j["shard"].at("count"))};
  }
  Get(j, "threads_per_part", s.threads_per_part);
  if (j.contains("partial")) {
    s.partial = Partial{j["partial"].at("missing_runs").get<std::vector<std::string>>(),
                        j["partial"].at("missing_shards").get<std::vector<std::string>>()};
  }
  if (j.contains("speed_check")) {
    const json& c = j["speed_check"];
    s.speed_check = SpeedCheck{c.at("leaky_ms").get<double>(), c.at("torch_ms").get<double>(),
                               c.at("ratio").get<double>(), std::nullopt,
                               c.at("what").get<std::string>()};
    Get(c, "ratio_quartiles", s.speed_check->ratio_quartiles);
  }
  return s;
}

}  // namespace

json ToJson(const Run& run) {
  json j = {{"variant", run.variant}, {"seed", run.seed}, {"final", FinalJson(run.final, Counts::kWhole)}};
  json rows = json::array(), points = json::array();
  for (const Row& row : run.history) rows.push_back(RowJson(row));
  for (const QualityPoint& p : run.quality_history) points.push_back(QualityPointJson(p));
  j["history"] = rows;
  j["quality_history"] = points;
  if (run.probe_history) {
    json probes = json::array();
    for (const Probe& p : *run.probe_history) probes.push_back(ProbeJson(p));
    j["probe_history"] = probes;
  }
  if (run.precision_history) j["precision_history"] = PrecisionPointsJson(*run.precision_history);
  if (run.prelu_slopes) j["prelu_slopes"] = PreluSlopesJson(*run.prelu_slopes);
  return j;
}

Run RunFromJson(const json& j) {
  Run r;
  r.variant = j.at("variant").get<std::string>();
  r.seed = WholeNumber<int>(j.at("seed"));
  r.final = FinalFrom(j.at("final"));
  const json* probes = j.contains("probe_history") ? &j["probe_history"] : nullptr;
  if (probes != nullptr) r.probe_history.emplace();
  HistoriesFrom(j.at("history"), j.at("quality_history"), probes, &r.history, &r.quality_history,
                probes != nullptr ? &*r.probe_history : nullptr);
  ExtrasFrom(j.contains("precision_history") ? &j["precision_history"] : nullptr,
             j.contains("prelu_slopes") ? &j["prelu_slopes"] : nullptr, &r);
  return r;
}

json PrecisionPointsJson(const std::vector<PrecisionPoint>& points) {
  json j = json::array();
  for (const PrecisionPoint& p : points) {
    json rows = json::array();
    for (const PrecisionRow& row : p.rows) rows.push_back(PrecisionRowJson(row));
    j.push_back({{"step", p.step}, {"rows", rows}});
  }
  return j;
}

std::vector<PrecisionPoint> PrecisionPointsFrom(const json& j) {
  std::vector<PrecisionPoint> points;
  for (const json& p : j) {
    PrecisionPoint point{WholeNumber<int>(p.at("step")), {}};
    for (const json& row : p.at("rows")) point.rows.push_back(PrecisionRowFrom(row));
    points.push_back(std::move(point));
  }
  return points;
}

json PreluSlopesJson(const PreluSlopes& slopes) {
  const auto layers = [](const PreluSlopes::Layers& l) {
    json j = json::array();
    for (const auto& [module, values] : l) j.push_back({{"module", module}, {"slopes", values}});
    return j;
  };
  return {{"start", layers(slopes.start)}, {"end", layers(slopes.end)}};
}

PreluSlopes PreluSlopesFrom(const json& j) {
  const auto layers = [](const json& l) {
    PreluSlopes::Layers out;
    for (const json& layer : l) {
      out.emplace_back(layer.at("module").get<std::string>(),
                       layer.at("slopes").get<std::vector<double>>());
    }
    return out;
  };
  return {layers(j.at("start")), layers(j.at("end"))};
}

json HistoryJson(const std::vector<Row>& rows, const std::vector<QualityPoint>& quality,
                 const std::vector<Probe>& probes, const std::vector<PrecisionPoint>& precision) {
  json j = {{"rows", json::array()}, {"quality", json::array()}, {"probes", json::array()},
            {"precision", PrecisionPointsJson(precision)}};
  for (const Row& row : rows) j["rows"].push_back(RowJson(row));
  for (const QualityPoint& p : quality) j["quality"].push_back(QualityPointJson(p));
  for (const Probe& p : probes) j["probes"].push_back(ProbeJson(p));
  return j;
}

void HistoryFromJson(const json& j, std::vector<Row>* rows, std::vector<QualityPoint>* quality,
                     std::vector<Probe>* probes, std::vector<PrecisionPoint>* precision) {
  HistoriesFrom(j.at("rows"), j.at("quality"), &j.at("probes"), rows, quality, probes);
  *precision = PrecisionPointsFrom(j.at("precision"));
}

json ToJson(const Results& results) {
  json j = StudyJson(results.study);
  json variants = json::array();
  for (const VariantResults& v : results.variants) variants.push_back(VariantJson(v));
  j["variants"] = variants;
  if (results.precision) j["precision"] = ToJson(*results.precision);
  if (results.claims) {
    json claims = json::array();
    for (const Claim& c : *results.claims) claims.push_back(ToJson(c));
    j["claims"] = claims;
  }
  return j;
}

Results ResultsFromJson(const json& j) {
  Results r;
  r.study = StudyFrom(j);
  for (const json& v : j.at("variants")) r.variants.push_back(VariantFrom(v));
  if (j.contains("precision")) r.precision = PrecisionFromJson(j["precision"]);
  if (j.contains("claims")) {
    r.claims.emplace();
    for (const json& c : j["claims"]) r.claims->push_back(ClaimFromJson(c));
  }
  return r;
}

Results ReadResults(const std::filesystem::path& dir) {
  const std::filesystem::path file = dir / "results.json";
  std::ifstream in(file);
  if (!in) throw std::runtime_error(dir.string() + " has no results.json (not a lab run folder)");
  const json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("variants")) {
    throw std::runtime_error(file.string() + " is not a lab results.json");
  }
  try {
    return ResultsFromJson(j);
  } catch (const json::exception& e) {
    // nlohmann's own tag ("[json.exception.type_error.302] ") is not for users.
    std::string what = e.what();
    if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos) {
      what = what.substr(what.find("] ") + 2);
    }
    throw std::runtime_error(file.string() + " is not a lab results.json (" + what + ")");
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(file.string() + " is not a lab results.json (" + e.what() + ")");
  }
}

}  // namespace leaky::gan

// The claims and the precision table (which the f16 claim reads) as JSON.
#include "results_json.h"

namespace leaky::gan {
namespace {

using json = nlohmann::json;

json PartJson(const ClaimPart& part) {
  if (const auto* c = std::get_if<CountPart>(&part)) {
    return {{"what", c->what}, {"count", c->count}, {"of", c->of}};
  }
  const auto& p = std::get<IntervalPart>(part);
  json j = {{"what", p.what}, {"mean", p.mean}, {"ci_low", p.ci_low}, {"ci_high", p.ci_high},
            {"n", p.n},       {"bound", p.bound}, {"result", p.result}};
  if (p.sign_test) {
    j["sign_test"] = {{"positive", p.sign_test->positive}, {"negative", p.sign_test->negative},
                      {"ties", p.sign_test->ties}, {"p", p.sign_test->p}};
  }
  if (p.test) {
    j["test"] = {{"p_hold", p.test->p_hold}, {"p_refute", p.test->p_refute},
                 {"p_holm", p.test->p_holm}, {"refute_bound", p.test->refute_bound}};
  }
  return j;
}

ClaimPart PartFrom(const json& j) {
  if (j.contains("count")) {
    return CountPart{j.at("what").get<std::string>(), WholeNumber<long long>(j["count"]),
                     WholeNumber<long long>(j.at("of"))};
  }
  IntervalPart p{j.at("what").get<std::string>(), j.at("mean").get<double>(),
                 j.at("ci_low").get<double>(),    j.at("ci_high").get<double>(),
                 WholeNumber<int>(j.at("n")),            j.at("bound").get<std::string>(),
                 j.at("result").get<std::string>(), std::nullopt, std::nullopt};
  if (j.contains("sign_test")) {
    const json& t = j["sign_test"];
    p.sign_test = SignTest{WholeNumber<int>(t.at("positive")), WholeNumber<int>(t.at("negative")),
                           WholeNumber<int>(t.at("ties")), t.at("p").get<double>()};
  }
  if (j.contains("test")) {
    const json& t = j["test"];
    p.test = IntervalPart::Test{t.at("p_hold").get<double>(), t.at("p_refute").get<double>(),
                                t.at("p_holm").get<double>(), t.at("refute_bound").get<std::string>()};
  }
  return p;
}

}  // namespace

json ToJson(const Claim& c) {
  json settings = json::array();
  for (const ClaimSetting& s : c.settings) {
    json parts = json::array();
    for (const ClaimPart& p : s.parts) parts.push_back(PartJson(p));
    settings.push_back({{"setting", s.setting}, {"parts", parts}, {"verdict", s.verdict}});
  }
  return {{"id", c.id}, {"claim", c.text}, {"settings", settings}, {"verdict", c.verdict}};
}

Claim ClaimFromJson(const json& j) {
  Claim c{j.at("id").get<std::string>(), j.at("claim").get<std::string>(), {},
          j.at("verdict").get<std::string>()};
  for (const json& s : j.at("settings")) {
    ClaimSetting setting{s.at("setting").get<std::string>(), {}, s.at("verdict").get<std::string>()};
    for (const json& p : s.at("parts")) setting.parts.push_back(PartFrom(p));
    c.settings.push_back(std::move(setting));
  }
  return c;
}

PrecisionRow PrecisionRowFrom(const json& r) {
  return {r.at("format").get<std::string>(), WholeNumber<long long>(r.at("negatives")),
          WholeNumber<long long>(r.at("flushed_to_zero")), r.at("max_relative_error").get<double>(),
          r.at("mean_relative_error").get<double>()};
}

json PrecisionRowJson(const PrecisionRow& r) {
  return {{"format", r.format},
          {"negatives", r.negatives},
          {"flushed_to_zero", r.flushed_to_zero},
          {"max_relative_error", r.max_relative_error},
          {"mean_relative_error", r.mean_relative_error}};
}

PrecisionTable PrecisionFromJson(const json& j) {
  PrecisionTable t{j.at("slope").get<double>(), j.at("source").get<std::string>(), {}};
  for (const json& r : j.at("rows")) t.rows.push_back(PrecisionRowFrom(r));
  return t;
}

json ToJson(const PrecisionTable& table) {
  json rows = json::array();
  for (const PrecisionRow& r : table.rows) rows.push_back(PrecisionRowJson(r));
  return {{"slope", table.slope}, {"source", table.source}, {"rows", rows}};
}

}  // namespace leaky::gan

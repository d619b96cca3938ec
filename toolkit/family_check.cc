// The family's check: the place diagnosis of the first output, the side
// outputs bit for bit, then the op's models; one fault, one finding.
#include "family_check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "family_models.h"
#include "findings.h"

namespace leaky::toolkit {

using json = nlohmann::json;

// In Diagnose, which sees one output, the family's detector finds nothing:
// CheckFamily asks it over all the op's outputs (ExplainFamily).
void FindFamilyValues(Analysis&) {}

namespace {

using Mismatch = ReportedKind<FindingDetector::kUnexplained>;

Array AsArray(const Operand& o) { return Array{o.bits, o.values}; }

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// A side output's differences: (count, message), (0, "") when none.
std::pair<uint64_t, std::string> CompareSide(const Operand& expected, const Operand& got) {
  const std::string unit = expected.mask ? "bytes" : "elements";
  if (!expected.mask && got.dtype != expected.dtype) {
    return {expected.size(), expected.name + " has dtype " + DtypeName(got.dtype) + "; expected " +
                                 DtypeName(expected.dtype)};
  }
  if (got.size() != expected.size() || got.mask != expected.mask) {
    return {expected.size(), expected.name + " has " + std::to_string(got.size()) + " " + unit +
                                 "; expected " + std::to_string(expected.size())};
  }
  uint64_t count = 0, first = 0;
  for (uint64_t i = 0; i < expected.size(); ++i) {
    if (got.bits[i] != expected.bits[i] && !count++) first = i;
  }
  if (!count) return {0, ""};
  return {count, expected.name + ": " + std::to_string(count) + " of " +
                     std::to_string(expected.size()) + " " + unit + " differ, the first at " +
                     std::to_string(first) + " (" + Hex(got.bits[first]) + " where " +
                     Hex(expected.bits[first]) + " is right); not diagnosed further"};
}

// A region never written is a place: it holds results of both signs.
// Where every wrong element is a negative result given as 0 and the
// positive results around them are right, the zeros follow the values,
// not the places (the negative side computed as a ReLU's): the finding
// becomes a mismatch that says so.
void ValueZeros(CheckResult* r, const Operand& golden, const Operand& out) {
  std::vector<uint64_t> wrong;
  for (uint64_t i = 0; i < golden.size(); ++i) {
    const double g = golden.values[i], o = out.values[i];
    if (!(g == o || (std::isnan(g) && std::isnan(o)))) wrong.push_back(i);
  }
  if (wrong.empty()) return;
  for (uint64_t i : wrong) {
    if (!(out.values[i] == 0 && golden.values[i] < 0)) return;
  }
  bool positive = false;
  for (uint64_t i = wrong.front(); i <= wrong.back(); ++i)
    positive = positive || golden.values[i] > 0;
  if (!positive) return;
  // The generic mismatch of the same elements goes; side outputs' stay.
  std::vector<Finding> kept;
  kept.push_back(
      Finding(Mismatch("mismatch"),
              std::to_string(wrong.size()) + " negative results given as 0, the first at " +
                  std::to_string(wrong.front()) +
                  ", while every positive result is right: the zeros follow the values, not a "
                  "region - the negative side computed as 0 (a ReLU's, or the wrong activation "
                  "chosen), not an output left unwritten",
              {{"count", wrong.size()}, {"first", wrong.front()}}));
  for (size_t k = 1; k < r->findings.size(); ++k) {
    const Finding& f = r->findings[k];
    if (f.kind != "mismatch" || f.details.contains("output")) kept.push_back(f);
  }
  r->findings = std::move(kept);
}

// LeakyReLU's place and NaN detectors may explain a few of another op's
// wrong elements by chance (a six-value run its "hard" inputs repeat
// elsewhere); where one finding covers most of them, it leads, and the
// rest - those few, and the side outputs the same fault changed - are
// told within it: one fault, one finding.
void BulkFirst(CheckResult* r) {
  // The wrong elements a finding covers: its count, or its region's size.
  auto covers = [](const Finding& f) -> uint64_t {
    if (!f.details.is_object() || f.details.contains("output")) return 0;
    for (const char* key : {"count", "elements"}) {
      const auto it = f.details.find(key);
      if (it != f.details.end() && it->is_number_unsigned()) return it->get<uint64_t>();
    }
    return 0;
  };
  auto bulk = r->findings.end();
  for (auto it = r->findings.begin(); it != r->findings.end(); ++it) {
    if (r->mismatches > 0 && covers(*it) * 2 >= r->mismatches &&
        (bulk == r->findings.end() || covers(*it) > covers(*bulk))) {
      bulk = it;
    }
  }
  if (bulk == r->findings.end()) return;
  Finding lead = *bulk;
  std::string with;
  json also = json::array();
  for (auto it = r->findings.begin(); it != r->findings.end(); ++it) {
    if (it == bulk) continue;
    const std::string m =
        it->message.size() <= 160 ? it->message : it->message.substr(0, 157) + "...";
    with += (with.empty() ? "" : "; ") + it->kind + " (" + m + ")";
    also.push_back(it->kind);
  }
  if (!with.empty()) {
    lead.message += "; with them: " + with;
    lead.details["also"] = also;
  }
  r->findings = {lead};
}

}  // namespace

CheckResult CheckFamily(const FamilyProblem& p, const Operands& results, uint64_t max_ulp,
                        bool strict_zero_sign, const std::optional<Layout>& plan) {
  const uint64_t tolerance = std::max(max_ulp, FamilyMaxUlp(p));
  const Operand& golden = p.golden.at(0);
  if (results.empty() || results[0].size() != golden.size() || results[0].mask) {
    throw GoldenError(golden.name + ": expected " + std::to_string(golden.size()) +
                      " elements, got " + std::to_string(results.empty() ? 0 : results[0].size()));
  }
  const Operand& out = results[0];
  const Operand* x =
      FindOperand(p.inputs, p.backward && !FindOperand(p.inputs, "x") ? "saved" : "x");
  const Operand* dy = FindOperand(p.inputs, "dy");
  CheckInput in;
  in.dtype = p.dtype;
  in.backward = p.backward;
  in.input = AsArray(*x);
  if (dy) in.dy = AsArray(*dy);
  in.golden = AsArray(golden);
  in.output = AsArray(out);
  in.max_ulp = tolerance;
  in.strict_zero_sign = strict_zero_sign;
  in.plan = plan;
  in.leaky_relu_values = false;
  CheckResult r = Diagnose(in);
  for (size_t k = 1; k < results.size() && k < p.golden.size(); ++k) {
    const auto [count, message] = CompareSide(p.golden[k], results[k]);
    if (!count) continue;
    r.pass = false;
    r.findings.push_back(
        Finding(Mismatch("mismatch"), message, {{"output", p.golden[k].name}, {"count", count}}));
  }
  if (!r.findings.empty() && r.findings.front().kind == "not_written") ValueZeros(&r, golden, out);
  if (!r.pass) {
    std::vector<Finding> explained = ExplainFamily(p, results, plan ? &*plan : nullptr, tolerance);
    if (!explained.empty()) {
      r.findings = std::move(explained);
    } else {
      BulkFirst(&r);
    }
  }
  return r;
}

}  // namespace leaky::toolkit

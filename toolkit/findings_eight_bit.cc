// One-byte data: the exact comparison, and the detectors of the op computed
// another way (eight_bit_models: another rounding rule, floating-point
// requantization, a clamp or saturation forgotten, the input's zero point on
// the output, alone or together) and of what stays one step off. A model is
// named only when it gives exactly the bytes of most of the open wrong
// elements (outside regions never written or moved) and changes none the
// kernel got right: a confident wrong cause is worse than none. Where other
// mistakes give the same bytes, they are said too (ambiguous); what fits
// no model is described, not explained.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "eight_bit_data.h"
#include "eight_bit_models.h"
#include "findings.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

std::string Number(double v) {
  if (v == 0) return "0";
  char text[40];
  std::snprintf(text, sizeof(text), "%.6g", v);
  return text;
}

std::string Byte(const leaky_q8_params& q, bool output, uint64_t byte) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02x", static_cast<unsigned>(byte));
  std::string s = text;
  if (q.type == LEAKY_QS8)
    s += " = " + std::to_string(Q8Integer(q.type, static_cast<uint8_t>(byte)));
  return s + " (" + Number(Q8Real(q, output, static_cast<uint8_t>(byte))) + ")";
}

Q8Problem ProblemOf(const CheckInput& in) {
  return {*in.eight_bit, in.backward, in.negative_slope};
}

uint8_t At(const Array& a, uint64_t i) { return static_cast<uint8_t>(a.bits[i]); }

// A model's bytes for every input (x forward; (dy, x) backward): -1 where
// it cannot say. 256 or 65536 entries, whatever the element count.
std::vector<int16_t> TableOf(const Q8Problem& p, const Q8Model& m) {
  std::vector<int16_t> table(p.backward ? 65536 : 256);
  for (size_t i = 0; i < table.size(); ++i) {
    const std::optional<uint8_t> y =
        PredictQ8(p, m, static_cast<uint8_t>(i & 0xff), static_cast<uint8_t>(i >> 8));
    table[i] = y ? *y : int16_t{-1};
  }
  return table;
}

size_t Entry(const CheckInput& in, uint64_t i) {
  return At(in.input, i) | (in.backward ? size_t{At(in.dy, i)} << 8 : 0);
}

// A model's account of the output: the open wrong elements it gives
// exactly, and how many elements it would have changed that the kernel got
// right.
struct Score {
  Q8Model model;
  std::vector<uint64_t> explained;
  uint64_t contradicted = 0;
};

Score ScoreOf(const Analysis& s, const Q8Model& m, const std::vector<char>& is_open) {
  const std::vector<int16_t> table = TableOf(ProblemOf(s.in), m);
  Score score{m, {}, 0};
  for (uint64_t i = 0; i < s.n && score.contradicted == 0; ++i) {
    const int16_t p = table[Entry(s.in, i)];
    if (p < 0 || static_cast<uint64_t>(p) == s.in.golden.bits[i]) continue;
    if (s.in.output.bits[i] == s.in.golden.bits[i]) {
      ++score.contradicted;
    } else if (is_open[i] && static_cast<uint64_t>(p) == s.in.output.bits[i]) {
      score.explained.push_back(i);
    }
  }
  return score;
}

using A = Q8Model::Arithmetic;
using R = Q8Model::Rounding;
using C = Q8Model::Clamp;

// The finding's kind: the mistake that matters most of those in the model.
const char* KindOf(const Q8Model& m) {
  if (m.input_zero_point) return "output_zero_point";
  if (m.clamp == C::kFlipped) return "saturation";
  if (m.clamp != C::kOutput) return "clamp_missing";
  if (m.rounding != R::kNearestEven) return "rounding_rule";
  return "float_arithmetic";
}

bool FloatingPoint(A a) { return a != A::kExact; }

// What models as simple as the best one, giving the very same bytes, leave
// open: the floating-point type, or whether the clamp is the type's range
// or none at all. Either is said as such; any other difference makes the
// finding ambiguous.
struct Alike {
  bool floating_point = false;
  bool clamp = false;
};

// Each mistake of the model, said in the kernel's terms with its fix.
std::string Describe(const CheckInput& in, const Q8Model& m, Alike alike = {}) {
  const bool float_alike = alike.floating_point;
  const leaky_q8_params& q = *in.eight_bit;
  const bool quantized = IsQuantized(q.type);
  const std::string type = Type8Name(q.type);
  std::vector<std::string> parts;
  if (m.input_zero_point) {
    parts.push_back("they are off by the difference of the zero points (" +
                    std::to_string(q.input.zero_point - q.output.zero_point) +
                    " steps): the input's zero point " + std::to_string(q.input.zero_point) +
                    " was added back where the output's " + std::to_string(q.output.zero_point) +
                    " belongs");
  }
  if (alike.clamp) {
    parts.push_back("they are clamped to " + type + "'s range " + std::to_string(Type8Min(q.type)) +
                    ".." + std::to_string(Type8Max(q.type)) +
                    " or not at all (the same bytes "
                    "here), not to the output clamp [" +
                    std::to_string(q.output_min) + ", " + std::to_string(q.output_max) +
                    "]: clamp to output_min/output_max");
  } else if (m.clamp == C::kWrapped) {
    parts.push_back("the requantized integer was cast to " + type + " without clamping it to [" +
                    std::to_string(q.output_min) + ", " + std::to_string(q.output_max) +
                    "], so it wrapped around: clamp before the cast");
  } else if (m.clamp == C::kTypeRange) {
    parts.push_back("they are clamped to " + type + "'s range " + std::to_string(Type8Min(q.type)) +
                    ".." + std::to_string(Type8Max(q.type)) + " but not to the output clamp [" +
                    std::to_string(q.output_min) + ", " + std::to_string(q.output_max) +
                    "]: clamp to output_min/output_max");
  } else if (m.clamp == C::kFlipped) {
    const std::string special = q.type == LEAKY_FP8_E5M2 ? "infinity" : "NaN";
    parts.push_back(q.saturate
                        ? "values past the largest finite " + type + " came out as " + special +
                              " where saturate = 1 asks for the largest finite "
                              "value of their sign: saturate the conversion"
                        : "values past the largest finite " + type +
                              " were saturated "
                              "where saturate = 0 asks for OCP's non-saturating " +
                              special);
  }
  const std::string even = quantized ? "requantize with round-half-to-even (std::nearbyint or "
                                       "lrint in the default rounding mode)"
                                     : "round to nearest, ties to even, as the OCP conversion does";
  switch (m.rounding) {
    case R::kTiesAway:
      parts.push_back(
          "the halfway cases are rounded away from zero (std::round, lround, "
          "roundf) where the op rounds them to even: " +
          even);
      break;
    case R::kTowardZero:
      parts.push_back(quantized ? "the requantized value is truncated toward zero (an (int) "
                                  "cast, std::trunc) where the op rounds to nearest: " +
                                      even
                                : "the conversion to " + type +
                                      " cuts the mantissa bits (rounds "
                                      "toward zero) where the op rounds to nearest: " +
                                      even);
      break;
    case R::kDown:
      parts.push_back(
          "the requantized value is rounded down (std::floor, an arithmetic shift "
          "right) where the op rounds to nearest: " +
          even);
      break;
    case R::kNearestEven:
      break;
  }
  if (FloatingPoint(m.arithmetic)) {
    std::string how;
    if (!quantized) {
      how = "the product is rounded to f32 first and then to " + type + " (two roundings): an " +
            type + " value times the f32 slope is exact in double; round that once";
    } else {
      const std::string in_what = float_alike                  ? "floating point (f32 "
                                                                 "and double give the "
                                                                 "same bytes here)"
                                  : m.arithmetic == A::kDouble ? "double"
                                  : m.arithmetic == A::kFloat  ? "f32"
                                                               : "f32 through one multiplier "
                                                                 "(float)(input_scale / "
                                                                 "output_scale)";
      how = "the value is requantized in " + in_what +
            ", each step rounded, where the op "
            "rounds the exact real value once (leaky/eight_bit.h): results whose exact value "
            "lies a rounding error from halfway land on the other side. Compute it exactly "
            "(integers, or an error-free product) and round once";
    }
    parts.push_back(how);
  }
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : "; and ") + part;
  return text;
}

}  // namespace

std::string ByteExample(const Analysis& s, uint64_t i) {
  const CheckInput& in = s.in;
  const leaky_q8_params& q = *in.eight_bit;
  std::string text = "index " + std::to_string(i) + ": ";
  if (in.backward)
    text += "dy " + Byte(q, false, in.dy.bits[i]) + ", saved x ";
  else
    text += "input ";
  return text + Byte(q, false, in.input.bits[i]) + " should give " +
         Byte(q, true, in.golden.bits[i]) + ", the output has " + Byte(q, true, in.output.bits[i]);
}

json ByteExamples(const Analysis& s, const std::vector<uint64_t>& indices) {
  json examples = json::array();
  const leaky_q8_params& q = *s.in.eight_bit;
  for (size_t k = 0; k < indices.size() && k < 4; ++k) {
    const uint64_t i = indices[k];
    const uint8_t expected = At(s.in.golden, i), got = At(s.in.output, i);
    examples.push_back({{"index", i},
                        {"input", At(s.in.input, i)},
                        {"expected", expected},
                        {"expected_value", Q8Real(q, true, expected)},
                        {"output", got},
                        {"output_value", Q8Real(q, true, got)}});
  }
  return examples;
}

void CompareBytes(Analysis& s, CheckResult* r) {
  const CheckInput& in = s.in;
  for (uint64_t i = 0; i < s.n; ++i) {
    const uint8_t out = At(in.output, i), gold = At(in.golden, i);
    if (out == gold) continue;  // 0 tolerance: the golden is exact, byte for byte
    s.wrong.push_back(i);
    s.differing.push_back(i);
    if (const std::optional<uint64_t> steps = Q8Steps(in.eight_bit->type, gold, out)) {
      r->max_ulp = std::max(r->max_ulp, *steps);
    }
    const double error = std::fabs(in.output.values[i] - in.golden.values[i]);
    if (std::isfinite(error)) {
      r->max_abs_error = std::max(r->max_abs_error, error);
      if (in.golden.values[i] != 0) {
        r->max_rel_error = std::max(r->max_rel_error, error / std::fabs(in.golden.values[i]));
      }
    }
  }
}

void FindEightBitValues(Analysis& s) {
  using Kind = ReportedKind<FindingDetector::kEightBitValues>;
  if (!s.in.eight_bit) return;
  const Q8Problem problem = ProblemOf(s.in);
  // The models are computed here, not by the library: where the exact one
  // does not give the golden (a golden from elsewhere), say nothing.
  const std::vector<int16_t> exact = TableOf(problem, Q8Model{});
  for (uint64_t i = 0; i < s.n; ++i) {
    const int16_t p = exact[Entry(s.in, i)];
    if (p >= 0 && static_cast<uint64_t>(p) != s.in.golden.bits[i]) return;
  }
  // Unwritten regions and moved results are the place detectors'.
  const PlaceExplanation regions = s.PlacesOf(s.differing);
  std::vector<char> in_region(s.n, 0);
  for (uint64_t i : regions.explained) in_region[i] = 1;
  const std::vector<Q8Model> mistakes = Q8Mistakes(problem);
  // One finding per fault: the model that explains most of what is still
  // open (the fewest mistakes among equals), then the next.
  for (int round = 0; round < 3; ++round) {
    const std::vector<uint64_t> open = s.Open();
    if (open.empty()) return;
    std::vector<char> is_open(s.n, 0);
    for (uint64_t i : open) is_open[i] = 1;
    std::vector<Score> fits;
    for (const Q8Model& m : mistakes) {
      Score score = ScoreOf(s, m, is_open);
      const auto inside = std::count_if(score.explained.begin(), score.explained.end(),
                                        [&](uint64_t i) { return in_region[i]; });
      if (score.contradicted == 0 && !score.explained.empty() &&
          static_cast<size_t>(inside) * 2 < score.explained.size()) {
        fits.push_back(std::move(score));
      }
    }
    if (fits.empty()) return;
    std::stable_sort(fits.begin(), fits.end(), [](const Score& a, const Score& b) {
      return a.explained.size() != b.explained.size() ? a.explained.size() > b.explained.size()
                                                      : a.model.Deviations() < b.model.Deviations();
    });
    const Score& best = fits.front();
    // Named only when it accounts for most of what is open outside the
    // regions: a model that fits a few elements of a fault it does not
    // describe would be a confident wrong explanation.
    const auto open_outside =
        std::count_if(open.begin(), open.end(), [&](uint64_t i) { return !in_region[i]; });
    if (best.explained.size() * 2 < static_cast<size_t>(open_outside)) return;
    // Others as simple that give these very bytes (Alike), or rivals.
    Alike alike;
    std::vector<const Score*> rivals;
    for (size_t k = 1; k < fits.size(); ++k) {
      const Score& f = fits[k];
      if (f.explained != best.explained || f.model.Deviations() != best.model.Deviations())
        continue;
      Q8Model same = f.model;
      const bool floating =
          FloatingPoint(f.model.arithmetic) && FloatingPoint(best.model.arithmetic);
      const bool clamps = f.model.clamp != C::kOutput && best.model.clamp != C::kOutput &&
                          f.model.clamp != C::kFlipped && best.model.clamp != C::kFlipped;
      if (floating) same.arithmetic = best.model.arithmetic;
      if (clamps) same.clamp = best.model.clamp;
      if (same == best.model) {
        alike.floating_point |= f.model.arithmetic != best.model.arithmetic;
        alike.clamp |= f.model.clamp != best.model.clamp;
      } else {
        rivals.push_back(&f);
      }
    }
    const std::string count = std::to_string(best.explained.size());
    json details = {{"count", best.explained.size()},
                    {"first", best.explained.front()},
                    {"examples", ByteExamples(s, best.explained)}};
    const std::string example = " (" + ByteExample(s, best.explained.front()) + ")";
    if (!rivals.empty()) {
      json candidates = {KindOf(best.model)};
      std::string text = count + " wrong results that more than one mistake gives alike" + example +
                         ": either " + Describe(s.in, best.model, alike);
      for (const Score* r : rivals) {
        candidates.push_back(KindOf(r->model));
        text += "; or " + Describe(s.in, r->model);
      }
      details["candidates"] = candidates;
      s.findings.push_back(
          {Kind("ambiguous"), text + ". The data cannot tell them apart", details});
    } else {
      const std::string kind = KindOf(best.model);
      const Kind reported = kind == "rounding_rule"      ? Kind("rounding_rule")
                            : kind == "float_arithmetic" ? Kind("float_arithmetic")
                            : kind == "clamp_missing"    ? Kind("clamp_missing")
                            : kind == "saturation"       ? Kind("saturation")
                                                         : Kind("output_zero_point");
      const R r = best.model.rounding;
      if (r != R::kNearestEven) {
        details["rounding"] = r == R::kTiesAway     ? "ties_away_from_zero"
                              : r == R::kTowardZero ? "toward_zero"
                                                    : "down";
      }
      if (FloatingPoint(best.model.arithmetic)) {
        details["arithmetic"] = alike.floating_point                  ? "floating_point"
                                : best.model.arithmetic == A::kDouble ? "double"
                                                                      : "f32";
      }
      s.findings.push_back(
          {reported, count + " results wrong" + example + ": " + Describe(s.in, best.model, alike),
           details});
    }
    s.Explain(best.explained);
  }
}

// What no model gives, where every element is one step from the golden:
// described (how many up, how many down, how many at exact ties), with no
// cause named.
void FindEightBitSteps(Analysis& s) {
  using Kind = ReportedKind<FindingDetector::kEightBitSteps>;
  if (!s.in.eight_bit) return;
  const std::vector<uint64_t> open = s.Open();
  if (open.empty()) return;
  const Q8Problem p = ProblemOf(s.in);
  uint64_t up = 0, ties = 0;
  for (uint64_t i : open) {
    const uint8_t gold = At(s.in.golden, i), out = At(s.in.output, i);
    if (Q8Steps(p.q.type, gold, out) != uint64_t{1}) return;
    up += s.in.output.values[i] > s.in.golden.values[i];
    ties += Q8IsTie(p, At(s.in.input, i));
  }
  const uint64_t down = open.size() - up;
  std::string text = std::to_string(open.size()) + " results one step off the golden (" +
                     std::to_string(up) + " above, " + std::to_string(down) + " below";
  if (IsQuantized(p.q.type)) {
    text += "; " + std::to_string(ties) + " of them where the exact value lies halfway";
  }
  text += "; " + ByteExample(s, open.front()) +
          "): the rounding differs from round-half-to-even of the exact value, but none of "
          "the rules tried (ties away from zero, toward zero, down; exactly, in double or in "
          "f32) gives most of them without changing right ones";
  s.findings.push_back({Kind("one_step_off"),
                        text,
                        {{"count", open.size()},
                         {"first", open.front()},
                         {"above", up},
                         {"below", down},
                         {"ties", ties},
                         {"examples", ByteExamples(s, open)}}});
  s.Explain(open);
}

}  // namespace leaky::toolkit

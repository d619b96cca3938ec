// The family's faults as models (family_models.h): per op, the outputs a
// port with each fault gives, judged against the kernel's outputs.
#include "family_models.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <optional>

#include "finding_kinds.h"

namespace leaky::toolkit {

using json = nlohmann::json;

namespace {

constexpr FindingDetector kDetector = FindingDetector::kFamilyValues;
using Kind = ReportedKind<kDetector>;

// What each kind looks like (finding_kinds.inc), for the message's start.
std::string LooksLike(const std::string& kind) {
  if (kind == "clamp_missing") return "bias_act's clamp not applied (or on one side only)";
  for (size_t k = 0; k < std::size(kFindingKinds); ++k) {
    if (kind == kFindingKinds[k]) return kFindingLooksLike[k];
  }
  return kind;
}

// ---- element comparisons

bool BothNan(double a, double b) { return std::isnan(a) && std::isnan(b); }

// |spacing(v)| in dtype: the distance to the next representable value away
// from zero (NaN for a non-finite v), as NumPy's spacing.
double Spacing(leaky_dtype dtype, double v) {
  if (!std::isfinite(v)) return NAN;
  const uint64_t bits = FromDouble(dtype, std::fabs(v));
  const double here = ToDouble(dtype, bits), next = ToDouble(dtype, bits + 1);
  return std::fabs(next - here);
}

// A prediction of one output: patterns (bit for bit, or within the judge's
// ulps for y and dx), or values with a tolerance per element (sums in
// another order, exp within a few ulp).
struct Prediction {
  std::vector<uint64_t> bits;
  std::vector<double> values;
  std::vector<double> tolerance;  // empty: by bits
};

Prediction Exact(const Operand& o) { return {o.bits, o.values, {}}; }

struct Hypothesis {
  Kind kind;
  std::string what;
  std::map<std::string, Prediction> outputs;
};

// Element-wise: equal patterns, both NaN, or within ulps.
std::vector<char> Same(const Operand& like, const std::vector<uint64_t>& a,
                       const std::vector<uint64_t>& b, uint64_t ulps) {
  std::vector<char> same(a.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] == b[i]) {
      same[i] = 1;
    } else if (!like.mask) {
      const double va = ToDouble(like.dtype, a[i]), vb = ToDouble(like.dtype, b[i]);
      same[i] = BothNan(va, vb) || (ulps && !std::isnan(va) && !std::isnan(vb) &&
                                    UlpDistance(like.dtype, a[i], b[i]) <= ulps);
    }
  }
  return same;
}

std::vector<char> Near(const std::vector<double>& a, const std::vector<double>& b,
                       const std::vector<double>& tol) {
  std::vector<char> near(a.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    near[i] = std::fabs(a[i] - b[i]) <= tol[i] || BothNan(a[i], b[i]) || a[i] == b[i];
  }
  return near;
}

// Where the kernel's output k is the prediction; nullopt when the sizes
// differ.
std::optional<std::vector<char>> Matches(const Operand& k, const Prediction& pred, uint64_t ulps) {
  if (k.size() != pred.bits.size()) return std::nullopt;
  if (pred.tolerance.empty()) return Same(k, k.bits, pred.bits, ulps);
  return Near(k.values, pred.values, pred.tolerance);
}

// ---- the geometry: the [outer, channels, inner] view and the plan's parts

struct Partition {
  std::string name;
  std::vector<int64_t> part, start;  // per element: its part, the part's first element
};

struct ChannelMap {
  std::string what, kind;  // kind: axis or broadcast
  std::vector<int64_t> index;
};

struct Geometry {
  Geometry(const FamilyProblem& p, const Layout* plan)
      : n(p.elements()), outer(p.outer), channels(p.channels), inner(p.inner), channel(n) {
    for (uint64_t i = 0; i < n; ++i) channel[i] = static_cast<int64_t>((i / inner) % channels);
    if (!plan) return;
    buffers = plan->buffers;
    Partition core{"core", std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
    Partition tile{"tile", std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
    int64_t t = 0;
    for (uint32_t k = 0; k < plan->cores(); ++k) {
      const uint64_t s = plan->core_start[k], l = plan->core_length[k];
      for (uint64_t i = s; i < s + l && i < n; ++i) {
        core.part[i] = k;
        core.start[i] = static_cast<int64_t>(s);
      }
      for (uint64_t j = 0; j < plan->TileCount(k); ++j, ++t) {
        uint64_t ts = 0, tl = 0;
        plan->TileRange(k, j, &ts, &tl);
        for (uint64_t i = ts; i < ts + tl && i < n; ++i) {
          tile.part[i] = t;
          tile.start[i] = static_cast<int64_t>(ts);
        }
      }
    }
    partitions = {std::move(core), std::move(tile)};
  }

  // The ways a port indexes a per-channel operand wrongly, each distinct
  // from the right one and from those before it.
  std::vector<ChannelMap> ChannelMaps() const {
    const int64_t c = static_cast<int64_t>(channels), in = static_cast<int64_t>(inner),
                  out = static_cast<int64_t>(outer);
    std::vector<ChannelMap> maps;
    if (c < 2) return maps;
    auto add = [&](std::string what, std::string kind, auto f) {
      ChannelMap m{std::move(what), std::move(kind), std::vector<int64_t>(n)};
      for (uint64_t i = 0; i < n; ++i) m.index[i] = f(static_cast<int64_t>(i));
      maps.push_back(std::move(m));
    };
    add("the flat index modulo channels (channels-last indexing)", "axis",
        [&](int64_t i) { return i % c; });
    add("the outer index", "axis", [&](int64_t i) { return (i / (c * in)) % c; });
    add("the position within the inner axis", "axis", [&](int64_t i) { return (i % in) % c; });
    add("channel-major blocks (index // (outer * inner))", "axis",
        [&](int64_t i) { return std::min(i / std::max<int64_t>(1, out * in), c - 1); });
    std::vector<int64_t> strides = {1, 2, in - 1, in + 1, 2 * in, in / 2, c, c * in, out * in};
    std::sort(strides.begin(), strides.end());
    strides.erase(std::unique(strides.begin(), strides.end()), strides.end());
    for (int64_t s : strides) {
      if (s >= 1 && s != in) {
        add("stride " + std::to_string(s) + " in place of " + std::to_string(in), "axis",
            [&](int64_t i) { return (i / s) % c; });
      }
    }
    for (int64_t k = 0; k < c; ++k) {
      add("weight[" + std::to_string(k) + "] for every channel", "broadcast",
          [&](int64_t) { return k; });
    }
    // An index local to the core or tile (after the broadcasts: within
    // parts shorter than inner it is weight[0] everywhere, a broadcast).
    for (const Partition& part : partitions) {
      add("the position within each " + part.name + " ((index - its start) // inner)", "axis",
          [&](int64_t i) { return ((i - part.start[i]) / in) % c; });
    }
    std::vector<ChannelMap> distinct;
    for (ChannelMap& m : maps) {
      bool seen = m.index == channel;
      for (const ChannelMap& d : distinct) seen = seen || d.index == m.index;
      if (!seen) distinct.push_back(std::move(m));
    }
    return distinct;
  }

  uint64_t n, outer, channels, inner;
  std::vector<int64_t> channel;
  std::vector<Partition> partitions;  // core, tile: with a plan only
  uint32_t buffers = 0;               // the plan's
};

Kind WeightKind(const ChannelMap& m) {
  return m.kind == "axis" ? Kind("weight_axis") : Kind("weight_broadcast");
}

// ---- numbers in the compute type

// The compute type's value of a stored value, and a result rounded to dtype.
template <class T>
T Ct(double v) {
  return static_cast<T>(v);
}

template <class T>
uint64_t Store(leaky_dtype dtype, T v) {
  return FromDouble(dtype, static_cast<double>(v));
}

Prediction FromBits(leaky_dtype dtype, std::vector<uint64_t> bits) {
  Prediction p;
  p.values.resize(bits.size());
  for (size_t i = 0; i < bits.size(); ++i) p.values[i] = ToDouble(dtype, bits[i]);
  p.bits = std::move(bits);
  return p;
}

// A sum rounded once: to float, then to the type (f64 as is).
uint64_t RoundSum(leaky_dtype dtype, double total) {
  return dtype == LEAKY_F64 ? FromDouble(dtype, total)
                            : FromDouble(dtype, static_cast<double>(static_cast<float>(total)));
}

std::vector<double> Grouped(const std::vector<double>& terms, const std::vector<int64_t>& index,
                            uint64_t groups) {
  std::vector<double> sums(groups, 0.0);
  for (size_t i = 0; i < terms.size(); ++i) {
    if (index[i] >= 0 && static_cast<uint64_t>(index[i]) < groups) sums[index[i]] += terms[i];
  }
  return sums;
}

// Sums of terms per group, rounded, with how far another order of
// summation at precision eps may move them (plus one rounding).
Prediction Sums(const std::vector<double>& terms, const std::vector<int64_t>& index,
                uint64_t groups, leaky_dtype dtype) {
  const std::vector<double> sums = Grouped(terms, index, groups);
  std::vector<double> abs_terms(terms.size());
  std::vector<double> count(groups, 0.0);
  for (size_t i = 0; i < terms.size(); ++i) {
    abs_terms[i] = std::fabs(terms[i]);
    if (index[i] >= 0 && static_cast<uint64_t>(index[i]) < groups) count[index[i]] += 1;
  }
  const std::vector<double> mags = Grouped(abs_terms, index, groups);
  std::vector<uint64_t> bits(groups);
  Prediction p;
  p.tolerance.resize(groups);
  for (uint64_t g = 0; g < groups; ++g) {
    bits[g] = RoundSum(dtype, sums[g]);
    p.tolerance[g] = count[g] * std::ldexp(1.0, -23) * mags[g] +
                     (dtype != LEAKY_F64 ? Spacing(LEAKY_F32, mags[g]) : 0.0) + 1e-300;
  }
  Prediction v = FromBits(dtype, std::move(bits));
  p.bits = std::move(v.bits);
  p.values = std::move(v.values);
  return p;
}

// ---- the stream restarted wherever the output says

// Positions restarted: from the first drawing element the current
// positions get wrong, each restart point P back to 64 elements before it
// (and each base position) is tried, the one under which the next `window`
// drawing elements fit is kept, and so on. fits(i, position) says whether
// the kernel's element i is the model's for that stream position (index k
// < n: position k; n + k: the call's offset + k). Returns the positions
// and the restart points (P, base), or nullopt.
struct Restarts {
  std::vector<int64_t> positions;
  std::vector<std::pair<uint64_t, int64_t>> points;
};

std::optional<Restarts> Restarted(uint64_t n, const std::vector<char>& draws,
                                  const std::function<bool(uint64_t, int64_t)>& fits,
                                  const std::vector<int64_t>& bases, size_t window = 16,
                                  int max_segments = 256) {
  std::vector<uint64_t> drawing;
  for (uint64_t i = 0; i < n; ++i) {
    if (draws[i]) drawing.push_back(i);
  }
  Restarts r;
  r.positions.resize(n);
  for (uint64_t i = 0; i < n; ++i) r.positions[i] = static_cast<int64_t>(i) + bases[0];
  uint64_t start = 0;
  for (int segment = 0; segment < max_segments; ++segment) {
    auto from = std::lower_bound(drawing.begin(), drawing.end(), start);
    auto bad =
        std::find_if(from, drawing.end(), [&](uint64_t i) { return !fits(i, r.positions[i]); });
    if (bad == drawing.end()) return r;
    const uint64_t i = *bad;
    // A drawing element before i may be right by chance (f16 rounds many
    // slopes alike), so the points back to 64 before i are all tried.
    const uint64_t low =
        std::max<int64_t>(static_cast<int64_t>(start), static_cast<int64_t>(i) - 64);
    std::optional<std::pair<uint64_t, int64_t>> found;
    for (int64_t base : bases) {
      for (int64_t point = static_cast<int64_t>(i); point >= static_cast<int64_t>(low) && !found;
           --point) {
        auto ahead = std::lower_bound(drawing.begin(), drawing.end(), static_cast<uint64_t>(point));
        if (ahead == drawing.end()) continue;
        bool all = true;
        for (size_t k = 0; k < window && ahead != drawing.end() && all; ++k, ++ahead) {
          all = fits(*ahead, base + static_cast<int64_t>(*ahead) - point);
        }
        if (all) found = {{static_cast<uint64_t>(point), base}};
      }
      if (found) break;
    }
    if (!found) return std::nullopt;
    for (uint64_t k = found->first; k < n; ++k) {
      r.positions[k] = found->second + static_cast<int64_t>(k - found->first);
    }
    r.points.push_back(*found);
    start = found->first + 1;
  }
  return std::nullopt;
}

// "<what> restarted at elements P, ... (k restarts, from ...)": base n is
// the call's offset, base 0 position 0.
std::string RestartsText(const std::string& what, const Restarts& r, uint64_t n) {
  std::string points;
  for (size_t k = 0; k < r.points.size() && k < 6; ++k) {
    points += (k ? ", " : "") + std::to_string(r.points[k].first);
  }
  if (r.points.size() > 6) points += " and " + std::to_string(r.points.size() - 6) + " more";
  bool offset = false, zero = false;
  for (const auto& [point, base] : r.points)
    (static_cast<uint64_t>(base) == n ? offset : zero) = true;
  std::string bases = zero ? "position 0" : "";
  if (offset) bases = std::string("the call's offset") + (zero ? " and position 0" : "");
  return what + " restarted at elements " + points + " (" + std::to_string(r.points.size()) +
         " restarts, from " + bases + ")";
}

// ---- the ops' models, in compute type T

std::vector<uint8_t> Unpack(const std::vector<uint64_t>& mask, uint64_t n) {
  std::vector<uint8_t> keep(n);
  for (uint64_t i = 0; i < n; ++i) keep[i] = (mask[i / 8] >> (i % 8)) & 1;
  return keep;
}

std::vector<uint64_t> Pack(const std::vector<uint8_t>& keep) {
  std::vector<uint64_t> bytes((keep.size() + 7) / 8, 0);
  for (size_t i = 0; i < keep.size(); ++i) bytes[i / 8] |= uint64_t{keep[i] != 0} << (i % 8);
  return bytes;
}

// Each byte's bits in the other order (bit j <-> bit 7 - j), the last
// byte's padding included.
std::vector<uint8_t> Flipped(const std::vector<uint8_t>& keep) {
  std::vector<uint8_t> out(keep.size(), 0);
  for (size_t i = 0; i < keep.size(); ++i) {
    const size_t j = (i / 8) * 8 + 7 - i % 8;
    out[i] = j < keep.size() ? keep[j] : 0;
  }
  return out;
}

template <class T>
class Models {
 public:
  Models(const FamilyProblem& p, const Geometry& g, const Operands& results)
      : p_(p), g_(g), s_(p.scalars), results_(results), dt_(p.dtype) {}

  // (base: the op with no fault, hypotheses); base empty: not modelled.
  std::pair<std::map<std::string, Prediction>, std::vector<Hypothesis>> Run() {
    if (p_.op == "prelu") return p_.backward ? PreluBackward() : PreluForward();
    if (p_.op == "elu") return Elu();
    if (p_.op == "rrelu") return Rrelu();
    if (p_.op == "bias_act" || p_.op == "bias_act_dropout") return BiasAct();
    return {};
  }

 private:
  using Base = std::map<std::string, Prediction>;
  using Result = std::pair<Base, std::vector<Hypothesis>>;

  const Operand& In(const char* name) const { return *FindOperand(p_.inputs, name); }
  const Operand& Golden(const char* name) const { return *FindOperand(p_.golden, name); }
  bool HasGolden(const char* name) const { return FindOperand(p_.golden, name) != nullptr; }

  template <class F>
  Prediction Each(F f) const {
    std::vector<uint64_t> bits(g_.n);
    for (uint64_t i = 0; i < g_.n; ++i) bits[i] = Store<T>(dt_, f(i));
    return FromBits(dt_, std::move(bits));
  }

  std::map<std::string, Prediction> Library(const FamilyScalars& s, const Operands& inputs) const {
    std::map<std::string, Prediction> out;
    for (const Operand& o : RunFamily(p_, s, inputs)) out[o.name] = Exact(o);
    return out;
  }

  Operands Replaced(const Operand& o) const {
    Operands in = p_.inputs;
    for (Operand& k : in) {
      if (k.name == o.name) k = o;
    }
    return in;
  }

  // -- PReLU

  Prediction PreluY(const std::vector<int64_t>& index) const {
    const Operand &x = In("x"), &w = In("weight");
    return Each([&](uint64_t i) {
      const T xf = Ct<T>(x.values[i]);
      return xf > 0 ? xf : Ct<T>(w.values[index[i]]) * xf;
    });
  }
  Prediction PreluDx(const std::vector<int64_t>& index) const {
    const Operand &x = In("x"), &w = In("weight"), &dy = In("dy");
    return Each([&](uint64_t i) {
      const T xf = Ct<T>(x.values[i]), gf = Ct<T>(dy.values[i]);
      return xf > 0 ? gf : Ct<T>(w.values[index[i]]) * gf;
    });
  }

 public:
  std::vector<double> PreluTerms() const {
    const Operand &x = In("x"), &dy = In("dy");
    std::vector<double> terms(g_.n);
    for (uint64_t i = 0; i < g_.n; ++i) {
      const T xf = Ct<T>(x.values[i]), gf = Ct<T>(dy.values[i]);
      terms[i] = static_cast<double>(xf > 0 ? T(0) : xf * gf);
    }
    return terms;
  }

 private:
  Result PreluForward() const {
    Result r;
    r.first["y"] = PreluY(g_.channel);
    for (const ChannelMap& m : g_.ChannelMaps()) {
      r.second.push_back({WeightKind(m), "weights indexed by " + m.what, {{"y", PreluY(m.index)}}});
    }
    return r;
  }

  Result PreluBackward() const {
    const std::vector<double> terms = PreluTerms();
    const std::vector<double> dw = Grouped(terms, g_.channel, g_.channels);
    std::vector<uint64_t> dw_bits(g_.channels);
    for (uint64_t c = 0; c < g_.channels; ++c) dw_bits[c] = RoundSum(dt_, dw[c]);
    Result r;
    r.first["dx"] = PreluDx(g_.channel);
    r.first["dweight"] = FromBits(dt_, dw_bits);
    for (const ChannelMap& m : g_.ChannelMaps()) {
      Prediction dx = PreluDx(m.index);
      std::vector<int64_t> wrapped(m.index.size());
      for (size_t i = 0; i < wrapped.size(); ++i)
        wrapped[i] = m.index[i] % static_cast<int64_t>(g_.channels);
      Prediction sums = Sums(terms, wrapped, g_.channels, dt_);
      r.second.push_back({WeightKind(m), "dx's weights indexed by " + m.what, {{"dx", dx}}});
      r.second.push_back({WeightKind(m),
                          "dx's weights and dweight's sums indexed by " + m.what,
                          {{"dx", dx}, {"dweight", sums}}});
      if (m.kind == "axis") {
        r.second.push_back(
            {Kind("weight_grad_wrong_axis"), "dweight summed over " + m.what, {{"dweight", sums}}});
      }
    }
    return r;
  }

  // -- ELU

  Result Elu() const {
    const Operand& x = p_.backward ? In("saved") : In("x");
    const double a = s_.alpha, sc = s_.scale, isc = s_.input_scale;
    Result r;
    auto call = [&](double alpha, double scale, double input_scale) {
      FamilyScalars s = s_;
      s.alpha = alpha;
      s.scale = scale;
      s.input_scale = input_scale;
      return Library(s, p_.inputs);
    };
    r.first = call(a, sc, isc);
    if (!p_.backward) {
      // exp(x * input_scale) - 1: any exp within 2 ulp of its own result,
      // then the subtraction.
      Prediction y;
      y.bits.resize(g_.n);
      y.values.resize(g_.n);
      y.tolerance.resize(g_.n);
      for (uint64_t i = 0; i < g_.n; ++i) {
        const T xf = Ct<T>(x.values[i]);
        const T e = std::exp(xf * Ct<T>(isc));
        const T neg = (e - T(1)) * Ct<T>(Ct<T>(a) * Ct<T>(sc));
        const T v = xf > 0 ? xf * Ct<T>(sc) : neg;
        y.bits[i] = Store<T>(dt_, v);
        y.values[i] = ToDouble(dt_, y.bits[i]);
        const double exp_room =
            xf > 0 ? 0.0
                   : 2 * Spacing(sizeof(T) == 8 ? LEAKY_F64 : LEAKY_F32, e) * std::fabs(a * sc);
        y.tolerance[i] = exp_room + 2 * Spacing(dt_, y.values[i]);
      }
      r.second.push_back(
          {Kind("expm1_missing"), "exp(x * input_scale) - 1 in place of expm1", {{"y", y}}});
      // The same with the coefficient distributed: coef * exp(t) - coef.
      Prediction distributed = y;
      const T coef = Ct<T>(Ct<T>(a) * Ct<T>(sc));
      for (uint64_t i = 0; i < g_.n; ++i) {
        const T xf = Ct<T>(x.values[i]);
        if (!(xf <= 0)) continue;
        const T ce = coef * std::exp(xf * Ct<T>(isc));
        distributed.bits[i] = Store<T>(dt_, ce - coef);
        distributed.values[i] = ToDouble(dt_, distributed.bits[i]);
        distributed.tolerance[i] = 2 * Spacing(sizeof(T) == 8 ? LEAKY_F64 : LEAKY_F32, ce) +
                                   2 * Spacing(dt_, distributed.values[i]);
      }
      r.second.push_back({Kind("expm1_missing"),
                          "alpha * scale * exp(x * input_scale) - alpha * scale in place of expm1",
                          {{"y", distributed}}});
    }
    if (a != sc) {
      r.second.push_back({Kind("alpha_scale_swapped"),
                          "alpha " + Num(a) + " used as scale and scale " + Num(sc) + " as alpha",
                          call(sc, a, isc)});
    }
    if (isc != 1) {
      r.second.push_back({Kind("input_scale_missing"), "input_scale " + Num(isc) + " not applied",
                          call(a, sc, 1.0)});
      if (p_.backward) {
        const Operand& dy = In("dy");
        Prediction dx = Each([&](uint64_t i) {
          const T xf = Ct<T>(x.values[i]), gf = Ct<T>(dy.values[i]);
          return xf > 0 ? gf * Ct<T>(sc)
                        : gf * Ct<T>(Ct<T>(a) * Ct<T>(sc)) * std::exp(xf * Ct<T>(isc));
        });
        r.second.push_back({Kind("input_scale_missing"),
                            "the chain rule's factor input_scale " + Num(isc) +
                                " dropped (exp(x * input_scale) kept)",
                            {{"dx", dx}}});
        // exp(x) where exp(x * input_scale) belongs, the factor kept.
        Prediction unscaled = Each([&](uint64_t i) {
          const T xf = Ct<T>(x.values[i]), gf = Ct<T>(dy.values[i]);
          return xf > 0 ? gf * Ct<T>(sc)
                        : gf * Ct<T>(isc) * Ct<T>(Ct<T>(a) * Ct<T>(sc)) * std::exp(xf);
        });
        r.second.push_back({Kind("input_scale_missing"),
                            "exp(x) in place of exp(x * input_scale " + Num(isc) +
                                ") (the chain rule's factor kept)",
                            {{"dx", unscaled}}});
      }
    }
    return r;
  }

  static std::string Num(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

  // -- RReLU

  // The slopes of stream positions [offset, offset + n): the library's
  // noise on inputs of -1.
  std::vector<double> Stream(uint64_t offset) const {
    FamilyProblem q = p_;
    q.op = "rrelu";
    q.backward = false;
    // In the compute type: f64 draws its slopes from the whole 32-bit
    // word, which f32's noise would round.
    q.dtype = sizeof(T) == 8 ? LEAKY_F64 : LEAKY_F32;
    q.outer = q.channels = 1;
    q.inner = g_.n;
    FamilyScalars s = s_;
    s.training = true;
    s.offset = offset;
    const uint64_t minus_one = sizeof(T) == 8 ? 0xBFF0000000000000ull : 0xBF800000ull;
    const Operands out =
        RunFamily(q, s, {MakeOperand("x", q.dtype, std::vector<uint64_t>(g_.n, minus_one))});
    return out.at(1).values;
  }

  std::map<std::string, Prediction> RreluOutputs(
      const std::function<double(uint64_t)>& slope) const {
    const Operand& x = In("x");
    std::map<std::string, Prediction> out;
    if (!p_.backward) {
      out["y"] = Each([&](uint64_t i) {
        const T xf = Ct<T>(x.values[i]);
        return xf <= 0 ? xf * Ct<T>(slope(i)) : xf;
      });
      if (HasGolden("noise")) {
        out["noise"] =
            Each([&](uint64_t i) { return Ct<T>(x.values[i]) <= 0 ? Ct<T>(slope(i)) : T(1); });
      }
    } else {
      const Operand& dy = In("dy");
      out["dx"] = Each([&](uint64_t i) {
        const T gf = Ct<T>(dy.values[i]);
        return Ct<T>(x.values[i]) <= 0 ? gf * Ct<T>(slope(i)) : gf;
      });
    }
    return out;
  }

  Result Rrelu() const {
    if (!s_.training) return {};
    const uint64_t n = g_.n, off = s_.offset;
    const std::vector<double> stream = Stream(off);
    Result r;
    r.first = RreluOutputs([&](uint64_t i) { return stream[i]; });
    // The evaluation slope in training: in the training code's form, or
    // the evaluation path itself (LeakyReLU's, where a NaN takes the slope).
    const double middle = (s_.lower + s_.upper) / 2;
    r.second.push_back({Kind("eval_slope_in_training"), "slope (lower + upper) / 2 while training",
                        RreluOutputs([&](uint64_t) { return middle; })});
    FamilyScalars ev = s_;
    ev.training = false;
    std::map<std::string, Prediction> evaluation = Library(ev, p_.inputs);
    if (!p_.backward && HasGolden("noise")) {
      // The evaluation path writes no noise: a port that takes it writes
      // the evaluation slope there.
      evaluation["noise"] = RreluOutputs([&](uint64_t) { return middle; })["noise"];
    }
    r.second.push_back({Kind("eval_slope_in_training"),
                        "the evaluation path, slope (lower + upper) / 2, while training",
                        evaluation});
    // Restarts wherever the output says (per core, per tile, at any split).
    if (results_.empty() || results_[0].size() != n) return r;
    const Operand& kernel = results_[0];
    std::vector<double> slopes = off ? Stream(0) : stream;
    slopes.insert(slopes.end(), stream.begin(), stream.end());
    const Operand& x = In("x");
    const Operand& other = p_.backward ? In("dy") : x;
    std::vector<char> telling(n);
    for (uint64_t i = 0; i < n; ++i) {
      const T xf = Ct<T>(x.values[i]), o = Ct<T>(other.values[i]);
      // Forward: x negative and finite (0, -0 and -inf give the same y for
      // every slope); backward: x <= 0 with dy finite and not 0.
      telling[i] =
          p_.backward ? (xf <= 0 && o != 0 && std::isfinite(o)) : (xf < 0 && std::isfinite(xf));
    }
    auto fits = [&](uint64_t i, int64_t pos) {
      return kernel.bits[i] == Store<T>(dt_, Ct<T>(other.values[i]) * Ct<T>(slopes[pos]));
    };
    const std::vector<int64_t> bases =
        off ? std::vector<int64_t>{int64_t(n), 0} : std::vector<int64_t>{int64_t(n)};
    if (auto found = Restarted(n, telling, fits, bases); found && !found->points.empty()) {
      const std::vector<int64_t> pos = found->positions;
      r.second.push_back({Kind("stream_restart"), RestartsText("the stream", *found, n),
                          RreluOutputs([&](uint64_t i) { return slopes[pos[i]]; })});
    }
    return r;
  }

  // -- bias_act (and dropout)

  enum class Sides { kBoth, kNone, kUpper, kLower };

  struct BiasActKnobs {
    const std::vector<int64_t>* index = nullptr;  // null: the channel
    bool clamp_first = false;
    Sides sides = Sides::kBoth;
    const std::vector<uint8_t>* keep = nullptr;  // dropout's decisions
    bool scale_kept = true;
  };

  T Activate(T v) const {
    if (s_.act == LEAKY_ACT_LRELU) return v > 0 ? v : v * Ct<T>(s_.act_alpha);
    if (s_.act == LEAKY_ACT_RELU) return v < 0 ? T(0) : v;
    return v;
  }

  Prediction BiasActY(const BiasActKnobs& k) const {
    const Operand& x = In("x");
    const Operand* b = FindOperand(p_.inputs, "bias");
    const std::vector<int64_t>& index = k.index ? *k.index : g_.channel;
    const double clamp = s_.clamp;
    const T gain = Ct<T>(s_.gain);
    const T keep_scale = k.scale_kept ? T(1) / Ct<T>(T(1) - Ct<T>(s_.dropout_p)) : T(1);
    auto clip = [&](T u) {
      if (clamp < 0 || k.sides == Sides::kNone) return u;
      if (k.sides != Sides::kUpper && u < Ct<T>(-clamp)) u = Ct<T>(-clamp);
      if (k.sides != Sides::kLower && u > Ct<T>(clamp)) u = Ct<T>(clamp);
      return u;
    };
    return Each([&](uint64_t i) {
      const T v = Ct<T>(x.values[i]) + (b ? Ct<T>(b->values[index[i]]) : T(0));
      const T a = Activate(v);
      T u = k.clamp_first ? clip(a) * gain : clip(a * gain);
      if (k.keep) u = u * ((*k.keep)[i] ? keep_scale : T(0));
      return u;
    });
  }

  // The keep decisions of stream positions [offset, offset + n): the
  // library's mask on ones.
  std::vector<uint8_t> KeepStream(uint64_t offset) const {
    FamilyProblem q = p_;
    q.op = "bias_act_dropout";
    q.backward = false;
    q.dtype = LEAKY_F32;
    q.outer = q.channels = 1;
    q.inner = g_.n;
    FamilyScalars s = s_;
    s.act = LEAKY_ACT_LINEAR;
    s.gain = 1.0;
    s.clamp = -1;
    s.offset = offset;
    const Operands out =
        RunFamily(q, s, {MakeOperand("x", LEAKY_F32, std::vector<uint64_t>(g_.n, 0x3F800000u))});
    return Unpack(out.at(1).bits, g_.n);
  }

  Result BiasAct() const {
    if (p_.backward) return p_.op == "bias_act" ? BiasActBackward(nullptr) : DropoutBackward();
    const bool dropout = p_.op == "bias_act_dropout";
    const uint64_t n = g_.n, off = s_.offset;
    std::vector<uint8_t> keep;
    if (dropout) keep = KeepStream(off);
    auto run = [&](BiasActKnobs k) {
      if (dropout && !k.keep) k.keep = &keep;
      std::map<std::string, Prediction> out{{"y", BiasActY(k)}};
      if (dropout) out["mask"] = Prediction{Pack(*k.keep), {}, {}};
      return out;
    };
    Result r;
    r.first = run({});
    const std::vector<ChannelMap> maps = g_.ChannelMaps();
    for (const ChannelMap& m : maps) {
      BiasActKnobs k;
      k.index = &m.index;
      r.second.push_back({Kind("bias_axis"), "bias indexed by " + m.what, run(k)});
    }
    if (s_.clamp >= 0) {
      BiasActKnobs k;
      k.clamp_first = true;
      r.second.push_back({Kind("gain_before_clamp"), "clamp applied before the gain", run(k)});
      for (auto [sides, what] :
           {std::pair{Sides::kNone, "no clamp"}, std::pair{Sides::kUpper, "only the upper clamp"},
            std::pair{Sides::kLower, "only the lower clamp"}}) {
        BiasActKnobs c;
        c.sides = sides;
        r.second.push_back({Kind("clamp_missing"), what, run(c)});
      }
    }
    if (!dropout) return r;
    BiasActKnobs unscaled;
    unscaled.scale_kept = false;
    r.second.push_back(
        {Kind("dropout_scale_missing"), "kept elements not scaled by 1 / (1 - p)", run(unscaled)});
    r.second.push_back({Kind("mask_bit_order"),
                        "the mask written most significant bit first",
                        {{"y", r.first["y"]}, {"mask", Prediction{Pack(Flipped(keep)), {}, {}}}}});
    // The keep decisions restarted wherever the kernel's mask says: index
    // k < n position k, n + k the call's offset + k.
    if (results_.size() > 1 && results_[1].mask && results_[1].size() == (n + 7) / 8) {
      const std::vector<uint8_t> bits = Unpack(results_[1].bits, n);
      std::vector<uint8_t> draws = off ? KeepStream(0) : keep;
      draws.insert(draws.end(), keep.begin(), keep.end());
      auto fits = [&](uint64_t i, int64_t pos) { return bits[i] == draws[pos]; };
      const std::vector<int64_t> bases =
          off ? std::vector<int64_t>{int64_t(n), 0} : std::vector<int64_t>{int64_t(n)};
      if (auto found = Restarted(n, std::vector<char>(n, 1), fits, bases, 64);
          found && !found->points.empty()) {
        std::vector<uint8_t> restarted(n);
        for (uint64_t i = 0; i < n; ++i) restarted[i] = draws[found->positions[i]];
        BiasActKnobs k;
        k.keep = &restarted;
        r.second.push_back(
            {Kind("mask_offset_per_core"), RestartsText("the keep decisions", *found, n), run(k)});
      }
    }
    for (const Partition& part : g_.partitions) {
      // Each part's bits packed from its first element's byte, the bit
      // offset (element % 8) dropped: stored (later parts overwrite
      // earlier ones) or ORed into the mask.
      for (const bool ored : {false, true}) {
        std::vector<uint64_t> bytes((n + 7) / 8, 0);
        for (uint64_t i = 0; i < n;) {
          uint64_t j = i;
          while (j < n && part.part[j] == part.part[i]) ++j;
          const std::vector<uint64_t> packed =
              Pack(std::vector<uint8_t>(keep.begin() + i, keep.begin() + j));
          for (size_t b = 0; b < packed.size() && i / 8 + b < bytes.size(); ++b) {
            bytes[i / 8 + b] = ored ? (bytes[i / 8 + b] | packed[b]) : packed[b];
          }
          i = j;
        }
        r.second.push_back({Kind("mask_offset_per_core"),
                            "each " + part.name + "'s mask bits " + (ored ? "ORed" : "stored") +
                                " from its first byte (element // 8), the bit offset element % 8 "
                                "dropped",
                            {{"y", r.first["y"]}, {"mask", Prediction{bytes, {}, {}}}}});
      }
    }
    return r;
  }

  // bias_act's dx as PyTorch's unfused backward computes it: the clamp's
  // gradient, the gain, then the activation's; rounded once. scale: dy's
  // dropout factor per element, applied first.
  Prediction BiasActDx(const std::vector<int64_t>& index, Sides sides, bool on_gained) const {
    const Operand &x = In("x"), &dy = In("dy");
    const Operand* b = FindOperand(p_.inputs, "bias");
    const T gain = Ct<T>(s_.gain), alpha = Ct<T>(s_.act_alpha);
    const double clamp = s_.clamp;
    return Each([&](uint64_t i) {
      T gf = Ct<T>(dy.values[i]);
      const T v = Ct<T>(x.values[i]) + (b ? Ct<T>(b->values[index[i]]) : T(0));
      if (clamp >= 0 && sides != Sides::kNone) {
        const T u = on_gained ? Activate(v) * gain : Activate(v);
        bool ok = true;
        if (sides != Sides::kUpper) ok = ok && u >= Ct<T>(-clamp);
        if (sides != Sides::kLower) ok = ok && u <= Ct<T>(clamp);
        if (!ok) gf = T(0);
      }
      gf = gf * gain;
      if (s_.act == LEAKY_ACT_LRELU) gf = v > 0 ? gf : gf * alpha;
      if (s_.act == LEAKY_ACT_RELU) gf = v > 0 ? gf : T(0);
      return gf;
    });
  }

  Result BiasActBackward(const std::vector<int64_t>*) const {
    const bool with_db = HasGolden("db");
    auto run = [&](const std::vector<int64_t>& index, const std::vector<int64_t>& db_index,
                   Sides sides, bool on_gained) {
      std::map<std::string, Prediction> out{{"dx", BiasActDx(index, sides, on_gained)}};
      if (with_db) out["db"] = Sums(out["dx"].values, db_index, g_.channels, Golden("db").dtype);
      return out;
    };
    Result r;
    r.first = run(g_.channel, g_.channel, Sides::kBoth, true);
    if (with_db) r.first["db"].tolerance.clear();  // the golden's own order
    for (const ChannelMap& m : g_.ChannelMaps()) {
      std::vector<int64_t> wrapped(m.index.size());
      for (size_t i = 0; i < wrapped.size(); ++i)
        wrapped[i] = m.index[i] % static_cast<int64_t>(g_.channels);
      r.second.push_back({Kind("bias_axis"), "bias indexed by " + m.what,
                          run(m.index, g_.channel, Sides::kBoth, true)});
      r.second.push_back({Kind("bias_axis"), "bias indexed, and db summed, by " + m.what,
                          run(m.index, wrapped, Sides::kBoth, true)});
    }
    if (s_.clamp >= 0) {
      r.second.push_back({Kind("gain_before_clamp"),
                          "the clamp's test on the value before the gain",
                          run(g_.channel, g_.channel, Sides::kBoth, false)});
      for (auto [sides, what] : {std::pair{Sides::kNone, "the clamp's gradient not applied"},
                                 std::pair{Sides::kUpper, "only the upper clamp's gradient"},
                                 std::pair{Sides::kLower, "only the lower clamp's gradient"}}) {
        r.second.push_back({Kind("clamp_missing"), what, run(g_.channel, g_.channel, sides, true)});
      }
    }
    return r;
  }

  // dx = bias_act's backward of dy * (kept ? 1 / (1 - p) : 0): its own
  // faults are the mask's reading and the scale.
  Result DropoutBackward() const {
    const Operand& mask = In("mask");
    const std::vector<uint8_t> keep = Unpack(mask.bits, g_.n);
    const bool with_db = HasGolden("db");
    auto run = [&](const std::vector<uint8_t>& kept, bool scale) {
      std::map<std::string, Prediction> out;
      if (scale) {
        out = Library(s_, Replaced(MakeMask("mask", Pack(kept))));
      } else {
        // dy zeroed where dropped, not scaled: bias_act's backward.
        const Operand& dy = In("dy");
        std::vector<uint64_t> zeroed = dy.bits;
        for (uint64_t i = 0; i < g_.n; ++i) {
          if (!kept[i]) zeroed[i] = 0;
        }
        FamilyProblem q = p_;
        q.op = "bias_act";
        Operands in;
        for (const Operand& o : p_.inputs) {
          if (o.name != "mask") in.push_back(o.name == "dy" ? MakeOperand("dy", dt_, zeroed) : o);
        }
        for (const Operand& o : RunFamily(q, s_, in)) out[o.name] = Exact(o);
      }
      if (!with_db) out.erase("db");
      return out;
    };
    Result r;
    r.first = run(keep, true);
    r.second.push_back({Kind("dropout_scale_missing"), "dy not scaled by 1 / (1 - p) where kept",
                        run(keep, false)});
    r.second.push_back({Kind("mask_bit_order"), "the mask's bits read most significant first",
                        run(Flipped(keep), true)});
    for (const Partition& part : g_.partitions) {
      std::vector<uint8_t> restarted(g_.n);
      for (uint64_t i = 0; i < g_.n; ++i) restarted[i] = keep[i - part.start[i]];
      r.second.push_back({Kind("mask_offset_per_core"),
                          "the mask read from bit 0 again at each " + part.name + "'s start",
                          run(restarted, true)});
      // A byte window from the part's start // 8, its bits indexed from
      // the part's start: the bit offset start % 8 dropped.
      std::vector<uint8_t> windowed(g_.n);
      for (uint64_t i = 0; i < g_.n; ++i) windowed[i] = keep[i - part.start[i] % 8];
      r.second.push_back({Kind("mask_offset_per_core"),
                          "the mask read from byte start // 8 of each " + part.name +
                              ", the bit offset start % 8 dropped",
                          run(windowed, true)});
    }
    return r;
  }

  const FamilyProblem& p_;
  const Geometry& g_;
  const FamilyScalars& s_;
  const Operands& results_;
  const leaky_dtype dt_;
};

// ---- PReLU's dweight: the faults of its sums, where dx is right

// dweight returned with another size: every term unsummed, or sums over
// the outer or inner axis.
std::optional<std::pair<Kind, std::string>> DweightShape(const Operand& got,
                                                         const std::vector<double>& terms,
                                                         const Geometry& g) {
  auto near_all = [&](const std::vector<double>& want, const std::vector<double>& tol) {
    const std::vector<char> near = Near(got.values, want, tol);
    return std::all_of(near.begin(), near.end(), [](char c) { return c != 0; });
  };
  if (got.size() == g.n) {
    std::vector<double> tol(g.n);
    for (uint64_t i = 0; i < g.n; ++i) tol[i] = 1e-3 * std::fabs(terms[i]) + 1e-30;
    if (near_all(terms, tol)) {
      return {{Kind("weight_grad_not_reduced"),
               "dweight holds every element's term x * dy, not summed"}};
    }
  }
  struct Axis {
    const char* what;
    uint64_t groups;
    std::function<int64_t(uint64_t)> of;
  };
  for (const Axis& a :
       {Axis{"the outer index", g.outer,
             [&](uint64_t i) { return int64_t(i / (g.channels * g.inner)); }},
        Axis{"the inner position", g.inner, [&](uint64_t i) { return int64_t(i % g.inner); }}}) {
    if (got.size() != a.groups || a.groups == g.channels) continue;
    std::vector<int64_t> index(g.n);
    std::vector<double> abs_terms(g.n);
    for (uint64_t i = 0; i < g.n; ++i) {
      index[i] = a.of(i);
      abs_terms[i] = std::fabs(terms[i]);
    }
    const std::vector<double> sums = Grouped(terms, index, a.groups);
    std::vector<double> tol = Grouped(abs_terms, index, a.groups);
    for (double& t : tol) t = 1e-3 * t + 1e-30;
    if (near_all(sums, tol)) {
      return {{Kind("weight_grad_wrong_axis"), std::string("dweight summed per ") + a.what + " (" +
                                                   std::to_string(a.groups) +
                                                   " sums), not per channel"}};
    }
  }
  return std::nullopt;
}

float Bf16(float v) {
  uint32_t b = std::bit_cast<uint32_t>(v);
  b = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
  return std::bit_cast<float>(b);
}

// Part of each channel's sum (one core's, tile's or outer slice's part,
// the parts of some of them, per core only its first or last tile), or a
// sum accumulated in the half type.
std::optional<std::pair<Kind, std::string>> DweightSums(const Operand& got, const Operand& golden,
                                                        const std::vector<double>& terms,
                                                        const Geometry& g) {
  const uint64_t c = g.channels;
  const leaky_dtype dtype = golden.dtype;
  const std::vector<double> exact = Grouped(terms, g.channel, c);
  const std::vector<char> same = Same(golden, got.bits, golden.bits, 0);
  std::vector<uint64_t> wrong;
  for (uint64_t k = 0; k < c; ++k) {
    if (!same[k]) wrong.push_back(k);
  }
  if (wrong.empty()) return std::nullopt;
  std::vector<double> abs_terms(g.n);
  for (uint64_t i = 0; i < g.n; ++i) abs_terms[i] = std::fabs(terms[i]);
  const std::vector<double> mags = Grouped(abs_terms, g.channel, c);
  // Candidates: a name and rows of a value per channel (any row may hold
  // for a channel: prefixes of parts).
  std::vector<std::pair<std::string, std::vector<std::vector<double>>>> candidates;
  std::vector<Partition> parts = g.partitions;
  Partition slice{"outer slice", std::vector<int64_t>(g.n), {}};
  for (uint64_t i = 0; i < g.n; ++i) slice.part[i] = static_cast<int64_t>(i / (c * g.inner));
  parts.push_back(std::move(slice));
  for (const Partition& part : parts) {
    std::map<int64_t, std::vector<double>> per;
    for (uint64_t i = 0; i < g.n; ++i) {
      auto& row = per[part.part[i]];
      if (row.empty()) row.assign(c, 0.0);
      row[g.channel[i]] += terms[i];
    }
    std::vector<std::vector<double>> prefixes;
    std::vector<double> running(c, 0.0);
    for (auto& [id, row] : per) {
      candidates.push_back({"one " + part.name + "'s part of each channel's sum", {row}});
      for (uint64_t k = 0; k < c; ++k) running[k] += row[k];
      prefixes.push_back(running);
    }
    candidates.push_back({"the sum of some " + part.name + "s' parts, not all", prefixes});
  }
  if (g.partitions.size() == 2) {
    const std::vector<int64_t>&core = g.partitions[0].part, &tile = g.partitions[1].part;
    for (const char* pick : {"first", "last"}) {
      // Per (core, channel): the tile picked, then its terms of the channel.
      std::map<std::pair<int64_t, int64_t>, int64_t> chosen;
      for (uint64_t i = 0; i < g.n; ++i) {
        auto key = std::pair{core[i], g.channel[i]};
        auto it = chosen.find(key);
        if (it == chosen.end())
          chosen[key] = tile[i];
        else
          it->second = std::string(pick) == "first" ? std::min(it->second, tile[i])
                                                    : std::max(it->second, tile[i]);
      }
      std::vector<double> value(c, 0.0);
      for (uint64_t i = 0; i < g.n; ++i) {
        if (chosen[{core[i], g.channel[i]}] == tile[i]) value[g.channel[i]] += terms[i];
      }
      candidates.push_back(
          {std::string("per core only the ") + pick + " tile's part of each channel", {value}});
    }
    // One buffer's tiles only (every buffers-th tile of each core, from
    // its tile b): the reduction walked one buffer's list.
    std::map<int64_t, int64_t> first_tile;
    for (uint64_t i = 0; i < g.n; ++i) {
      auto it = first_tile.find(core[i]);
      if (it == first_tile.end()) first_tile[core[i]] = tile[i];
      else it->second = std::min(it->second, tile[i]);
    }
    for (uint32_t b = 0; g.buffers > 1 && b < g.buffers; ++b) {
      std::vector<double> value(c, 0.0);
      for (uint64_t i = 0; i < g.n; ++i) {
        if ((tile[i] - first_tile[core[i]]) % g.buffers == b) value[g.channel[i]] += terms[i];
      }
      candidates.push_back({"only buffer " + std::to_string(b) + "'s tiles (every " +
                                std::to_string(g.buffers) + "th tile of each core, from its tile " +
                                std::to_string(b) + ")",
                            {value}});
    }
  }
  for (const auto& [what, rows] : candidates) {
    std::vector<char> ok(c, 0);
    for (const std::vector<double>& row : rows) {
      for (uint64_t k = 0; k < c; ++k) {
        const double tol = std::ldexp(1.0, -20) * mags[k] + 2 * Spacing(dtype, row[k]);
        // A partial sum within rounding of the whole one tells nothing.
        if (std::fabs(got.values[k] - row[k]) <= tol && std::fabs(row[k] - exact[k]) > tol)
          ok[k] = 1;
      }
    }
    if (std::all_of(wrong.begin(), wrong.end(), [&](uint64_t k) { return ok[k] != 0; })) {
      return {{Kind("weight_grad_not_reduced"), "dweight holds " + what}};
    }
  }
  // Accumulated in the half type: off its exact sum by more than summing
  // in f32 in any order gives, and by no more than a few times what
  // summing the same terms in f16 (bf16) in memory order gives.
  if (dtype == LEAKY_F64) return std::nullopt;
  std::vector<double> err(c), tight(c);
  for (uint64_t k = 0; k < c; ++k) {
    err[k] = std::fabs(got.values[k] - exact[k]);
    float acc = 0;
    bool any = false;
    for (uint64_t i = 0; i < g.n; ++i) {
      if (static_cast<uint64_t>(g.channel[i]) == k) {
        acc = acc + static_cast<float>(terms[i]);
        any = true;
      }
    }
    const double f32_err = any ? std::fabs(static_cast<double>(acc) - exact[k]) : 0.0;
    tight[k] = 16 * f32_err + 2 * Spacing(dtype, exact[k]);
  }
  if (!std::any_of(wrong.begin(), wrong.end(), [&](uint64_t k) { return err[k] > tight[k]; }))
    return std::nullopt;
  for (const auto& [half, eps] : {std::pair{"f16", 0x1p-11}, std::pair{"bf16", 0x1p-8}}) {
    std::vector<double> simulated(c, 0.0);
    for (uint64_t k = 0; k < c; ++k) {
      double acc = 0;
      for (uint64_t i = 0; i < g.n; ++i) {
        if (static_cast<uint64_t>(g.channel[i]) != k) continue;
        if (std::string(half) == "f16") {
          // As NumPy's float16 sum: each addition in float, rounded to f16.
          const double t = ToDouble(LEAKY_F16, FromDouble(LEAKY_F16, terms[i]));
          acc = ToDouble(LEAKY_F16,
                         FromDouble(LEAKY_F16, static_cast<float>(acc) + static_cast<float>(t)));
        } else {  // f32 rounded to 8 bits of mantissa after every addition
          acc = Bf16(static_cast<float>(acc + Bf16(static_cast<float>(terms[i]))));
        }
      }
      simulated[k] = std::fabs(acc - exact[k]);
    }
    bool all = true;
    double worst = 0, worst_sim = 0;
    for (uint64_t k = 0; k < c; ++k) {
      const double bound = 4 * simulated[k] + 4 * eps * std::fabs(exact[k]) + eps * 1e-3 * mags[k];
      all = all && err[k] <= bound;
      worst = std::max(worst, err[k]);
      worst_sim = std::max(worst_sim, simulated[k]);
    }
    if (all) {
      char text[256];
      std::snprintf(
          text, sizeof text,
          "dweight is off its exact sum by up to %.3g, more than summing in f32 gives and as "
          "much as summing in %s does (%.3g)",
          worst, half, worst_sim);
      return {{Kind("weight_grad_half"), text}};
    }
  }
  return std::nullopt;
}

// ---- the judge

struct Accepted {
  uint64_t collateral;
  Kind kind;
  std::string what;
};

// The hypotheses that explain every wrong element of every output, closest
// fit (fewest elements changed that the kernel got right) first.
std::vector<Accepted> Judge(const FamilyProblem& p,
                            const std::map<std::string, const Operand*>& got,
                            const std::map<std::string, std::vector<char>>& wrong,
                            const std::vector<Hypothesis>& hypotheses, uint64_t ulps) {
  uint64_t total = 0;
  for (const auto& [name, w] : wrong) total += std::count(w.begin(), w.end(), 1);
  std::vector<Accepted> accepted;
  for (const Hypothesis& h : hypotheses) {
    uint64_t explained = 0, collateral = 0;
    bool fits = true;
    for (const Operand& golden : p.golden) {
      auto it = h.outputs.find(golden.name);
      const Prediction pred = it != h.outputs.end() ? it->second : Exact(golden);
      const Operand& k = *got.at(golden.name);
      const bool main = golden.name == "y" || golden.name == "dx";
      const uint64_t u = main ? ulps : 0;
      std::optional<std::vector<char>> match = Matches(k, pred, u);
      if (!match || pred.bits.size() != golden.size()) {
        fits = false;
        break;
      }
      if (!pred.tolerance.empty() && !main) {
        // Within its tolerance a sum explains only what it tells apart
        // from the golden (a grouping one element off is not a cause).
        const std::vector<char> near = Near(pred.values, golden.values, pred.tolerance);
        for (size_t i = 0; i < near.size(); ++i) (*match)[i] = (*match)[i] && !near[i];
      }
      const std::vector<char>& w = wrong.at(golden.name);
      const std::vector<char> same = Same(golden, pred.bits, golden.bits, u);
      for (size_t i = 0; i < w.size(); ++i) {
        explained += w[i] && (*match)[i];
        collateral += !same[i] && !w[i];
      }
    }
    if (fits && explained == total) accepted.push_back({collateral, h.kind, h.what});
  }
  std::stable_sort(accepted.begin(), accepted.end(), [](const Accepted& a, const Accepted& b) {
    return a.collateral < b.collateral;
  });
  return accepted;
}

template <class T>
std::vector<Finding> Explain(const FamilyProblem& p, const Operands& results, const Layout* plan,
                             uint64_t max_ulp) {
  const Geometry g(p, plan);
  const uint64_t ulps = p.op == "elu" ? 4 + max_ulp : 0;
  std::map<std::string, const Operand*> got;
  for (size_t k = 0; k < p.golden.size(); ++k)
    got[p.golden[k].name] = k < results.size() ? &results[k] : &p.golden[k];
  Models<T> models(p, g, results);
  const bool prelu_backward = p.op == "prelu" && p.backward && results.size() > 1;
  if (prelu_backward && got["dweight"]->size() != p.golden[1].size()) {
    const Operand& dx = *got["dx"];
    const std::vector<char> same = dx.size() == p.golden[0].size()
                                       ? Same(dx, dx.bits, p.golden[0].bits, 0)
                                       : std::vector<char>{0};
    const bool dx_right = std::all_of(same.begin(), same.end(), [](char c) { return c != 0; });
    const auto found = DweightShape(*got["dweight"], models.PreluTerms(), g);
    if (found && dx_right) return {Finding(found->first, found->second, {{"output", "dweight"}})};
    return {};
  }
  auto [base, hypotheses] = models.Run();
  if (base.empty()) return {};
  if (IsChannelOp(p.op) && p.channels > 1 && p.inner > 1) {
    // The right results at channels-last addresses (o, j, c) for (o, c,
    // j), or the reverse: a layout mixed up in the store.
    const Operand& main = p.golden[0];
    const uint64_t ci = p.channels * p.inner;
    for (const bool to_last : {true, false}) {
      std::vector<uint64_t> bits(main.size());
      for (uint64_t o = 0; o < p.outer; ++o) {
        for (uint64_t c = 0; c < p.channels; ++c) {
          for (uint64_t j = 0; j < p.inner; ++j) {
            const uint64_t first = o * ci + c * p.inner + j, last = o * ci + j * p.channels + c;
            if (to_last) bits[last] = main.bits[first];
            else bits[first] = main.bits[last];
          }
        }
      }
      hypotheses.push_back({Kind("misplaced"),
                            to_last ? "right results stored channels-last ([outer, inner, channels])"
                                    : "right results stored as if the output were channels-last",
                            {{main.name, FromBits(p.dtype, std::move(bits))}}});
    }
  }
  // The models are trusted only if, with no fault, they are the library.
  for (const auto& [name, pred] : base) {
    const Operand* golden = FindOperand(p.golden, name);
    if (!golden || pred.bits.size() != golden->size()) return {};
    const bool main = name == "y" || name == "dx";
    const std::vector<char> same = Same(*golden, pred.bits, golden->bits, main ? ulps : 0);
    if (!std::all_of(same.begin(), same.end(), [](char c) { return c != 0; })) return {};
  }
  std::map<std::string, std::vector<char>> wrong;
  std::string counts;
  json count_json = json::object();
  std::string first_output;
  uint64_t first = 0;
  for (const Operand& golden : p.golden) {
    const Operand& k = *got[golden.name];
    if (k.size() != golden.size() || k.mask != golden.mask) return {};  // the check says so
    const bool main = golden.name == "y" || golden.name == "dx";
    std::vector<char> w = Same(golden, k.bits, golden.bits, main ? ulps : 0);
    for (char& c : w) c = !c;
    const uint64_t count = std::count(w.begin(), w.end(), 1);
    if (count) {
      counts += (counts.empty() ? "" : ", ") + golden.name + " " + std::to_string(count) + " of " +
                std::to_string(golden.size());
      count_json[golden.name] = count;
      if (first_output.empty()) {
        first_output = golden.name;
        first = std::find(w.begin(), w.end(), 1) - w.begin();
      }
    }
    wrong[golden.name] = std::move(w);
  }
  if (first_output.empty()) return {};
  const json details = {{"output", first_output}, {"index", first}, {"counts", count_json}};
  const std::vector<Accepted> accepted = Judge(p, got, wrong, hypotheses, ulps);
  if (accepted.empty() && prelu_backward &&
      std::count(wrong["dx"].begin(), wrong["dx"].end(), 1) == 0) {
    const auto found = DweightSums(*got["dweight"], p.golden[1], models.PreluTerms(), g);
    if (found) return {Finding(found->first, found->second, details)};
    return {};
  }
  if (accepted.empty()) return {};
  std::vector<std::pair<Kind, std::string>> kinds;
  for (const Accepted& a : accepted) {
    if (a.collateral != accepted.front().collateral) break;
    if (std::none_of(kinds.begin(), kinds.end(),
                     [&](const auto& k) { return std::string(k.first.name) == a.kind.name; })) {
      kinds.push_back({a.kind, a.what});
    }
  }
  if (kinds.size() > 1) {
    std::string fit;
    json candidates = json::array();
    for (const auto& [kind, what] : kinds) {
      fit += (fit.empty() ? "" : "; ") + std::string(kind.name) + " (" + what + ")";
      candidates.push_back(kind.name);
    }
    json d = details;
    d["candidates"] = candidates;
    return {Finding(Kind("ambiguous"),
                    "the wrong elements (" + counts + ") fit " + fit + " equally; check each", d)};
  }
  const auto& [kind, what] = kinds.front();
  return {Finding(kind,
                  LooksLike(kind.name) + ": " + what + " (" + counts + " wrong, the first at " +
                      std::to_string(first) + ")",
                  details)};
}

}  // namespace

std::vector<Finding> ExplainFamily(const FamilyProblem& p, const Operands& results,
                                   const Layout* plan, uint64_t max_ulp) {
  switch (p.dtype) {
    case LEAKY_F16:
    case LEAKY_F32:
      return Explain<float>(p, results, plan, max_ulp);
    case LEAKY_F64:
      return Explain<double>(p, results, plan, max_ulp);
    default:
      return {};  // bf16: not modelled
  }
}

}  // namespace leaky::toolkit

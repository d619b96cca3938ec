#include "config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace leaky::gan {
namespace {

struct KindText {
  ActivationKind kind;
  const char* name;
};
constexpr KindText kKindNames[] = {{ActivationKind::kRelu, "relu"},
                                   {ActivationKind::kLeakyRelu, "lrelu"},
                                   {ActivationKind::kPrelu, "prelu"},
                                   {ActivationKind::kElu, "elu"},
                                   {ActivationKind::kRrelu, "rrelu"}};

}  // namespace

const char* KindName(ActivationKind kind) {
  for (const KindText& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "?";
}

std::string ActivationSpec::Name() const {
  std::string name = KindName(kind);
  if (kind == ActivationKind::kLeakyRelu ||
      (kind == ActivationKind::kPrelu && slope != kPreluDefaultInit)) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), ":%g", slope);
    name += buffer;
  }
  return torch_impl ? name + "@torch" : name;
}

ActivationSpec ParseActivation(const std::string& text) {
  ActivationSpec spec;
  std::string body = text;
  const auto at = body.find('@');
  if (at != std::string::npos) {
    if (body.substr(at) != "@torch") throw std::invalid_argument("unknown suffix in '" + text + "'");
    spec.torch_impl = true;
    body = body.substr(0, at);
  }
  const auto colon = body.find(':');
  const std::string kind = body.substr(0, colon);
  const KindText* found = nullptr;
  for (const KindText& k : kKindNames) {
    if (kind == k.name) found = &k;
  }
  const bool takes_number =
      found != nullptr && (found->kind == ActivationKind::kLeakyRelu || found->kind == ActivationKind::kPrelu);
  if (found == nullptr || (colon != std::string::npos && !takes_number)) {
    throw std::invalid_argument("activation '" + text +
                                "' is not relu, lrelu:<slope>, prelu[:<init>], elu or rrelu");
  }
  spec.kind = found->kind;
  if (spec.kind == ActivationKind::kPrelu) spec.slope = kPreluDefaultInit;
  if (colon != std::string::npos) {
    size_t used = 0;
    try {
      spec.slope = std::stod(body.substr(colon + 1), &used);
    } catch (const std::exception&) {
      used = 0;  // not a number at all (std::stod's own message says only "stod")
    }
    if (used == 0 || used != body.size() - colon - 1 || !std::isfinite(spec.slope)) {
      throw std::invalid_argument("bad slope in '" + text + "': a finite number is needed");
    }
  }
  return spec;
}

double PrecisionSlope(const ActivationSpec& layer2, const ActivationSpec& base) {
  if (layer2.kind == ActivationKind::kLeakyRelu) return layer2.slope;
  return base.kind == ActivationKind::kLeakyRelu ? base.slope : 0.2;
}

const char* InitName(Init init) { return init == Init::kDcgan ? "dcgan" : "default"; }

const char* DatasetName(Dataset data) {
  switch (data) {
    case Dataset::kMnist:
      return "mnist";
    case Dataset::kFashion:
      return "fashion";
    case Dataset::kRing8:
      break;
  }
  return "ring8";
}

const char* LossName(Loss loss) { return loss == Loss::kHinge ? "hinge" : "non-saturating"; }

int64_t LatentSize(Dataset data, ModelShape shape) {
  return data == Dataset::kRing8 ? 8 : shape.width == 2 ? 100 : 64;
}

std::vector<ActivationSpec> LayerActs(const LabConfig& config, const Variant& v) {
  std::vector<ActivationSpec> acts(kHiddenLayers, config.base_act);
  for (int layer = 1; layer <= kHiddenLayers; ++layer) {
    if (v.layers.empty() || std::find(v.layers.begin(), v.layers.end(), layer) != v.layers.end()) {
      acts[static_cast<size_t>(layer - 1)] = v.act;
    }
  }
  return acts;
}

std::vector<RunKey> PlannedRuns(const LabConfig& config) {
  std::vector<RunKey> runs;
  for (size_t v = 0; v < config.variants.size(); ++v) {
    for (int seed = config.first_seed; seed < config.first_seed + config.seeds; ++seed) {
      runs.push_back({v, seed});
    }
  }
  return runs;
}

std::vector<RunKey> ShardRuns(const LabConfig& config) {
  const std::vector<RunKey> all = PlannedRuns(config);
  std::vector<RunKey> mine;
  for (size_t i = 0; i < all.size(); ++i) {
    if (InShard(i, config.shard_index, config.shard_count)) mine.push_back(all[i]);
  }
  return mine;
}

}  // namespace leaky::gan

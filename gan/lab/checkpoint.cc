#include "checkpoint.h"

#include <leaky/torch.hpp>

#include <stdexcept>
#include <string>

#include "data.h"
#include "results_json.h"

namespace leaky::gan {
namespace {

namespace ser = torch::serialize;

// Every leaky RReLU of the discriminator, in module order: their stream
// offsets are plain members, not buffers, so the modules' archive misses them.
std::vector<leaky::nn::RReLUImpl*> Rrelus(Discriminator& d) {
  std::vector<leaky::nn::RReLUImpl*> found;
  for (const auto& module : d->modules(/*include_self=*/false)) {
    if (auto* rrelu = module->as<leaky::nn::RReLUImpl>()) found.push_back(rrelu);
  }
  return found;
}

torch::Tensor Int64s(const std::vector<int64_t>& values) {
  return torch::tensor(values, torch::kInt64);
}

}  // namespace

void SaveCheckpoint(const std::filesystem::path& path, const Models& m, const TrainingState& s) {
  ser::OutputArchive archive;
  ser::OutputArchive g, d, opt_g, opt_d;
  m.g->save(g);
  m.d->save(d);
  m.opt_g.save(opt_g);
  m.opt_d.save(opt_d);
  archive.write("g", g);
  archive.write("d", d);
  archive.write("opt_g", opt_g);
  archive.write("opt_d", opt_d);
  std::vector<int64_t> offsets;
  for (leaky::nn::RReLUImpl* rrelu : Rrelus(m.d)) offsets.push_back(rrelu->offset);
  archive.write("rrelu_offsets", Int64s(offsets));
  archive.write("step", Int64s({s.step}));
  archive.write("cursor", Int64s({s.cursor}));
  archive.write("has_order", Int64s({s.order.defined() ? 1 : 0}));
  if (s.order.defined()) archive.write("order", s.order);
  archive.write("data_gen", s.data_gen.get_state());
  archive.write("noise_gen", s.noise_gen.get_state());
  archive.write("global_gen", at::detail::getDefaultCPUGenerator().get_state());
  archive.write("step_seconds", torch::tensor({s.step_seconds}, torch::kFloat64));
  archive.write("history",
                c10::IValue(HistoryJson(s.run.rows, s.run.quality, s.run.probes, s.run.precision).dump()));
  std::vector<int64_t> grid_steps;
  for (size_t i = 0; i < s.run.sample_grids.size(); ++i) {
    grid_steps.push_back(s.run.sample_grids[i].first);
    archive.write("grid" + std::to_string(i), s.run.sample_grids[i].second);
  }
  archive.write("grid_steps", Int64s(grid_steps));
  archive.write("has_preact2", Int64s({s.run.preact2.defined() ? 1 : 0}));
  if (s.run.preact2.defined()) archive.write("preact2", s.run.preact2);
  const std::filesystem::path partial = TemporaryFor(path);
  archive.save_to(partial.string());
  std::filesystem::rename(partial, path);
}

void LoadCheckpoint(const std::filesystem::path& path, const Models& m, TrainingState* s) {
  try {
    ser::InputArchive archive;
    archive.load_from(path.string());
    ser::InputArchive g, d, opt_g, opt_d;
    archive.read("g", g);
    archive.read("d", d);
    archive.read("opt_g", opt_g);
    archive.read("opt_d", opt_d);
    m.g->load(g);
    m.d->load(d);
    m.opt_g.load(opt_g);
    m.opt_d.load(opt_d);
    // A fresh tensor per key: reading into a tensor that holds another
    // key's storage tries to resize that storage, which LibTorch refuses.
    const auto read = [&](const char* key) {
      torch::Tensor t;
      archive.read(key, t);
      return t;
    };
    const torch::Tensor offsets = read("rrelu_offsets");
    const std::vector<leaky::nn::RReLUImpl*> rrelus = Rrelus(m.d);
    if (offsets.numel() != static_cast<int64_t>(rrelus.size())) {
      throw std::runtime_error("its RReLU layers differ from this run's");
    }
    for (size_t i = 0; i < rrelus.size(); ++i) {
      rrelus[i]->offset = offsets[static_cast<int64_t>(i)].item<int64_t>();
    }
    s->step = static_cast<int>(read("step").item<int64_t>());
    s->cursor = read("cursor").item<int64_t>();
    if (read("has_order").item<int64_t>() != 0) s->order = read("order");
    s->data_gen.set_state(read("data_gen"));
    s->noise_gen.set_state(read("noise_gen"));
    at::Generator global = at::detail::getDefaultCPUGenerator();  // a handle to the one generator
    global.set_state(read("global_gen"));
    s->step_seconds = read("step_seconds").item<double>();
    c10::IValue history;
    archive.read("history", history);
    s->run = TrainedRun{};
    HistoryFromJson(nlohmann::json::parse(history.toStringRef()), &s->run.rows, &s->run.quality,
                    &s->run.probes, &s->run.precision);
    const torch::Tensor grid_steps = read("grid_steps");
    for (int64_t i = 0; i < grid_steps.numel(); ++i) {
      s->run.sample_grids.emplace_back(static_cast<int>(grid_steps[i].item<int64_t>()),
                                       read(("grid" + std::to_string(i)).c_str()));
    }
    if (read("has_preact2").item<int64_t>() != 0) s->run.preact2 = read("preact2");
  } catch (const std::exception& e) {
    // LibTorch's messages carry a stack trace: the first line says enough.
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    throw std::runtime_error(path.string() + " is not a checkpoint this lab can resume (" + what +
                             "): delete it to train that run from its start");
  }
}

}  // namespace leaky::gan

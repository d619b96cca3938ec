#include "outputs.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "png.h"

namespace leaky::gan {
namespace {

void WriteFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void WriteCsv(const std::filesystem::path& path, const std::vector<Row>& rows) {
  std::ofstream out(path);
  out << "step,d_loss,g_loss,d_real,d_fake,grad_norm_first_layer,step_ms";
  for (const char* what : {"sparsity_zero", "sparsity_nonpos", "dead_channels"}) {
    for (int l = 1; l <= kHiddenLayers; ++l) out << "," << what << "_l" << l;
  }
  out << "\n";
  char buffer[64];
  for (const Row& r : rows) {
    out << r.step;
    for (double v : {r.d_loss, r.g_loss, r.d_real, r.d_fake, r.grad_norm, r.step_ms}) {
      std::snprintf(buffer, sizeof(buffer), ",%.9g", v);
      out << buffer;
    }
    for (const auto* values : {&r.zero, &r.nonpos, &r.dead}) {
      for (double v : *values) {
        std::snprintf(buffer, sizeof(buffer), ",%.9g", v);
        out << buffer;
      }
    }
    out << "\n";
  }
}

}  // namespace

void WriteRunFiles(const LabConfig& config, const std::filesystem::path& dir, int seed,
                   const TrainedRun& run) {
  std::filesystem::create_directories(dir);
  for (const auto& [step, samples] : run.sample_grids) {
    const torch::Tensor image =
        IsImages(config.data) ? ImageGrid(samples, 8) : ScatterImage(samples, 160);
    WriteFile(dir / ("samples_step" + std::to_string(step) + ".png"), EncodePng(image));
  }
  WriteCsv(dir / ("seed" + std::to_string(seed) + ".csv"), run.rows);
  if (run.preact2.defined()) {
    const torch::Tensor flat = run.preact2.contiguous().to(torch::kFloat32).reshape({-1});
    std::ofstream out(dir / "preact_layer2.f32", std::ios::binary);
    out.write(reinterpret_cast<const char*>(flat.data_ptr<float>()),
              static_cast<std::streamsize>(flat.numel() * sizeof(float)));
  }
}

}  // namespace leaky::gan

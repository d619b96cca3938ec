#include "speed_check.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <vector>

#include "models.h"

namespace leaky::gan {

// A discriminator training step (forward, backward on a real batch) with
// this library's LeakyReLU against torch::nn::LeakyReLU, interleaved.
SpeedCheck MeasureSpeedCheck(Dataset data, ModelShape shape, int batch) {
  std::vector<ActivationSpec> ours(4, ParseActivation("lrelu:0.2"));
  std::vector<ActivationSpec> theirs(4, ParseActivation("lrelu:0.2@torch"));
  torch::manual_seed(0);
  Discriminator a(data, ours, false, 0, shape);
  torch::manual_seed(0);
  Discriminator b(data, theirs, false, 0, shape);
  const torch::Tensor x = IsImages(data) ? torch::randn({batch, 1, 28, 28})
                                                  : torch::randn({batch * 4, 2});
  auto time = [&](Discriminator& d) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) {
      d->zero_grad();
      d->forward(x).sum().backward();
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / 10;
  };
  time(a), time(b);  // warm-up
  // Paired rounds in alternating order, so drift in the machine's load (it
  // is shared) falls on both sides; the figure is the median of the
  // per-round ratios, with its quartiles as the spread.
  constexpr int kRounds = 25;
  std::vector<double> ta, tb, ratio;
  for (int round = 0; round < kRounds; ++round) {
    double ms_a, ms_b;
    if (round % 2 == 0) {
      ms_a = time(a), ms_b = time(b);
    } else {
      ms_b = time(b), ms_a = time(a);
    }
    ta.push_back(ms_a), tb.push_back(ms_b), ratio.push_back(ms_a / ms_b);
  }
  auto quantile = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  };
  return {quantile(ta, 0.5), quantile(tb, 0.5), quantile(ratio, 0.5),
          std::array<double, 2>{quantile(ratio, 0.25), quantile(ratio, 0.75)},
          "median over 25 paired rounds (order alternating) of 10 discriminator "
          "forward+backward steps each, LeakyReLU(0.2) on every hidden layer; ratio = "
          "this library's step time / torch::nn::LeakyReLU's"};
}

}  // namespace leaky::gan

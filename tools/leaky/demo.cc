// `leaky demo`: the SIMD target chosen at run time and a short throughput
// table for forward and backward, 1 thread and all threads.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <vector>

#include "cli_checks.h"
#include "commands.h"
#include "leaky/leaky.hpp"

namespace leaky::cli {
using namespace leaky::toolkit;  // the toolkit library the commands are made of
namespace {

// Best of `repeats` runs, in GB/s of bytes read + written.
template <class Call>
double MeasureGbps(size_t bytes, int repeats, Call call) {
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    call();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, static_cast<double>(bytes) / seconds / 1e9);
  }
  return best;
}

int RunDemo(size_t max_elements) {
  std::printf("leaky %s, SIMD target chosen at run time: %s\n\n", leaky_version(),
              leaky_simd_target());
  std::printf("%-10s %-9s %12s %9s %12s\n", "op", "dtype", "elements", "threads", "GB/s");
  std::mt19937 rng(42);
  std::normal_distribution<float> normal;
  for (size_t n : {size_t{1} << 20, max_elements}) {
    std::vector<float> x(n), dy(n), y(n), dx(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = normal(rng);
      dy[i] = normal(rng);
    }
    const int repeats = n <= (size_t{1} << 20) ? 50 : 5;
    for (int threads : {1, 0}) {
      const options opts{threads, -1};
      const double forward = MeasureGbps(2 * n * sizeof(float), repeats, [&] {
        leaky_relu_forward<float>(x, y, 0.2, opts);
      });
      const double backward = MeasureGbps(3 * n * sizeof(float), repeats, [&] {
        leaky_relu_backward<float>(dy, x, false, dx, 0.2, opts);
      });
      const char* label = threads == 0 ? "all" : "1";
      std::printf("%-10s %-9s %12zu %9s %12.1f\n", "forward", "f32", n, label, forward);
      std::printf("%-10s %-9s %12zu %9s %12.1f\n", "backward", "f32", n, label, backward);
    }
  }
  return 0;
}

}  // namespace

void AddDemoCommand(CLI::App& app, std::function<int()>& run) {
  auto* command = app.add_subcommand("demo", "Print the SIMD target and a throughput table");
  auto max_elements = std::make_shared<size_t>(size_t{1} << 26);
  WholeNumber(command->add_option("--elements", *max_elements, "Largest array size (elements)"),
              size_t{1}, size_t{1} << 30);
  command->callback([&run, max_elements] { run = [max_elements] { return RunDemo(*max_elements); }; });
}

}  // namespace leaky::cli

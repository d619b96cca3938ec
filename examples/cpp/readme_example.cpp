#include <leaky/leaky.hpp>
#include <cstdio>
#include <vector>

int main() {
  std::vector<leaky::float16> x{leaky::float16(-1e-4f), leaky::float16(2.0f)}, y(2);
  leaky::leaky_relu_forward<leaky::float16>(x, y, 0.01, {.num_threads = 1});
  for (auto v : y) std::printf("%g\n", static_cast<float>(v));  // -1e-06 survives in f16
  try {
    leaky::leaky_relu_forward<leaky::float16>(x, y, 1.0 / 0.0);
  } catch (const leaky::error& e) {
    std::printf("error: %s\n", e.what());
  }
}

#include <leaky/leaky.hpp>
#include <cstdio>
#include <vector>

int main() {
  std::vector<double> x{-4.0, 4.0}, y(2);
  leaky::leaky_relu_forward<double>(x, y, 0.25);
  std::printf("%s %g %g\n", leaky::simd_target().c_str(), y[0], y[1]);
  return y[0] == -1.0 && y[1] == 4.0 ? 0 : 1;
}

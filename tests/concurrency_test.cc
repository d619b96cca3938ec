// Many application threads calling at once, each with its own multi-core
// plan, all sharing the one pool: every result exact. Run under TSan too.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "leaky/reference.hpp"
#include "plan/cpu_plan.h"
#include "test_util.h"

namespace leaky::test {
namespace {

TEST(Concurrency, ManyCallersShareThePool) {
  internal::SetMinBytesPerCoreForTesting(1);
  constexpr int kCallers = 6;
  std::vector<std::thread> callers;
  std::vector<int> failures(kCallers, 0);
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([c, &failures] {
      const size_t n = 10000 + static_cast<size_t>(c) * 977;
      std::vector<float> x(n), y(n), dx(n);
      for (size_t i = 0; i < n; ++i) x[i] = static_cast<float>(i % 13) - 6.5f;
      for (int round = 0; round < 50; ++round) {
        const double slope = 0.01 * (c + 1);
        leaky_relu_forward<float>(x, y, slope, options{1 + (round + c) % 4, round % 3 - 1});
        leaky_relu_backward<float>(x, x, false, dx, slope, options{2, -1});
        for (size_t i = 0; i < n; ++i) {
          if (y[i] != reference::leaky_relu_forward(x[i], slope) ||
              dx[i] != reference::leaky_relu_backward(x[i], x[i], slope)) {
            ++failures[c];
            break;
          }
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  internal::SetMinBytesPerCoreForTesting(0);
  for (int c = 0; c < kCallers; ++c) EXPECT_EQ(failures[c], 0) << "caller " << c;
}

}  // namespace
}  // namespace leaky::test

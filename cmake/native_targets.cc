// Run at configure time with LEAKY_SIMD_TARGETS=native: prints the
// HWY_DISABLED_TARGETS that leave the kernels compiled for two targets only,
// the best one this machine runs and the portable baseline (Highway compiles
// the baseline whatever is disabled).
#include <cstdint>
#include <cstdio>

#include "hwy/targets.h"

int main() {
  const int64_t compiled = HWY_TARGETS;  // lower bits are better targets
  const int64_t usable = compiled & hwy::SupportedTargets();
  const int64_t best = usable & -usable;
  std::printf("0x%llxLL", static_cast<unsigned long long>(compiled & ~best & ~int64_t{HWY_STATIC_TARGET}));
  return 0;
}

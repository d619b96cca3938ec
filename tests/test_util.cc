#include "test_util.h"

#include <xmmintrin.h>

#include <limits>

namespace leaky::test {

FlushDenormals::FlushDenormals() : saved_(_mm_getcsr()) { _mm_setcsr(saved_ | 0x8040u); }
FlushDenormals::~FlushDenormals() { _mm_setcsr(saved_); }

namespace {
template <class T, class Bits>
std::vector<T> Specials(std::initializer_list<Bits> patterns) {
  std::vector<T> values;
  for (Bits bits : patterns) {
    const T v = std::bit_cast<T>(bits);
    values.push_back(v);
    values.push_back(-v);
  }
  using L = std::numeric_limits<T>;
  for (T v : {T(0), L::min(), L::denorm_min(), L::max(), L::infinity(), L::epsilon(), T(1),
              T(0.5), T(1e-30), T(6.0e-8), T(3.0e-8), T(1e-5), T(65504), T(65520)}) {
    values.push_back(v);
    values.push_back(-v);
  }
  return values;
}
}  // namespace

std::vector<float> SpecialFloats() {
  return Specials<float, uint32_t>({0x00000001u, 0x00000002u, 0x007fffffu, 0x00400000u,
                                    0x00800000u, 0x00800001u, 0x7f7fffffu, 0x7f800001u,
                                    0x7fc00000u, 0x7fc12345u, 0x7fa00000u, 0x7fbfffffu,
                                    0x33800000u, 0x33000000u, 0x387fe000u, 0x477ff000u});
}

std::vector<double> SpecialDoubles() {
  return Specials<double, uint64_t>({0x1ull, 0x000fffffffffffffull, 0x0010000000000000ull,
                                     0x7fefffffffffffffull, 0x7ff0000000000001ull,
                                     0x7ff8000000000000ull, 0x7ff8123456789abcull,
                                     0x7ff4000000000000ull});
}

}  // namespace leaky::test

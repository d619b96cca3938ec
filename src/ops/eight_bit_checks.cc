#include "ops/eight_bit_checks.h"

#include <cstring>

#include "runtime/error.h"

namespace leaky::internal {

int TypeOf(const leaky_type8& type) {
  int value = 0;
  static_assert(sizeof(value) == sizeof(type));
  std::memcpy(&value, &type, sizeof(value));
  return value;
}

QuantizedRange RangeOf(int type) {
  return type == LEAKY_QU8 ? QuantizedRange{0, 255} : QuantizedRange{-128, 127};
}

leaky_status CheckOutputClamp(const char* function, int32_t output_min, int32_t output_max,
                              QuantizedRange range) {
  if (output_min < range.lo || output_max > range.hi || output_min > output_max) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER,
                "%s: the output clamp [%d, %d] must satisfy %d <= output_min <= output_max <= %d",
                function, static_cast<int>(output_min), static_cast<int>(output_max),
                static_cast<int>(range.lo), static_cast<int>(range.hi));
  }
  return LEAKY_OK;
}

}  // namespace leaky::internal

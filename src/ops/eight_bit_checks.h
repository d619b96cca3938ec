// The parameter rules the 8-bit entry points share (ops/eight_bit.cc,
// ops/q8_bias_act.cc).
#ifndef LEAKY_OPS_EIGHT_BIT_CHECKS_H_
#define LEAKY_OPS_EIGHT_BIT_CHECKS_H_

#include <cstdint>

#include "leaky/eight_bit.h"

namespace leaky::internal {

// The caller's leaky_type8 read as an int: a C caller may store any value,
// and loading an out-of-range enum is undefined.
int TypeOf(const leaky_type8& type);

// qu8: 0..255; qs8: -128..127 (type must be one of them).
struct QuantizedRange {
  int32_t lo, hi;
};
QuantizedRange RangeOf(int type);

// lo <= output_min <= output_max <= hi.
[[nodiscard]] leaky_status CheckOutputClamp(const char* function, int32_t output_min,
                                            int32_t output_max, QuantizedRange range);

}  // namespace leaky::internal

#endif  // LEAKY_OPS_EIGHT_BIT_CHECKS_H_

// The steps every 8-bit entry point (leaky/eight_bit.h) takes, shared by
// the families' files (ops/<family>.cc): check the type and parameters,
// describe the call, and run the byte lookup of the op's exact table
// (src/eight_bit), cached per thread.
#ifndef LEAKY_OPS_EIGHT_BIT_RUN_H_
#define LEAKY_OPS_EIGHT_BIT_RUN_H_

#include <bit>
#include <cstdint>
#include <initializer_list>

#include "eight_bit/fp8.h"
#include "eight_bit/tables.h"
#include "leaky/eight_bit.h"
#include "ops/driver.h"

namespace leaky::internal {

// The type, quantization, output clamp and saturate flag of `q`.
leaky_status CheckQ8Params(const char* function, const leaky_q8_params* q);
// Backward is for training: fp8 only.
leaky_status RequireFp8ForBackward(const char* function, leaky_type8 type);
// Checks the parameters, options and scalars of an elementwise 8-bit call.
leaky_status DescribeByteCall(const char* function, const leaky_q8_params* q, size_t n,
                              const leaky_options* options,
                              std::initializer_list<NamedValue> scalars, Call* call);
// y[i] = table[x[i]] and dx from (dy, saved) through the op's backward
// tables, the tables built (or found in the thread's cache) for (q, f).
leaky_status RunByteForward(const Call& call, const leaky_q8_params& q,
                            const eight_bit::RealFunction& f, const void* x, void* y);
leaky_status RunByteBackward(const Call& call, const leaky_q8_params& q,
                             const eight_bit::RealFunction& f, const void* dy, const void* saved,
                             void* dx);
// RReLU in evaluation, forward and backward: LeakyReLU with the slope
// (lower + upper) / 2 in double (halves first only where the sum
// overflows), once lower <= upper is checked.
leaky_status RreluEvalFunction(const Call& call, double lower, double upper,
                               eight_bit::RealFunction* f);
eight_bit::Fp8 Fp8FormatOf(leaky_type8 type);

// A cache key's word for a parameter: a double's bits, an integer's value.
template <class T>
uint64_t KeyBits(T v) {
  if constexpr (sizeof(T) == 8) return std::bit_cast<uint64_t>(v);
  else return static_cast<uint64_t>(static_cast<int64_t>(v));
}

}  // namespace leaky::internal

#endif  // LEAKY_OPS_EIGHT_BIT_RUN_H_

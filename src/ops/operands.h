// Describe, then check (as oneDNN's primitive descriptors): every op states
// its operands - name, pointer, element count and size, role - and
// CheckOperands applies every pointer, size and overlap rule once, before any
// output byte is written. The scalar checks every entry point shares are
// here too.
#ifndef LEAKY_OPS_OPERANDS_H_
#define LEAKY_OPS_OPERANDS_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "leaky/leaky.h"

// Returns from the calling function when a check fails.
#define LEAKY_RETURN_IF_ERROR(expression)                \
  do {                                                   \
    const leaky_status leaky_status_ = expression;       \
    if (leaky_status_ != LEAKY_OK) return leaky_status_; \
  } while (0)

namespace leaky::internal {

enum class Role {
  kInput,      // read elementwise (x, dy, saved)
  kSideInput,  // read-only array beside the data: bias, weight, a dropout mask read back
  kOutput,     // written elementwise; may be identical to an input of its size (in place)
  kSideOutput, // written beside the output (noise, the dropout mask): overlaps nothing
  kReduction,  // written from the others after the main pass (db, dweight): overlaps nothing
};

struct Operand {
  const char* name;
  const void* pointer;
  size_t count;          // elements
  size_t element_bytes;  // 1 for byte arrays such as the bit mask
  Role role;
  bool optional = false; // a null pointer means "absent" (no bias, no noise output)
};

// Null pointers (count > 0, not optional), byte counts that wrap the address
// space, and overlaps: a writer may equal an input of the same size exactly
// (in place, kOutput only) and must not otherwise overlap any operand;
// readers may overlap each other. Errors name the writer first.
leaky_status CheckOperands(const char* function, std::initializer_list<Operand> operands);

// Bytes per element, or 0 with the error recorded.
size_t ElementBytes(const char* function, leaky_dtype dtype, leaky_status* status);

// Fills defaults (NULL -> all defaults, num_threads 0 -> all cores) and
// rejects out-of-range fields.
leaky_status ResolveOptions(const char* function, const leaky_options* options,
                            leaky_options* resolved);

// A scalar argument of an op.
struct NamedValue {
  const char* name;
  double value;
};
leaky_status CheckFinite(const char* function, std::initializer_list<NamedValue> values);

// A call over n elements takes random-stream positions [offset, offset + n):
// they must not run past 2^64 (RReLU, dropout).
leaky_status CheckStreamRange(const char* function, uint64_t offset, size_t n);

// In-place calls keep the automatic policy from streaming: the output lines
// were just read, so they sit in cache and a non-temporal store only evicts
// them (measured in docs/design.md). An explicit choice stands.
leaky_options InPlacePolicy(const leaky_options& options, bool in_place);

}  // namespace leaky::internal

#endif  // LEAKY_OPS_OPERANDS_H_

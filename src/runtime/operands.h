// Describe, then check (as oneDNN's primitive descriptors): every op - on the
// CPU (ops/) and on the OpenCL device (device/) - states its operands (name,
// pointer, element count and size, role) and CheckOperands applies every
// pointer, size and overlap rule once, before any output byte is written.
// The scalar checks and the option resolution every entry point shares are
// here too.
#ifndef LEAKY_RUNTIME_OPERANDS_H_
#define LEAKY_RUNTIME_OPERANDS_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "leaky/leaky.h"
#include "runtime/error.h"  // LEAKY_RETURN_IF_ERROR, for the checks' callers

namespace leaky::internal {

enum class Role {
  kInput,       // read elementwise (x, dy, saved)
  kSideInput,   // read-only array beside the data: bias, weight, a dropout mask read back
  kOutput,      // written elementwise; may be identical to an input of its size (in place)
  kSideOutput,  // written beside the output (noise, the dropout mask): overlaps nothing
  kReduction,   // written from the others after the main pass (db, dweight): overlaps nothing
};

struct Operand {
  const char* name;
  const void* pointer;
  size_t count;          // elements
  size_t element_bytes;  // 1 for byte arrays such as the bit mask
  Role role;
  bool optional = false;  // a null pointer means "absent" (no bias, no noise output)
};

// Null pointers (count > 0, not optional), byte counts that wrap the address
// space, and overlaps: a writer may equal an input of the same size exactly
// (in place, kOutput only) and must not otherwise overlap any operand;
// readers may overlap each other. Errors name the writer first.
[[nodiscard]] leaky_status CheckOperands(const char* function, const Operand* operands,
                                         size_t count);
[[nodiscard]] inline leaky_status CheckOperands(const char* function,
                                                std::initializer_list<Operand> operands) {
  return CheckOperands(function, operands.begin(), operands.size());
}

// Bytes per element, or 0 with the error recorded.
size_t ElementBytes(const char* function, leaky_dtype dtype, leaky_status* status);

// Fills defaults (NULL -> all defaults, num_threads 0 -> all cores) and
// rejects out-of-range fields.
[[nodiscard]] leaky_status ResolveOptions(const char* function, const leaky_options* options,
                                          leaky_options* resolved);

// A scalar argument of an op.
struct NamedValue {
  const char* name;
  double value;
};
[[nodiscard]] leaky_status CheckFinite(const char* function,
                                       std::initializer_list<NamedValue> values);

// A call over n elements takes random-stream positions [offset, offset + n):
// they must not run past 2^64 (RReLU, dropout).
[[nodiscard]] leaky_status CheckStreamRange(const char* function, uint64_t offset, size_t n);

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_OPERANDS_H_

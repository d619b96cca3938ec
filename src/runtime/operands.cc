#include "runtime/operands.h"

#include <cmath>
#include <cstdint>

#include "runtime/error.h"
#include "runtime/cpu_facts.h"

namespace leaky::internal {
namespace {

bool Writes(Role role) {
  return role == Role::kOutput || role == Role::kSideOutput || role == Role::kReduction;
}

// Which operand a message names first: the one written later.
int WriteRank(Role role) {
  switch (role) {
    case Role::kReduction: return 3;
    case Role::kSideOutput: return 2;
    case Role::kOutput: return 1;
    default: return 0;
  }
}

bool Present(const Operand& o) { return o.count > 0 && o.pointer != nullptr; }

size_t Bytes(const Operand& o) { return o.count * o.element_bytes; }

}  // namespace

leaky_status CheckOperands(const char* function, const Operand* operands, size_t count) {
  const Operand* const end = operands + count;
  for (const Operand* it = operands; it != end; ++it) {
    const Operand& o = *it;
    if (o.count == 0) continue;
    if (o.pointer == nullptr) {
      if (o.optional) continue;
      return Fail(LEAKY_ERROR_NULL_POINTER, "%s: %s is null but it has %zu elements", function,
                  o.name, o.count);
    }
    if (o.count > SIZE_MAX / o.element_bytes ||
        reinterpret_cast<uintptr_t>(o.pointer) > UINTPTR_MAX - o.count * o.element_bytes) {
      return Fail(LEAKY_ERROR_SIZE, "%s: %s with %zu elements of %zu bytes wraps the address "
                  "space", function, o.name, o.count, o.element_bytes);
    }
  }
  for (const Operand* a = operands; a != end; ++a) {
    for (const Operand* b = a + 1; b != end; ++b) {
      if (!Writes(a->role) && !Writes(b->role)) continue;
      if (!Present(*a) || !Present(*b)) continue;
      const Operand& writer = WriteRank(a->role) >= WriteRank(b->role) ? *a : *b;
      const Operand& other = &writer == &*a ? *b : *a;
      const auto w = reinterpret_cast<uintptr_t>(writer.pointer);
      const auto o = reinterpret_cast<uintptr_t>(other.pointer);
      if (!(w < o + Bytes(other) && o < w + Bytes(writer))) continue;
      if (writer.role == Role::kOutput && other.role == Role::kInput) {
        if (w == o && Bytes(writer) == Bytes(other)) continue;  // in place
        return Fail(LEAKY_ERROR_OVERLAP, "%s: %s overlaps %s without being identical to it "
                    "(in-place needs the same pointer)", function, writer.name, other.name);
      }
      return Fail(LEAKY_ERROR_OVERLAP, "%s: %s overlaps %s", function, writer.name, other.name);
    }
  }
  return LEAKY_OK;
}

size_t ElementBytes(const char* function, leaky_dtype dtype, leaky_status* status) {
  switch (dtype) {
    case LEAKY_F32: return 4;
    case LEAKY_F64: return 8;
    case LEAKY_F16:
    case LEAKY_BF16: return 2;
  }
  *status = Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: dtype %d is not one of LEAKY_F32, LEAKY_F64, "
                 "LEAKY_F16, LEAKY_BF16", function, static_cast<int>(dtype));
  return 0;
}

leaky_status ResolveOptions(const char* function, const leaky_options* options,
                            leaky_options* resolved) {
  *resolved = options != nullptr ? *options : leaky_options{0, -1, nullptr};
  if (resolved->num_threads < 0 || resolved->num_threads > LEAKY_MAX_THREADS) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: num_threads %d is not in [0, %d] (0 = all cores)", function,
                resolved->num_threads, LEAKY_MAX_THREADS);
  }
  if (resolved->stream_stores < -1 || resolved->stream_stores > 1) {
    return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                "%s: stream_stores %d is not -1 (automatic), 0 (never) or 1 (always)", function,
                resolved->stream_stores);
  }
  const leaky_executor* executor = resolved->executor;
  if (executor != nullptr) {
    if (executor->parallel_for == nullptr && executor->pthreadpool == nullptr) {
      return Fail(LEAKY_ERROR_INVALID_OPTIONS,
                  "%s: the executor has neither parallel_for nor pthreadpool", function);
    }
    if (executor->max_threads < 1 || executor->max_threads > LEAKY_MAX_THREADS) {
      return Fail(LEAKY_ERROR_INVALID_OPTIONS, "%s: executor max_threads %d is not in [1, %d]",
                  function, executor->max_threads, LEAKY_MAX_THREADS);
    }
  }
  if (resolved->num_threads == 0) {
    resolved->num_threads =
        executor != nullptr ? executor->max_threads : static_cast<int>(Cpu().cores);
  }
  return LEAKY_OK;
}

leaky_status CheckFinite(const char* function, std::initializer_list<NamedValue> values) {
  for (const NamedValue& v : values) {
    if (!std::isfinite(v.value)) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: %s = %g is not finite", function, v.name,
                  v.value);
    }
  }
  return LEAKY_OK;
}

leaky_status CheckStreamRange(const char* function, uint64_t offset, size_t n) {
  if (n > UINT64_MAX - offset) {
    return Fail(LEAKY_ERROR_SIZE, "%s: offset + n exceeds 2^64 stream words", function);
  }
  return LEAKY_OK;
}

}  // namespace leaky::internal

// What the 8-bit ops' C entry points (leaky/eight_bit.h, each beside its
// family's float ones in ops/<family>.cc) share: the parameter checks, a
// thread's cache of exact tables (src/eight_bit) and the byte lookups run
// through the shared driver (ops/driver.h), like the float ops; and the
// entry points that are not ops (the parameters' defaults, fp8
// conversions).
#include "ops/eight_bit_run.h"

#include <array>
#include <cmath>

#include "kernels/kernels.h"
#include "ops/eight_bit_checks.h"
#include "runtime/error.h"
#include "runtime/operands.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::Call;
using leaky::internal::Elementwise;
using leaky::internal::Fail;
using leaky::internal::KeyBits;
using leaky::internal::OpDesc;
using leaky::kernels::Params;

namespace {

bool IsQuantized(leaky_type8 type) { return type == LEAKY_QU8 || type == LEAKY_QS8; }

leaky_status CheckQuantization(const char* function, const char* which,
                               const leaky_quantization& q, int32_t lo, int32_t hi) {
  if (!(std::isfinite(q.scale) && q.scale > 0)) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: the %s scale must be finite and > 0 (got %g)",
                function, which, q.scale);
  }
  if (q.zero_point < lo || q.zero_point > hi) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: the %s zero point %d is outside %d..%d",
                function, which, static_cast<int>(q.zero_point), static_cast<int>(lo),
                static_cast<int>(hi));
  }
  return LEAKY_OK;
}

// The tables of a thread's last few calls, by every bit of their inputs: a
// model calls the same layer with the same parameters again and again, and
// building a table (256 exact roundings, about 2 us) would cost as much as
// looking up 64 Ki bytes. XNNPACK builds its parameters once per operator;
// this is the same saving without an operator object.
struct CachedTables {
  std::array<uint64_t, 14> key{};
  bool used = false;
  alignas(64) uint8_t table[256];
  alignas(64) uint8_t pass[256];
  alignas(64) uint8_t keep[256];
};

// The cached tables for (q, f, backward), built on a miss.
const CachedTables& TablesFor(const leaky_q8_params& q, const RealFunction& f, bool backward) {
  constexpr size_t kEntries = 4;
  thread_local std::array<CachedTables, kEntries> cache;
  thread_local size_t next = 0;
  const std::array<uint64_t, 14> key = {
      KeyBits(static_cast<int>(q.type)), KeyBits(q.input.scale), KeyBits(q.input.zero_point),
      KeyBits(q.output.scale), KeyBits(q.output.zero_point), KeyBits(q.output_min), KeyBits(q.output_max),
      KeyBits(q.saturate), KeyBits(static_cast<int>(f.kind)), KeyBits(f.slope), KeyBits(f.alpha),
      KeyBits(f.scale), KeyBits(f.input_scale), KeyBits(backward ? 1 : 0)};
  for (const CachedTables& entry : cache) {
    if (entry.used && entry.key == key) return entry;
  }
  CachedTables& entry = cache[next];
  next = (next + 1) % kEntries;
  entry.key = key;
  entry.used = true;
  if (backward) {
    leaky::eight_bit::BuildBackwardTables(q, f, entry.table, entry.pass, entry.keep);
  } else {
    leaky::eight_bit::BuildForwardTable(q, f, entry.table);
  }
  return entry;
}

leaky_status CheckFp8Conversion(const char* function, leaky_type8 type, size_t n, const void* x,
                                const void* y, size_t x_bytes, size_t y_bytes) {
  if (type != LEAKY_FP8_E4M3 && type != LEAKY_FP8_E5M2) {
    return Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: the type %d is not an fp8 type", function,
                static_cast<int>(type));
  }
  return leaky::internal::CheckOperands(
      function, {{"x", x, n, x_bytes, leaky::internal::Role::kInput},
                 {"y", y, n, y_bytes, leaky::internal::Role::kSideOutput}});
}
}  // namespace

namespace leaky::internal {

// Backward is for training: fp8 only.
leaky_status RequireFp8ForBackward(const char* function, leaky_type8 type) {
  if (!IsQuantized(type)) return LEAKY_OK;
  return Fail(LEAKY_ERROR_UNSUPPORTED,
              "%s: quantized data has no backward (inference only); use an fp8 type", function);
}

leaky_status CheckQ8Params(const char* function, const leaky_q8_params* q) {
  if (q == nullptr) return Fail(LEAKY_ERROR_NULL_POINTER, "%s: the 8-bit parameters are null", function);
  const int type = leaky::internal::TypeOf(q->type);
  switch (type) {
    case LEAKY_QU8:
    case LEAKY_QS8: {
      const leaky::internal::QuantizedRange range = leaky::internal::RangeOf(type);
      LEAKY_RETURN_IF_ERROR(CheckQuantization(function, "input", q->input, range.lo, range.hi));
      LEAKY_RETURN_IF_ERROR(CheckQuantization(function, "output", q->output, range.lo, range.hi));
      return leaky::internal::CheckOutputClamp(function, q->output_min, q->output_max, range);
    }
    case LEAKY_FP8_E4M3:
    case LEAKY_FP8_E5M2:
      if (q->saturate != 0 && q->saturate != 1) {
        return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: saturate must be 0 or 1 (got %d)", function,
                    q->saturate);
      }
      return LEAKY_OK;
  }
  return Fail(LEAKY_ERROR_INVALID_DTYPE, "%s: the 8-bit type %d is not one of leaky_type8",
              function, type);
}

// Checks the parameters, options and scalars of an elementwise 8-bit call.
leaky_status DescribeByteCall(const char* function, const leaky_q8_params* q, size_t n,
                              const leaky_options* options,
                              std::initializer_list<leaky::internal::NamedValue> scalars,
                              Call* call) {
  LEAKY_RETURN_IF_ERROR(CheckQ8Params(function, q));
  // The float ops' description (options, finite scalars); its dtype indexes
  // only the float kernels, byte kernels are per table.
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::DescribeCall(function, LEAKY_F32, n, options, scalars, call));
  call->element_bytes = 1;
  return LEAKY_OK;
}

leaky_status RunByteForward(const Call& call, const leaky_q8_params& q, const RealFunction& f,
                        const void* x, void* y) {
  OpDesc op{call, leaky::kernels::Dispatched().byte_lookup, Params{}};
  op.x = Elementwise(call, "x", x);
  op.dst = Elementwise(call, "y", y);
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  if (call.n == 0) return LEAKY_OK;
  op.params.op.byte_table = {TablesFor(q, f, /*backward=*/false).table, nullptr, nullptr};
  return leaky::internal::RunOp(op);
}

leaky_status RunByteBackward(const Call& call, const leaky_q8_params& q, const RealFunction& f,
                         const void* dy, const void* saved, void* dx) {
  LEAKY_RETURN_IF_ERROR(RequireFp8ForBackward(call.function, q.type));
  OpDesc op{call, leaky::kernels::Dispatched().byte_select, Params{}};
  op.dy = Elementwise(call, "dy", dy);
  op.x = Elementwise(call, "saved", saved);
  op.dst = Elementwise(call, "dx", dx);
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  if (call.n == 0) return LEAKY_OK;
  const CachedTables& tables = TablesFor(q, f, /*backward=*/true);
  op.params.op.byte_table = {tables.table, tables.pass,
                             leaky::eight_bit::SaturatesPassedValues(q) ? tables.keep : nullptr};
  return leaky::internal::RunOp(op);
}

// RReLU in evaluation, forward and backward: LeakyReLU with the slope
// (lower + upper) / 2 in double (halves first only where the sum
// overflows), once lower <= upper is checked.
leaky_status RreluEvalFunction(const Call& call, double lower, double upper, RealFunction* f) {
  if (lower > upper) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: lower (%g) must be <= upper (%g)",
                call.function, lower, upper);
  }
  const double sum = lower + upper;
  f->kind = RealFunction::kLeakyRelu;
  f->slope = std::isfinite(sum) ? sum / 2 : lower / 2 + upper / 2;
  return LEAKY_OK;
}

leaky::eight_bit::Fp8 Fp8FormatOf(leaky_type8 type) {
  return type == LEAKY_FP8_E4M3 ? leaky::eight_bit::Fp8::kE4M3 : leaky::eight_bit::Fp8::kE5M2;
}

}  // namespace leaky::internal

extern "C" leaky_q8_params leaky_q8_params_init(leaky_type8 type) {
  leaky_q8_params q{};
  q.type = type;
  q.input = {1.0, 0};
  q.output = {1.0, 0};
  q.output_min = type == LEAKY_QS8 ? -128 : 0;
  q.output_max = type == LEAKY_QS8 ? 127 : 255;
  q.saturate = 1;
  return q;
}

extern "C" leaky_status leaky_fp8_from_f32(leaky_type8 type, size_t n, const float* x, uint8_t* y,
                                           int saturate) {
  const char* function = "leaky_fp8_from_f32";
  LEAKY_RETURN_IF_ERROR(CheckFp8Conversion(function, type, n, x, y, sizeof(float), 1));
  if (saturate != 0 && saturate != 1) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: saturate must be 0 or 1 (got %d)", function,
                saturate);
  }
  for (size_t i = 0; i < n; ++i) y[i] = leaky::eight_bit::EncodeFp8(leaky::internal::Fp8FormatOf(type), x[i], saturate != 0);
  return LEAKY_OK;
}

extern "C" leaky_status leaky_fp8_to_f32(leaky_type8 type, size_t n, const uint8_t* x, float* y) {
  const char* function = "leaky_fp8_to_f32";
  LEAKY_RETURN_IF_ERROR(CheckFp8Conversion(function, type, n, x, y, 1, sizeof(float)));
  for (size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(leaky::eight_bit::DecodeFp8(leaky::internal::Fp8FormatOf(type), x[i]));
  }
  return LEAKY_OK;
}

// The 8-bit ops' C entry points (leaky/eight_bit.h): each checks its type
// and parameters, builds its exact table (src/eight_bit) and runs the byte
// lookup through the shared driver (ops/driver.h), like the float ops.
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "eight_bit/fp8.h"
#include "eight_bit/tables.h"
#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "ops/channels.h"
#include "ops/driver.h"
#include "ops/eight_bit_checks.h"
#include "runtime/error.h"
#include "runtime/operands.h"
#include "runtime/parallel.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::Call;
using leaky::internal::Elementwise;
using leaky::internal::Fail;
using leaky::internal::OpDesc;
using leaky::kernels::Params;

namespace {

bool IsQuantized(leaky_type8 type) { return type == LEAKY_QU8 || type == LEAKY_QS8; }

// Backward is for training: fp8 only.
leaky_status RequireFp8ForBackward(const char* function, leaky_type8 type) {
  if (!IsQuantized(type)) return LEAKY_OK;
  return Fail(LEAKY_ERROR_UNSUPPORTED,
              "%s: quantized data has no backward (inference only); use an fp8 type", function);
}

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

leaky_status CheckParams(const char* function, const leaky_q8_params* q) {
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
  LEAKY_RETURN_IF_ERROR(CheckParams(function, q));
  // The float ops' description (options, finite scalars); its dtype indexes
  // only the float kernels, byte kernels are per table.
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::DescribeCall(function, LEAKY_F32, n, options, scalars, call));
  call->element_bytes = 1;
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

template <class T>
uint64_t Bits(T v) {
  if constexpr (sizeof(T) == 8) return std::bit_cast<uint64_t>(v);
  else return static_cast<uint64_t>(static_cast<int64_t>(v));
}

// The cached tables for (q, f, backward), built on a miss.
const CachedTables& TablesFor(const leaky_q8_params& q, const RealFunction& f, bool backward) {
  constexpr size_t kEntries = 4;
  thread_local std::array<CachedTables, kEntries> cache;
  thread_local size_t next = 0;
  const std::array<uint64_t, 14> key = {
      Bits(static_cast<int>(q.type)), Bits(q.input.scale), Bits(q.input.zero_point),
      Bits(q.output.scale), Bits(q.output.zero_point), Bits(q.output_min), Bits(q.output_max),
      Bits(q.saturate), Bits(static_cast<int>(f.kind)), Bits(f.slope), Bits(f.alpha),
      Bits(f.scale), Bits(f.input_scale), Bits(backward ? 1 : 0)};
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

leaky_status RunForward(const Call& call, const leaky_q8_params& q, const RealFunction& f,
                        const void* x, void* y) {
  OpDesc op{call, leaky::kernels::Dispatched().byte_lookup, Params{}};
  op.x = Elementwise(call, "x", x);
  op.dst = Elementwise(call, "y", y);
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  if (call.n == 0) return LEAKY_OK;
  op.params.op.byte_table = {TablesFor(q, f, /*backward=*/false).table, nullptr, nullptr};
  return leaky::internal::RunOp(op);
}

leaky_status RunBackward(const Call& call, const leaky_q8_params& q, const RealFunction& f,
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

leaky::eight_bit::Fp8 FormatOf(leaky_type8 type) {
  return type == LEAKY_FP8_E4M3 ? leaky::eight_bit::Fp8::kE4M3 : leaky::eight_bit::Fp8::kE5M2;
}

}  // namespace

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

extern "C" leaky_status leaky_q8_leaky_relu_forward(const leaky_q8_params* q, size_t n,
                                                    const void* x, void* y, double negative_slope,
                                                    const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_leaky_relu_forward", q, n, opts,
                                         {{"negative_slope", negative_slope}}, &call));
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  f.slope = negative_slope;
  return RunForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_plain_relu_forward(const leaky_q8_params* q, size_t n,
                                                    const void* x, void* y,
                                                    const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_plain_relu_forward", q, n, opts, {}, &call));
  RealFunction f;
  f.kind = RealFunction::kRelu;
  return RunForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_rrelu_eval_forward(const leaky_q8_params* q, size_t n,
                                                    const void* x, void* y, double lower,
                                                    double upper, const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_rrelu_eval_forward", q, n, opts,
                                         {{"lower", lower}, {"upper", upper}}, &call));
  RealFunction f;
  LEAKY_RETURN_IF_ERROR(RreluEvalFunction(call, lower, upper, &f));
  return RunForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_elu_forward(const leaky_q8_params* q, size_t n, const void* x,
                                             void* y, double alpha, double scale,
                                             double input_scale, const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall(
      "leaky_q8_elu_forward", q, n, opts,
      {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}}, &call));
  RealFunction f;
  f.kind = RealFunction::kElu;
  f.alpha = alpha;
  f.scale = scale;
  f.input_scale = input_scale;
  return RunForward(call, *q, f, x, y);
}

extern "C" leaky_status leaky_q8_prelu_forward(const leaky_q8_params* q, size_t outer,
                                               size_t channels, size_t inner, const void* x,
                                               const float* weight, void* y,
                                               const leaky_options* opts) {
  const char* function = "leaky_q8_prelu_forward";
  LEAKY_RETURN_IF_ERROR(CheckParams(function, q));
  leaky::internal::ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::DescribeChannelCall(function, LEAKY_F32, outer, channels, inner, opts, &c));
  c.call.element_bytes = 1;  // the layout checks above do not depend on it
  if (c.call.n == 0) return LEAKY_OK;
  if (channels > std::numeric_limits<size_t>::max() / 256) {
    return Fail(LEAKY_ERROR_SIZE, "%s: %zu channels of 256-byte tables overflow", function, channels);
  }
  OpDesc op{c.call, leaky::kernels::Dispatched().byte_lookup_channels, c.params};
  op.side_input = {"weight", weight, channels, sizeof(float)};
  op.x = Elementwise(c.call, "x", x);
  op.dst = Elementwise(c.call, "y", y);
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  for (size_t k = 0; k < channels; ++k) {
    if (!std::isfinite(weight[k])) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: weight[%zu] is not finite", function, k);
    }
  }
  std::vector<uint8_t> tables(channels * 256);
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  for (size_t k = 0; k < channels; ++k) {
    f.slope = weight[k];
    leaky::eight_bit::BuildForwardTable(*q, f, tables.data() + 256 * k);
  }
  op.side_input.pointer = tables.data();  // the kernel reads the tables, not the weights
  return leaky::internal::RunOp(op);
}

extern "C" leaky_status leaky_q8_leaky_relu_backward(const leaky_q8_params* q, size_t n,
                                                     const void* dy, const void* saved,
                                                     int saved_is_result, void* dx,
                                                     double negative_slope,
                                                     const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_leaky_relu_backward", q, n, opts,
                                         {{"negative_slope", negative_slope}}, &call));
  if (saved_is_result && negative_slope < 0) {
    return Fail(LEAKY_ERROR_UNSUPPORTED,
                "%s: backward from the forward result needs negative_slope >= 0 (got %g)",
                call.function, negative_slope);
  }
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  f.slope = negative_slope;
  return RunBackward(call, *q, f, dy, saved, dx);
}

extern "C" leaky_status leaky_q8_plain_relu_backward(const leaky_q8_params* q, size_t n,
                                                     const void* dy, const void* saved, void* dx,
                                                     const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_plain_relu_backward", q, n, opts, {}, &call));
  RealFunction f;
  f.kind = RealFunction::kRelu;
  return RunBackward(call, *q, f, dy, saved, dx);
}

extern "C" leaky_status leaky_q8_rrelu_eval_backward(const leaky_q8_params* q, size_t n,
                                                     const void* dy, const void* x, void* dx,
                                                     double lower, double upper,
                                                     const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall("leaky_q8_rrelu_eval_backward", q, n, opts,
                                         {{"lower", lower}, {"upper", upper}}, &call));
  RealFunction f;
  LEAKY_RETURN_IF_ERROR(RreluEvalFunction(call, lower, upper, &f));
  return RunBackward(call, *q, f, dy, x, dx);
}

namespace {

// The 64 KiB pair tables of ELU's backward, cached per thread as above:
// building one rounds 32768 products (2 to 14 ms measured on a busy
// machine, docs/semantics.md), a training loop's calls reuse it.
struct CachedPairTable {
  std::array<uint64_t, 6> key{};
  std::unique_ptr<uint8_t[]> table;
};

const uint8_t* EluPairTableFor(const leaky_q8_params& q, const RealFunction& f,
                               bool saved_is_result) {
  constexpr size_t kEntries = 2;
  thread_local std::array<CachedPairTable, kEntries> cache;
  thread_local size_t next = 0;
  const std::array<uint64_t, 6> key = {Bits(static_cast<int>(q.type)), Bits(q.saturate),
                                       Bits(f.alpha), Bits(f.scale), Bits(f.input_scale),
                                       Bits(saved_is_result ? 1 : 0)};
  for (const CachedPairTable& entry : cache) {
    if (entry.table != nullptr && entry.key == key) return entry.table.get();
  }
  CachedPairTable& entry = cache[next];
  next = (next + 1) % kEntries;
  if (entry.table == nullptr) entry.table.reset(new uint8_t[leaky::eight_bit::kPairTableSize]);
  entry.key = key;
  leaky::eight_bit::BuildEluBackwardTable(q, f, saved_is_result, entry.table.get());
  return entry.table.get();
}

}  // namespace

extern "C" leaky_status leaky_q8_elu_backward(const leaky_q8_params* q, size_t n, const void* dy,
                                              const void* saved, int saved_is_result, void* dx,
                                              double alpha, double scale, double input_scale,
                                              const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(DescribeByteCall(
      "leaky_q8_elu_backward", q, n, opts,
      {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}}, &call));
  LEAKY_RETURN_IF_ERROR(RequireFp8ForBackward(call.function, q->type));
  if (saved_is_result && alpha < 0) {
    return Fail(LEAKY_ERROR_UNSUPPORTED,
                "%s: backward from the forward result needs alpha >= 0 (got %g)", call.function,
                alpha);
  }
  OpDesc op{call, leaky::kernels::Dispatched().byte_pair_lookup, Params{}};
  op.dy = Elementwise(call, "dy", dy);
  op.x = Elementwise(call, "saved", saved);
  op.dst = Elementwise(call, "dx", dx);
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  if (call.n == 0) return LEAKY_OK;
  RealFunction f;
  f.kind = RealFunction::kElu;
  f.alpha = alpha;
  f.scale = scale;
  f.input_scale = input_scale;
  op.params.op.byte_table = {EluPairTableFor(*q, f, saved_is_result != 0), nullptr, nullptr};
  return leaky::internal::RunOp(op);
}

extern "C" leaky_status leaky_q8_prelu_backward(const leaky_q8_params* q, size_t outer,
                                                size_t channels, size_t inner, const void* dy,
                                                const void* x, const float* weight, void* dx,
                                                float* dweight, const leaky_options* opts) {
  const char* function = "leaky_q8_prelu_backward";
  LEAKY_RETURN_IF_ERROR(CheckParams(function, q));
  leaky::internal::ChannelCall c;
  LEAKY_RETURN_IF_ERROR(
      leaky::internal::DescribeChannelCall(function, LEAKY_F32, outer, channels, inner, opts, &c));
  c.call.element_bytes = 1;  // the layout checks above do not depend on it
  LEAKY_RETURN_IF_ERROR(RequireFp8ForBackward(function, q->type));
  if (channels > std::numeric_limits<size_t>::max() / 256) {
    return Fail(LEAKY_ERROR_SIZE, "%s: %zu channels of 256-byte tables overflow", function, channels);
  }
  const size_t n = c.call.n;
  OpDesc op{c.call, leaky::kernels::Dispatched().byte_select_channels, c.params};
  op.reduction = {"dweight", dweight, channels, sizeof(float), /*optional=*/true};
  if (n > 0) {
    op.side_input = {"weight", weight, channels, sizeof(float)};
    op.dy = Elementwise(c.call, "dy", dy);
    op.x = Elementwise(c.call, "x", x);
    op.dst = Elementwise(c.call, "dx", dx);
  }
  LEAKY_RETURN_IF_ERROR(leaky::internal::CheckOp(op));
  if (n == 0) {
    if (dweight != nullptr && channels > 0) std::memset(dweight, 0, channels * sizeof(float));
    return LEAKY_OK;
  }
  for (size_t k = 0; k < channels; ++k) {
    if (!std::isfinite(weight[k])) {
      return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: weight[%zu] is not finite", function, k);
    }
  }
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(leaky::internal::PlanOp(op, &tiling));
  // dweight reads dy and x, which dx may overwrite in place: reduce first.
  // One task per channel; each sum is exact, so any split gives its bits.
  if (dweight != nullptr) {
    struct Job {
      leaky::eight_bit::Fp8 format;
      const uint8_t *dy, *x;
      float* dweight;
      size_t outer, channels, inner;
    } job{FormatOf(q->type), static_cast<const uint8_t*>(dy), static_cast<const uint8_t*>(x),
          dweight, outer, channels, inner};
    leaky::internal::ParallelFor(
        channels, c.call.options.num_threads,
        [](void* context, size_t channel) {
          const Job& j = *static_cast<const Job*>(context);
          j.dweight[channel] = leaky::eight_bit::PreluWeightGradientFp8(
              j.format, j.dy, j.x, j.outer, j.channels, j.inner, channel);
        },
        &job, c.call.options.executor);
  }
  // dx: LeakyReLU's backward tables with each channel's weight as the slope
  // (pass and keep do not depend on it).
  std::vector<uint8_t> tables(channels * 256);
  alignas(64) uint8_t pass[256], keep[256];
  RealFunction f;
  f.kind = RealFunction::kLeakyRelu;
  for (size_t k = 0; k < channels; ++k) {
    f.slope = weight[k];
    leaky::eight_bit::BuildBackwardTables(*q, f, tables.data() + 256 * k, pass, keep);
  }
  op.side_input.pointer = tables.data();  // the kernel reads the tables, not the weights
  op.params.op.byte_table = {nullptr, pass,
                             leaky::eight_bit::SaturatesPassedValues(*q) ? keep : nullptr};
  leaky::internal::RunPlannedOp(op, tiling);
  return LEAKY_OK;
}

namespace {
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

extern "C" leaky_status leaky_fp8_from_f32(leaky_type8 type, size_t n, const float* x, uint8_t* y,
                                           int saturate) {
  const char* function = "leaky_fp8_from_f32";
  LEAKY_RETURN_IF_ERROR(CheckFp8Conversion(function, type, n, x, y, sizeof(float), 1));
  if (saturate != 0 && saturate != 1) {
    return Fail(LEAKY_ERROR_INVALID_PARAMETER, "%s: saturate must be 0 or 1 (got %d)", function,
                saturate);
  }
  for (size_t i = 0; i < n; ++i) y[i] = leaky::eight_bit::EncodeFp8(FormatOf(type), x[i], saturate != 0);
  return LEAKY_OK;
}

extern "C" leaky_status leaky_fp8_to_f32(leaky_type8 type, size_t n, const uint8_t* x, float* y) {
  const char* function = "leaky_fp8_to_f32";
  LEAKY_RETURN_IF_ERROR(CheckFp8Conversion(function, type, n, x, y, 1, sizeof(float)));
  for (size_t i = 0; i < n; ++i) {
    y[i] = static_cast<float>(leaky::eight_bit::DecodeFp8(FormatOf(type), x[i]));
  }
  return LEAKY_OK;
}

// ELU's C entry points on the shared driver; then its 8-bit ones
// (leaky/eight_bit.h), through ops/eight_bit_run.h.
#include <array>
#include <memory>

#include "kernels/kernels.h"
#include "leaky/eight_bit.h"
#include "leaky/leaky.h"
#include "ops/driver.h"
#include "ops/eight_bit_run.h"
#include "runtime/error.h"

using leaky::eight_bit::RealFunction;
using leaky::internal::Call;
using leaky::internal::DescribeByteCall;
using leaky::internal::DescribeCall;
using leaky::internal::Elementwise;
using leaky::internal::Fail;
using leaky::internal::KeyBits;
using leaky::internal::OpDesc;
using leaky::internal::RequireFp8ForBackward;
using leaky::internal::RunByteForward;
using leaky::kernels::KernelTable;
using leaky::kernels::Params;

namespace {
Params EluParams(double alpha, double scale, double input_scale) {
  Params params;
  params.op.elu = {alpha, scale, input_scale};
  return params;
}

leaky_status DescribeElu(const char* function, leaky_dtype dtype, size_t n,
                         const leaky_options* opts, double alpha, double scale,
                         double input_scale, Call* call) {
  return DescribeCall(function, dtype, n, opts,
                      {{"alpha", alpha}, {"scale", scale}, {"input_scale", input_scale}}, call);
}
}  // namespace

extern "C" leaky_status leaky_elu_forward(leaky_dtype dtype, size_t n, const void* x, void* y,
                                          double alpha, double scale, double input_scale,
                                          const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(
      DescribeElu("leaky_elu_forward", dtype, n, opts, alpha, scale, input_scale, &call));
  leaky::internal::KeepStoresCached(&call.options);  // expm1: compute-bound
  return RunUnaryOp(call, x, y, &KernelTable::elu_forward, EluParams(alpha, scale, input_scale));
}

extern "C" leaky_status leaky_elu_backward(leaky_dtype dtype, size_t n, const void* dy,
                                           const void* saved, int saved_is_result, void* dx,
                                           double alpha, double scale, double input_scale,
                                           const leaky_options* opts) {
  Call call;
  LEAKY_RETURN_IF_ERROR(
      DescribeElu("leaky_elu_backward", dtype, n, opts, alpha, scale, input_scale, &call));
  // With alpha < 0 the negative side's results are positive: the result no
  // longer tells which side the input was on (PyTorch's rule too).
  if (saved_is_result && alpha < 0) {
    return leaky::internal::Fail(
        LEAKY_ERROR_UNSUPPORTED,
        "%s: backward from the forward result needs alpha >= 0 (got %g): the input's side "
        "cannot be recovered; save the input instead",
        call.function, alpha);
  }
  // From the input, an exponential again; from the result, a multiply-add.
  if (!saved_is_result) leaky::internal::KeepStoresCached(&call.options);
  return RunBinaryOp(call, dy, saved, dx,
                     saved_is_result ? &KernelTable::elu_backward_from_result
                                     : &KernelTable::elu_backward,
                     EluParams(alpha, scale, input_scale));
}

// 8-bit data (leaky/eight_bit.h): forward through the exact table of the
// real ELU, backward through a table of (dy, saved) pairs.
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
  return RunByteForward(call, *q, f, x, y);
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
  const std::array<uint64_t, 6> key = {KeyBits(static_cast<int>(q.type)), KeyBits(q.saturate),
                                       KeyBits(f.alpha), KeyBits(f.scale), KeyBits(f.input_scale),
                                       KeyBits(saved_is_result ? 1 : 0)};
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

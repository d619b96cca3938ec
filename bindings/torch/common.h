// What the `leaky` PyTorch operators share: dtype and device checks, the
// thread count, layouts, the elementwise CPU kernels' tensor plumbing, and
// dispatcher handles. Internal to the binding.
#ifndef LEAKY_BINDINGS_TORCH_COMMON_H_
#define LEAKY_BINDINGS_TORCH_COMMON_H_

#include <ATen/ATen.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/Parallel.h>
#include <ATen/core/grad_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <cmath>
#include <initializer_list>

#include "leaky/leaky.h"

namespace leaky::torch_ops {

inline leaky_dtype DtypeOf(const at::Tensor& t, const char* op) {
  switch (t.scalar_type()) {
    case at::kFloat: return LEAKY_F32;
    case at::kDouble: return LEAKY_F64;
    case at::kHalf: return LEAKY_F16;
    case at::kBFloat16: return LEAKY_BF16;
    default:
      TORCH_CHECK(false, "leaky::", op, ": dtype ", t.scalar_type(),
                  " is not supported (float32, float64, float16, bfloat16)");
  }
}

inline void CheckCpu(const at::Tensor& t, const char* op, const char* name) {
  TORCH_CHECK(t.device().is_cpu(), "leaky::", op, ": ", name, " is on ", t.device(),
              "; only CPU tensors are supported");
}

// The ops run on PyTorch's intra-op threads (at::parallel_for), never on
// the library's own pool: they follow torch.set_num_threads, and a PyTorch
// process gains no second pool competing with PyTorch's threads.
inline void TorchParallelFor(void*, size_t task_count, leaky_task task, void* task_context) {
  at::parallel_for(0, static_cast<int64_t>(task_count), 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) task(task_context, static_cast<size_t>(i));
  });
}

inline leaky_options Options() {
  // max_threads is read per call: torch.set_num_threads may change it.
  thread_local leaky_executor executor{&TorchParallelFor, nullptr, nullptr, 1};
  executor.max_threads = at::get_num_threads();
  return leaky_options{executor.max_threads, -1, &executor};
}

inline void Check(leaky_status status, const char* op) {
  TORCH_CHECK(status == LEAKY_OK, "leaky::", op, ": ", leaky_last_error());
}

// The tensor itself when its elements fill a dense block, else a packed copy.
inline at::Tensor Dense(const at::Tensor& t) {
  return t.is_non_overlapping_and_dense() ? t : t.contiguous();
}

// `t` laid out exactly as the dense `like` (same strides), so that elements
// pair up in memory order: itself when it already is, else a copy.
inline at::Tensor SameLayoutAs(const at::Tensor& t, const at::Tensor& like) {
  if (t.is_non_overlapping_and_dense() && t.strides() == like.strides()) return t;
  return at::empty_like(like).copy_(t);
}

// x as [outer, channels, inner] around axis `dim`. A contiguous tensor maps
// directly; a 4-D channels-last tensor with dim = 1 is [N*H*W, C, 1] in
// memory; anything else is packed first. Ops that depend on the element
// order (random streams, masks) see the same order for the same input.
struct ChannelView {
  at::Tensor x;  // the tensor whose memory is processed
  size_t outer, channels, inner;
};

inline ChannelView ViewAroundChannels(const at::Tensor& self, int64_t dim, const char* op) {
  const int64_t rank = self.dim();
  TORCH_CHECK(rank >= 1, "leaky::", op, ": x must have at least one dimension");
  const int64_t axis = dim < 0 ? dim + rank : dim;
  TORCH_CHECK(axis >= 0 && axis < rank, "leaky::", op, ": dim ", dim, " is out of range for a ",
              rank, "-D tensor");
  const auto sizes = self.sizes();
  size_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= static_cast<size_t>(sizes[i]);
  for (int64_t i = axis + 1; i < rank; ++i) inner *= static_cast<size_t>(sizes[i]);
  const auto channels = static_cast<size_t>(sizes[axis]);
  if (rank == 4 && axis == 1 && !self.is_contiguous() &&
      self.is_contiguous(at::MemoryFormat::ChannelsLast)) {
    return {self, outer * inner, channels, 1};
  }
  return {self.contiguous(), outer, channels, inner};
}

// A per-channel parameter (bias, PReLU weight): 1-D, `channels` long, x's dtype.
inline at::Tensor CheckedPerChannel(const at::Tensor& t, size_t channels, const at::Tensor& x,
                                    const char* op, const char* name) {
  CheckCpu(t, op, name);
  TORCH_CHECK(t.dim() == 1 && static_cast<size_t>(t.size(0)) == channels, "leaky::", op, ": ",
              name, " must have shape [", channels, "], got ", t.sizes());
  TORCH_CHECK(t.scalar_type() == x.scalar_type(), "leaky::", op, ": ", name, " is ",
              t.scalar_type(), " but x is ", x.scalar_type());
  return t.contiguous();
}

// True when autograd must record a call: grad mode is on and an input
// requires grad. Otherwise the Autograd kernels go straight below the
// autograd key: a custom Function allocates a graph node on every call,
// which shows at 4 Ki elements.
inline bool Records(std::initializer_list<const at::Tensor*> inputs) {
  if (!at::GradMode::is_enabled()) return false;
  for (const at::Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

// An Autograd kernel's body: `direct()` below the autograd key when nothing
// is recorded (see Records), else the custom Function with `args`.
template <class Function, class Direct, class... Args>
auto ApplyOrCall(std::initializer_list<const at::Tensor*> inputs, Direct direct, Args&&... args) {
  if (!Records(inputs)) {
    at::AutoDispatchBelowADInplaceOrView below_autograd;
    return direct();
  }
  return Function::apply(std::forward<Args>(args)...);
}

template <class Signature>
c10::TypedOperatorHandle<Signature> Find(const char* name) {
  return c10::Dispatcher::singleton().findSchemaOrThrow(name, "").typed<Signature>();
}

// grad_output and self (or the saved result) agree in shape and dtype.
inline leaky_dtype CheckPair(const at::Tensor& grad_output, const at::Tensor& self,
                             const char* op) {
  TORCH_CHECK(grad_output.sizes() == self.sizes(), "leaky::", op, ": grad_output of shape ",
              grad_output.sizes(), " does not match self of shape ", self.sizes());
  TORCH_CHECK(grad_output.scalar_type() == self.scalar_type(), "leaky::", op,
              ": grad_output is ", grad_output.scalar_type(), " but self is ",
              self.scalar_type());
  return DtypeOf(self, op);
}

// Meta kernels (tensors on device "meta"): shapes and dtypes only, after the
// same checks of them as the CPU kernels.
inline at::Tensor UnaryMeta(const at::Tensor& self, const char* op) {
  DtypeOf(self, op);
  return at::empty_like(self);
}
inline at::Tensor BinaryMeta(const at::Tensor& grad_output, const at::Tensor& self,
                             const char* op) {
  CheckPair(grad_output, self, op);
  return at::empty_like(self);
}

// y = op(x) for any layout; `run(dtype, n, src, dst, options)` calls the C API.
template <class Run>
at::Tensor UnaryCpu(const at::Tensor& self, const char* op, Run run) {
  CheckCpu(self, op, "self");
  const leaky_dtype dtype = DtypeOf(self, op);
  const at::Tensor x = Dense(self);
  at::Tensor y = at::empty_like(x);  // same strides as the dense x
  const leaky_options options = Options();
  Check(run(dtype, static_cast<size_t>(x.numel()), x.data_ptr(), y.data_ptr(), &options), op);
  return y;
}

template <class Run>
at::Tensor& UnaryInplaceCpu(at::Tensor& self, const char* op, Run run) {
  CheckCpu(self, op, "self");
  const leaky_dtype dtype = DtypeOf(self, op);
  at::assert_no_internal_overlap(self);
  if (self.is_non_overlapping_and_dense()) {
    const leaky_options options = Options();
    Check(run(dtype, static_cast<size_t>(self.numel()), self.data_ptr(), self.data_ptr(),
              &options),
          op);
  } else {
    self.copy_(UnaryCpu(self, op, run));
  }
  return self;
}

// dx = op(dy, saved): both in one layout (dense with equal strides, or
// packed copies), so elements pair up in memory order.
template <class Run>
at::Tensor BinaryCpu(const at::Tensor& grad_output, const at::Tensor& self, const char* op,
                     Run run) {
  CheckCpu(grad_output, op, "grad_output");
  CheckCpu(self, op, "self");
  const leaky_dtype dtype = CheckPair(grad_output, self, op);
  at::Tensor saved = Dense(self);
  at::Tensor dy = grad_output;
  if (!dy.is_non_overlapping_and_dense() || dy.strides() != saved.strides()) {
    saved = self.contiguous();
    dy = grad_output.contiguous();
  }
  at::Tensor dx = at::empty_like(saved);
  const leaky_options options = Options();
  Check(run(dtype, static_cast<size_t>(saved.numel()), dy.data_ptr(), saved.data_ptr(),
            dx.data_ptr(), &options),
        op);
  return dx;
}

}  // namespace leaky::torch_ops

#endif  // LEAKY_BINDINGS_TORCH_COMMON_H_

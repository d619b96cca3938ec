// The `leaky` operator library for PyTorch: schemas (TORCH_LIBRARY), CPU
// kernels that call the core C API, and Autograd kernels whose backward is
// itself a `leaky` operator with its own derivative, so that gradients of
// gradients (the R1 penalty of GAN training) work to any order.
//
// Layouts: an elementwise op does not care about element order, so any
// tensor whose elements fill a dense block of memory (contiguous,
// channels-last, permuted) is processed in place in memory order, and the
// result has the input's strides. Tensors with gaps or overlaps (slices with
// a step, expanded views) are first copied with .contiguous(): documented,
// never a silent wrong answer.
//
// One file per op family ({leaky_relu,relu,elu,prelu,rrelu,bias_act}_ops.cc)
// declares its schemas (TORCH_LIBRARY_FRAGMENT) and registers its CPU and
// Autograd kernels; common.h holds the shared tensor plumbing. This file
// opens the library.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include <string>

#include "leaky/leaky.h"

namespace leaky::torch_ops {
namespace {
// Threads of the core library's own pool in this copy of it (the binding
// carries the core statically): 0, since every op runs on PyTorch's threads.
int64_t PoolThreads() { return leaky_pool_threads(); }

// A quantized tensor given to a float op: one line that names the op and
// the quantized ops, not the dispatcher's list of backends (40 lines).
void RefuseQuantized(const c10::OperatorHandle& op, torch::jit::Stack*) {
  TORCH_CHECK(false, op.schema().name(),
              ": expected a float tensor, got a quantized one (torch.quint8/qint8 take "
              "leaky.functional.quantized_leaky_relu, quantized_relu or quantized_elu)");
}

// Every float op of the library (the *_ops.cc files' schemas).
constexpr const char* kFloatOps[] = {
    "leaky_relu", "leaky_relu_", "leaky_relu_backward", "relu", "relu_", "relu_backward",
    "elu", "elu_", "elu_backward", "prelu", "prelu_backward", "rrelu", "rrelu_with_noise",
    "rrelu_backward", "bias_act", "bias_act_backward", "bias_act_dropout"};
}  // namespace

TORCH_LIBRARY(leaky, m) {
  m.def("pool_threads() -> int", &PoolThreads);
}

TORCH_LIBRARY_IMPL(leaky, QuantizedCPU, m) {
  for (const char* op : kFloatOps) {
    m.impl(op, torch::CppFunction::makeFromBoxedFunction<&RefuseQuantized>());
  }
}

}  // namespace leaky::torch_ops

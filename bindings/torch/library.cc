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
#include <torch/library.h>

#include "leaky/leaky.h"

namespace leaky::torch_ops {
namespace {
// Threads of the core library's own pool in this copy of it (the binding
// carries the core statically): 0, since every op runs on PyTorch's threads.
int64_t PoolThreads() { return leaky_pool_threads(); }
}  // namespace

TORCH_LIBRARY(leaky, m) {
  m.def("pool_threads() -> int", &PoolThreads);
}

}  // namespace leaky::torch_ops

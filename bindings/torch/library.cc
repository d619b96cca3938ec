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

#include "output_cache.h"

namespace leaky::torch_ops {
namespace {
void EmptyCache() { OutputCache::Get().Clear(); }
}  // namespace

TORCH_LIBRARY(leaky, m) {
  // Returns the idle blocks of the output cache (output_cache.h) to the system.
  m.def("empty_cache() -> ()", &EmptyCache);
}

}  // namespace leaky::torch_ops

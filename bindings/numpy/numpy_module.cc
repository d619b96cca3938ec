// leaky._native: NumPy entry points over the C API, without PyTorch.
// float32, float64 and float16 arrays map to their dtypes; uint16 arrays are
// bfloat16 bit patterns (NumPy has no bfloat16). The GIL is released while
// the library runs.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <optional>
#include <string>

#include "leaky/leaky.h"
#include "numpy_common.h"

namespace py = pybind11;

void AddOps(py::module_& m);       // ops_module.cc
void AddEightBit(py::module_& m);  // eight_bit_module.cc
#ifdef LEAKY_WITH_TOOLKIT
void AddToolkit(py::module_& m);  // toolkit_module.cc
#endif
#ifdef LEAKY_WITH_OPENCL
void AddDevice(py::module_& m);  // device_module.cc
#endif

PYBIND11_MODULE(_native, m) {
  m.doc() = "leaky's NumPy entry points (see leaky.numpy)";
  AddOps(m);
  AddEightBit(m);
#ifdef LEAKY_WITH_TOOLKIT
  AddToolkit(m);
#endif
#ifdef LEAKY_WITH_OPENCL
  AddDevice(m);
#endif
  m.def("simd_target", [] { return std::string(leaky_simd_target()); });
  m.def("version", [] { return std::string(leaky_version()); });
  m.def(
      "pool_threads", [] { return leaky_pool_threads(); },
      "threads of the library's own pool (this module's copy) started so far");
}

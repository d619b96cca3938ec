// What leaky._native's modules share: a NumPy array's leaky dtype, and a
// leaky_status as the Python exception a caller expects (ValueError for bad
// arguments, RuntimeError otherwise).
#ifndef LEAKY_BINDINGS_NUMPY_COMMON_H_
#define LEAKY_BINDINGS_NUMPY_COMMON_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

#include "leaky/leaky.h"
#include "user_message.h"

namespace leaky::numpy {

inline std::string DtypeName(const pybind11::dtype& dtype) {
  return dtype.attr("name").cast<std::string>();
}

// float32, float64, float16, or uint16 holding bfloat16 bits; else a
// TypeError naming `what`.
inline leaky_dtype DtypeOf(const pybind11::array& a, const char* what) {
  const pybind11::dtype dtype = a.dtype();
  const char kind = dtype.kind();
  const auto size = dtype.itemsize();
  if (kind == 'f' && size == 4) return LEAKY_F32;
  if (kind == 'f' && size == 8) return LEAKY_F64;
  if (kind == 'f' && size == 2) return LEAKY_F16;
  if (kind == 'u' && size == 2) return LEAKY_BF16;
  throw pybind11::type_error(
      std::string(what) + " has dtype " + DtypeName(dtype) +
      "; expected float32, float64, float16, or uint16 holding bfloat16 bits");
}

// The array itself if C-contiguous, else a C-contiguous copy; a MemoryError
// naming `what` when the copy cannot be made (pybind11's ensure() returns an
// empty handle then, with Python's error cleared: a zero-stride view of 2^40
// elements once segfaulted here).
inline pybind11::array Contiguous(const pybind11::array& a, const char* what) {
  if (a.flags() & pybind11::array::c_style) return a;
  pybind11::array packed = pybind11::array::ensure(a, pybind11::array::c_style);
  if (!packed) {
    PyErr_Format(PyExc_MemoryError, "%s: no memory for a contiguous copy of its %zd elements", what,
                 static_cast<Py_ssize_t>(a.size()));
    throw pybind11::error_already_set();
  }
  return packed;
}

inline bool SameShape(const pybind11::array& a, const pybind11::array& b) {
  if (a.ndim() != b.ndim()) return false;
  for (pybind11::ssize_t i = 0; i < a.ndim(); ++i) {
    if (a.shape(i) != b.shape(i)) return false;
  }
  return true;
}

// The rules every `out` argument shares (its dtype is the caller's check):
// the input's shape, C-contiguous, writeable.
inline void CheckOut(const pybind11::array& out, const pybind11::array& like) {
  if (!SameShape(out, like))
    throw pybind11::value_error("out has a different shape than the input");
  if (!(out.flags() & pybind11::array::c_style))
    throw pybind11::value_error("out must be C-contiguous");
  if (!out.writeable()) throw pybind11::value_error("out is read-only");
}

// leaky.h's [outer, channels, inner] view of x around its axis `axis`
// (negative counts from the end), and a per-channel operand's length check.
struct ChannelView {
  size_t outer, channels, inner;
};

inline ChannelView AroundAxis(const pybind11::array& x, int axis) {
  const auto rank = static_cast<int>(x.ndim());
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) {
    throw pybind11::value_error("axis " + std::to_string(axis) + " is outside the input's " +
                                std::to_string(rank) + " axes");
  }
  ChannelView v{1, static_cast<size_t>(x.shape(a)), 1};
  for (int d = 0; d < a; ++d) v.outer *= static_cast<size_t>(x.shape(d));
  for (int d = a + 1; d < rank; ++d) v.inner *= static_cast<size_t>(x.shape(d));
  return v;
}

inline void CheckPerChannel(const pybind11::array& t, size_t channels, const char* what) {
  if (t.ndim() != 1 || static_cast<size_t>(t.size()) != channels) {
    throw pybind11::value_error(std::string(what) + " must be 1-D with " +
                                std::to_string(channels) + " elements (the channel axis's length)");
  }
}

inline void Check(leaky_status status) {
  if (status == LEAKY_ERROR_INVALID_PARAMETER || status == LEAKY_ERROR_UNSUPPORTED ||
      status == LEAKY_ERROR_INVALID_OPTIONS || status == LEAKY_ERROR_OVERLAP ||
      status == LEAKY_ERROR_SIZE) {
    throw pybind11::value_error(leaky::toolkit::LastErrorForUser());
  }
  if (status != LEAKY_OK) throw std::runtime_error(leaky::toolkit::LastErrorForUser());
}

}  // namespace leaky::numpy

#endif  // LEAKY_BINDINGS_NUMPY_COMMON_H_

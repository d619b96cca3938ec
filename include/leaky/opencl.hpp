// C++ ownership of leaky/opencl.h's device handle: a unique_ptr that calls
// leaky_cl_close.
#ifndef LEAKY_OPENCL_HPP_
#define LEAKY_OPENCL_HPP_

#include <memory>

#include "leaky/opencl.h"

namespace leaky::cl {

struct DeviceCloser {
  void operator()(leaky_cl_device* device) const noexcept { leaky_cl_close(device); }
};
using Device = std::unique_ptr<leaky_cl_device, DeviceCloser>;

}  // namespace leaky::cl

#endif  // LEAKY_OPENCL_HPP_

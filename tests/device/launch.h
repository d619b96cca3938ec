// What the OpenCL tests share: how a test launches (the device's own plan
// request with cores, split, tile and buffers on top).
#ifndef LEAKY_TESTS_DEVICE_LAUNCH_H_
#define LEAKY_TESTS_DEVICE_LAUNCH_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "leaky/opencl.h"

namespace leaky::test {

// tile_length 0: sized from the device's local memory.
struct Launch {
  uint32_t cores, split;
  uint64_t tile_length;
  uint32_t buffers;
};

inline leaky_plan_request RequestFor(leaky_cl_device* device, leaky_dtype dtype, size_t n,
                                     bool backward, const Launch& launch) {
  leaky_plan_request request;
  EXPECT_EQ(leaky_cl_plan_request(device, dtype, n, backward ? 3 : 2, &request), LEAKY_OK)
      << leaky_last_error();
  request.max_cores = launch.cores;
  request.split = launch.split;
  request.tile_length = launch.tile_length;
  request.buffer_count = launch.buffers;
  return request;
}

}  // namespace leaky::test

#endif  // LEAKY_TESTS_DEVICE_LAUNCH_H_

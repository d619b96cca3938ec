// The scalar rules of the ops that have more than a slope, checked once for
// every backend that runs them (the CPU entry points in ops/, the OpenCL
// backend in device/opencl/): bias_act's activation, gain and clamp,
// dropout's p, RReLU's range and stream.
#ifndef LEAKY_OPS_OP_PARAMS_H_
#define LEAKY_OPS_OP_PARAMS_H_

#include <cstddef>

#include "kernels/kernels.h"
#include "leaky/leaky.h"

namespace leaky::internal {

// params non-null, a known activation, alpha and gain finite, clamp finite
// (negative: none, stored as -1); fills out's activation, alpha, gain, clamp.
[[nodiscard]] leaky_status CheckBiasActParams(const char* function, const leaky_bias_act_params* p,
                                              kernels::BiasActParams* out);

// p in [0, 1) (NaN fails); fills out's dropout_p and dropout_threshold.
[[nodiscard]] leaky_status CheckDropoutP(const char* function, double p,
                                         kernels::BiasActParams* out);

// params non-null, lower and upper finite with lower <= upper, the stream
// positions [offset, offset + n) within 2^64, and in evaluation the mean
// slope finite.
[[nodiscard]] leaky_status CheckRreluParams(const char* function, const leaky_rrelu_params* p,
                                            size_t n);

}  // namespace leaky::internal

#endif  // LEAKY_OPS_OP_PARAMS_H_

// C++ ownership of leaky/opencl.h's device handle (a unique_ptr that calls
// leaky_cl_close), and one op of leaky/family.h run on the device by name,
// for tools that read the op from a file or a command line.
#ifndef LEAKY_OPENCL_HPP_
#define LEAKY_OPENCL_HPP_

#include <memory>
#include <string_view>

#include "leaky/opencl.h"

namespace leaky::cl {

struct DeviceCloser {
  void operator()(leaky_cl_device* device) const noexcept { leaky_cl_close(device); }
};
using Device = std::unique_ptr<leaky_cl_device, DeviceCloser>;

// The operands and parameters of any family call besides LeakyReLU's, by
// role; each op reads its own (leaky/opencl.h's leaky_cl_<op>_<direction>).
struct FamilyArgs {
  leaky_dtype dtype = LEAKY_F32;
  size_t outer = 1, channels = 1, inner = 0;  // elementwise ops: inner = n
  const void* x = nullptr;                    // x (ReLU's and ELU's backward: saved x)
  const void* dy = nullptr;
  const void* side = nullptr;                    // PReLU's weight, bias_act's bias (may be null)
  const uint8_t* mask = nullptr;                 // dropout's backward
  void* out = nullptr;                           // y or dx
  void* second = nullptr;                        // dweight, db, RReLU's noise or dropout's mask
  double alpha = 1, scale = 1, input_scale = 1;  // ELU
  leaky_rrelu_params rrelu{0.125, 1.0 / 3, 1, 0, 0};
  leaky_bias_act_params bias_act{LEAKY_ACT_LRELU, 0.2, 1.4142135623730951, -1};
  leaky_dropout_params dropout{0.5, 0, 0};  // the backward reads p
};

// LEAKY_ERROR_INVALID_PARAMETER for an op the list does not have (and
// leaky_relu, whose call takes a slope: leaky_cl_leaky_relu_*).
inline leaky_status RunFamily(leaky_cl_device* d, std::string_view op, bool backward,
                              const FamilyArgs& a, const leaky_plan_request* request,
                              leaky_cl_profile* profile) {
  const size_t n = a.outer * a.channels * a.inner;
  const size_t o = a.outer, c = a.channels, i = a.inner;
  if (op == "relu") {
    return backward
               ? leaky_cl_plain_relu_backward(d, a.dtype, n, a.dy, a.x, a.out, request, profile)
               : leaky_cl_plain_relu_forward(d, a.dtype, n, a.x, a.out, request, profile);
  }
  if (op == "elu") {
    return backward ? leaky_cl_elu_backward(d, a.dtype, n, a.dy, a.x, a.out, a.alpha, a.scale,
                                            a.input_scale, request, profile)
                    : leaky_cl_elu_forward(d, a.dtype, n, a.x, a.out, a.alpha, a.scale,
                                           a.input_scale, request, profile);
  }
  if (op == "prelu") {
    return backward
               ? leaky_cl_prelu_backward(d, a.dtype, o, c, i, a.dy, a.x, a.side, a.out, a.second,
                                         request, profile)
               : leaky_cl_prelu_forward(d, a.dtype, o, c, i, a.x, a.side, a.out, request, profile);
  }
  if (op == "rrelu") {
    return backward ? leaky_cl_rrelu_backward(d, a.dtype, n, a.dy, a.x, a.out, &a.rrelu, request,
                                              profile)
                    : leaky_cl_rrelu_forward(d, a.dtype, n, a.x, a.out, a.second, &a.rrelu, request,
                                             profile);
  }
  if (op == "bias_act") {
    return backward ? leaky_cl_bias_act_backward(d, a.dtype, o, c, i, a.dy, a.x, a.side, a.out,
                                                 a.second, &a.bias_act, request, profile)
                    : leaky_cl_bias_act_forward(d, a.dtype, o, c, i, a.x, a.side, a.out,
                                                &a.bias_act, request, profile);
  }
  if (op == "bias_act_dropout") {
    return backward ? leaky_cl_bias_act_dropout_backward(d, a.dtype, o, c, i, a.dy, a.x, a.side,
                                                         a.mask, a.out, a.second, &a.bias_act,
                                                         a.dropout.p, request, profile)
                    : leaky_cl_bias_act_dropout_forward(d, a.dtype, o, c, i, a.x, a.side, a.out,
                                                        static_cast<uint8_t*>(a.second),
                                                        &a.bias_act, &a.dropout, request, profile);
  }
  return LEAKY_ERROR_INVALID_PARAMETER;
}

}  // namespace leaky::cl

#endif  // LEAKY_OPENCL_HPP_

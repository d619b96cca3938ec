/* c_abi_fuzz's calls, in C: a C caller may pass any int as a leaky_dtype or
 * a leaky_activation (in C++ even loading an enum outside its enumerators'
 * range is undefined, which clang's UBSan reports in the caller). */
#include "c_abi_calls.h"

#include <leaky/leaky.h>

leaky_status leaky_fuzz_call(const struct leaky_fuzz_call_args* a) {
  const leaky_dtype dtype = (leaky_dtype)a->dtype;
  const leaky_options* o = a->options;
  const leaky_bias_act_params act = {(leaky_activation)a->flag, a->s0, a->s1, a->s2};
  const leaky_rrelu_params rrelu = {a->s0, a->s1, a->flag, a->seed, a->offset};
  const leaky_dropout_params dropout = {a->s0, a->seed, a->offset};
  const leaky_bias_act_params dropout_act = {LEAKY_ACT_LRELU, 0.2, a->s1, a->s2};
  switch (a->op) {
    case 0: return leaky_relu_forward(dtype, a->n, a->src0, a->dst, a->s0, o);
    case 1: return leaky_relu_backward(dtype, a->n, a->src0, a->src1, a->flag, a->dst, a->s0, o);
    case 2: return leaky_plain_relu_forward(dtype, a->n, a->src0, a->dst, o);
    case 3: return leaky_plain_relu_backward(dtype, a->n, a->src0, a->src1, a->dst, o);
    case 4: return leaky_elu_forward(dtype, a->n, a->src0, a->dst, a->s0, a->s1, a->s2, o);
    case 5:
      return leaky_elu_backward(dtype, a->n, a->src0, a->src1, a->flag, a->dst, a->s0, a->s1,
                                a->s2, o);
    case 6:
      return leaky_prelu_forward(dtype, a->outer, a->channels, a->inner, a->src0, a->side, a->dst,
                                 o);
    case 7:
      return leaky_prelu_backward(dtype, a->outer, a->channels, a->inner, a->src0, a->src1,
                                  a->side, a->dst, a->reduce, o);
    case 8: return leaky_rrelu_forward(dtype, a->n, a->src0, a->dst, a->side_out, &rrelu, o);
    case 9: return leaky_rrelu_backward(dtype, a->n, a->src0, a->src1, a->dst, &rrelu, o);
    case 10:
      return leaky_bias_act_forward(dtype, a->outer, a->channels, a->inner, a->src0, a->side,
                                    a->dst, &act, o);
    case 11:
      return leaky_bias_act_backward(dtype, a->outer, a->channels, a->inner, a->src0, a->src1,
                                     a->side, a->dst, a->reduce, &act, o);
    case 12:
      return leaky_bias_act_dropout_forward(dtype, a->outer, a->channels, a->inner, a->src0,
                                            a->side, a->dst, (uint8_t*)a->side_out, &dropout_act,
                                            &dropout, o);
    case 13:
      return leaky_bias_act_dropout_backward(dtype, a->outer, a->channels, a->inner, a->src0,
                                             a->src1, a->side, (const uint8_t*)a->side_out,
                                             a->dst, a->reduce, &dropout_act, a->s0, o);
    default: return LEAKY_ERROR_INTERNAL;
  }
}

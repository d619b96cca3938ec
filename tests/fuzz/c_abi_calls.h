/* The C side of c_abi_fuzz: one call of the C ABI from plain arguments. */
#ifndef LEAKY_TESTS_FUZZ_C_ABI_CALLS_H_
#define LEAKY_TESTS_FUZZ_C_ABI_CALLS_H_

#include <stddef.h>
#include <stdint.h>

#include "leaky/leaky.h"

#ifdef __cplusplus
extern "C" {
#endif

struct leaky_fuzz_call_args {
  int op;    /* c_abi_fuzz.cc's Op */
  int dtype; /* any int */
  size_t n, outer, channels, inner;
  void *src0, *src1, *dst, *side, *side_out, *reduce;
  double s0, s1, s2; /* the op's scalars */
  int flag;          /* saved_is_result, training, or the activation (any int) */
  uint64_t seed, offset;
  const leaky_options* options;
};

leaky_status leaky_fuzz_call(const struct leaky_fuzz_call_args* args);

#ifdef __cplusplus
}
#endif

#endif /* LEAKY_TESTS_FUZZ_C_ABI_CALLS_H_ */

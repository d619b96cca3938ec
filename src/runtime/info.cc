#include "kernels/kernels.h"
#include "leaky/leaky.h"

extern "C" const char* leaky_simd_target(void) {
  return leaky::kernels::Dispatched().target_name;
}

extern "C" const char* leaky_version(void) { return LEAKY_VERSION_STRING; }

// Error reporting: a status code plus a thread-local message, set once by the
// driver that detects the problem, before any output byte is written.
#ifndef LEAKY_RUNTIME_ERROR_H_
#define LEAKY_RUNTIME_ERROR_H_

#include "leaky/leaky.h"

namespace leaky::internal {

// Records printf-style detail for leaky_last_error() and returns `status`.
leaky_status Fail(leaky_status status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_ERROR_H_

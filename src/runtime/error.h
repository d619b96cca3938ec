// Error reporting: a status code plus a thread-local message, set once by the
// driver that detects the problem, before any output byte is written.
#ifndef LEAKY_RUNTIME_ERROR_H_
#define LEAKY_RUNTIME_ERROR_H_

#include "leaky/leaky.h"

// Returns from the calling function when a check fails.
#define LEAKY_RETURN_IF_ERROR(expression)                \
  do {                                                   \
    const leaky_status leaky_status_ = expression;       \
    if (leaky_status_ != LEAKY_OK) return leaky_status_; \
  } while (0)

namespace leaky::internal {

// Records printf-style detail for leaky_last_error() and returns `status`.
leaky_status Fail(leaky_status status, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

// The steps of a call that can fail after its operands were checked, each
// taken before any output byte is written. Tests make one fail
// (FailStepForTesting) and check that its status reaches the caller with
// the outputs untouched; StepFailsForTesting is the step's own check.
enum class Step { kNone, kPlan, kThreads };
void FailStepForTesting(Step step);  // kNone: no step fails (the default)
bool StepFailsForTesting(Step step);

}  // namespace leaky::internal

#endif  // LEAKY_RUNTIME_ERROR_H_

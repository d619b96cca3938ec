// The library's messages as a tool or a binding says them. The C ABI's
// messages start with the function that failed ("leaky_plan_tiling: ...",
// "leaky_q8_leaky_relu_forward: ..."), right for a C caller, who made that
// call; a user of the CLI, the toolkit or the NumPy module never did, so
// the name is dropped there.
#ifndef LEAKY_TOOLKIT_USER_MESSAGE_H_
#define LEAKY_TOOLKIT_USER_MESSAGE_H_

#include <cctype>
#include <string>

#include "leaky/leaky.h"

namespace leaky::toolkit {

// `message` without a leading "leaky_<identifier>: ".
inline std::string WithoutFunctionName(std::string message) {
  if (message.rfind("leaky_", 0) != 0) return message;
  size_t i = 6;
  while (i < message.size() && (std::isalnum(static_cast<unsigned char>(message[i])) ||
                                message[i] == '_')) {
    ++i;
  }
  if (message.compare(i, 2, ": ") != 0) return message;
  return message.substr(i + 2);
}

// leaky_last_error(), for a user of a tool.
inline std::string LastErrorForUser() { return WithoutFunctionName(leaky_last_error()); }

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_USER_MESSAGE_H_

// bias_act's activation by name, with StyleGAN's defaults for an alpha or
// gain not given (linear: gain 1; relu: gain sqrt(2); lrelu: alpha 0.2,
// gain sqrt(2)), and the clamp as a value >= 0 or none: the one rule the
// NumPy and PyTorch bindings share. Errors are std::invalid_argument, which
// each binding raises as its own kind.
#ifndef LEAKY_BINDINGS_BIAS_ACT_NAMES_H_
#define LEAKY_BINDINGS_BIAS_ACT_NAMES_H_

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "leaky/leaky.h"

namespace leaky::bindings {

// The alpha and the gain an activation takes when none is given.
inline double DefaultAlpha(std::string_view act) { return act == "lrelu" ? 0.2 : 0.0; }
inline double DefaultGain(std::string_view act) { return act == "linear" ? 1.0 : std::sqrt(2.0); }

inline leaky_bias_act_params BiasActParams(std::string_view act, double alpha, double gain,
                                           std::optional<double> clamp) {
  leaky_bias_act_params p{};
  if (act == "lrelu") {
    p.activation = LEAKY_ACT_LRELU;
  } else if (act == "relu") {
    p.activation = LEAKY_ACT_RELU;
  } else if (act == "linear") {
    p.activation = LEAKY_ACT_LINEAR;
  } else {
    throw std::invalid_argument("act '" + std::string(act) +
                                "' is not 'lrelu', 'relu' or 'linear'");
  }
  if (clamp && !(std::isfinite(*clamp) && *clamp >= 0)) {
    throw std::invalid_argument("clamp must be a finite value >= 0 or None");
  }
  p.alpha = alpha;
  p.gain = gain;
  p.clamp = clamp.value_or(-1.0);
  return p;
}

}  // namespace leaky::bindings

#endif  // LEAKY_BINDINGS_BIAS_ACT_NAMES_H_

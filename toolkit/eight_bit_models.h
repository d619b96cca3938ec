// The ways an engineer's 8-bit LeakyReLU kernel computes its result that
// `leaky check` recognises (findings_eight_bit.cc): the exact rule of
// leaky/eight_bit.h, and the classic mistakes, alone or together - another
// rounding rule, floating-point arithmetic, a clamp or saturation
// forgotten, the input's zero point on the output. A model predicts one
// element's byte from its inputs, computed here from the exact real value
// (integer arithmetic, not the library's tables), so the exact model
// reproducing the golden is itself a check.
#ifndef LEAKY_TOOLKIT_EIGHT_BIT_MODELS_H_
#define LEAKY_TOOLKIT_EIGHT_BIT_MODELS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "leaky/eight_bit.h"

namespace leaky::toolkit {

struct Q8Model {
  // How the real value is computed before it is rounded.
  enum class Arithmetic {
    kExact,            // the op's: the exact real value
    kDouble,           // qu8/qs8: scale * (q - zp), * slope, / output scale, each rounded to double
    kFloat,            // the same in f32; fp8: the product rounded to f32 first
    kFloatMultiplier,  // qu8/qs8: (q - zp) * (float)(in_scale / out_scale) [* slope] in f32
  };
  enum class Rounding {
    kNearestEven,  // the op's
    kTiesAway,     // std::round, lround, roundf
    kTowardZero,   // an (int) cast, std::trunc; fp8: mantissa bits cut
    kDown,         // std::floor, an arithmetic shift; qu8/qs8 only
  };
  enum class Clamp {
    kOutput,     // the op's: [output_min, output_max]; fp8: saturate as asked
    kWrapped,    // qu8/qs8: none, the integer cast to 8 bits
    kTypeRange,  // qu8/qs8: the type's range, not output_min/max
    kFlipped,    // fp8: the other saturate setting
  };
  Arithmetic arithmetic = Arithmetic::kExact;
  Rounding rounding = Rounding::kNearestEven;
  Clamp clamp = Clamp::kOutput;
  bool input_zero_point = false;  // qu8/qs8: the input's zero point added on the output

  int Deviations() const {
    return (arithmetic != Arithmetic::kExact) + (rounding != Rounding::kNearestEven) +
           (clamp != Clamp::kOutput) + input_zero_point;
  }
  bool operator==(const Q8Model&) const = default;
};

struct Q8Problem {
  leaky_q8_params q;
  bool backward = false;  // fp8 only: dx from (dy, saved x)
  double negative_slope = 0;
};

// Every model that applies to the problem's type but the exact one, the
// fewest mistakes first.
std::vector<Q8Model> Q8Mistakes(const Q8Problem& p);

// The byte `model` gives for input x (forward) or (dy, saved x) (backward),
// or nullopt where it cannot say (a value far outside the type's range, a
// NaN: then no mistake is read into it).
std::optional<uint8_t> PredictQ8(const Q8Problem& p, const Q8Model& model, uint8_t x, uint8_t dy);

// Quantized only: whether the exact requantized value f(v) / output.scale
// of input x lies exactly halfway between two integers.
bool Q8IsTie(const Q8Problem& p, uint8_t x);

// Steps between two bytes of the type: |q1 - q2| for qu8/qs8, codes apart
// on fp8's number line (-0 and +0 together); nullopt when either is a NaN.
std::optional<uint64_t> Q8Steps(leaky_type8 type, uint8_t a, uint8_t b);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_EIGHT_BIT_MODELS_H_

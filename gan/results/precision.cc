#include "precision.h"

#include <cmath>
#include <functional>

#include "leaky/leaky.h"
#include "leaky/leaky.hpp"

namespace leaky::gan {
namespace {

// Products of two 16-bit values are exact in float (at most 22 significant
// bits), so rounding that float once is the correctly rounded 16-bit product.
float NativeF16(float x, float slope, bool flush) {
  float xh = static_cast<float>(float16(x)), sh = static_cast<float>(float16(slope));
  const float smallest_normal = 6.103515625e-05f;  // 2^-14
  if (flush && std::fabs(xh) < smallest_normal) xh = 0.0f;  // DAZ
  float y = static_cast<float>(float16(xh * sh));
  if (flush && std::fabs(y) < smallest_normal) y = 0.0f;    // FTZ
  return y;
}

float NativeBf16(float x, float slope) {
  const float xb = static_cast<float>(bfloat16(x)), sb = static_cast<float>(bfloat16(slope));
  return static_cast<float>(bfloat16(xb * sb));
}

template <class T>
std::vector<float> Library(const std::vector<float>& x, double slope) {
  std::vector<T> in(x.size()), out(x.size());
  for (size_t i = 0; i < x.size(); ++i) in[i] = T(x[i]);
  leaky::leaky_relu_forward<T>(in, out, slope);
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(out[i]);
  return y;
}

PrecisionRow Measure(const std::string& format, const std::vector<float>& x,
                     const std::vector<float>& y, double slope) {
  PrecisionRow row{format};
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] < 0)) continue;
    ++row.negatives;
    const double exact = static_cast<double>(x[i]) * slope;
    if (y[i] == 0.0f) ++row.flushed_to_zero;
    // Slope 0 (ReLU written as lrelu:0): the exact product is 0, and so is
    // every format's; 0/0 would make the row NaN, which JSON cannot hold.
    const double error =
        exact == 0 ? std::fabs(static_cast<double>(y[i])) : std::fabs((static_cast<double>(y[i]) - exact) / exact);
    row.max_relative_error = std::max(row.max_relative_error, error);
    sum += error;
  }
  row.mean_relative_error = row.negatives > 0 ? sum / static_cast<double>(row.negatives) : 0.0;
  return row;
}

}  // namespace

std::vector<PrecisionRow> MeasurePrecision(const std::vector<float>& x, double slope) {
  const auto apply = [&](const std::function<float(float)>& f) {
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = f(x[i]);
    return y;
  };
  const auto s = static_cast<float>(slope);
  return {
      Measure("f16, native f16 arithmetic", x, apply([&](float v) { return NativeF16(v, s, false); }), slope),
      Measure("f16, native, flush-to-zero", x, apply([&](float v) { return NativeF16(v, s, true); }), slope),
      Measure("bf16, native bf16 arithmetic", x, apply([&](float v) { return NativeBf16(v, s); }), slope),
      Measure("f16, leaky (f32 compute)", x, Library<float16>(x, slope), slope),
      Measure("bf16, leaky (f32 compute)", x, Library<bfloat16>(x, slope), slope),
      Measure("f32, leaky", x, Library<float>(x, slope), slope),
  };
}

}  // namespace leaky::gan

#include "golden_data.h"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>

#include "eight_bit_data.h"
#include "leaky/reference.hpp"

namespace leaky::toolkit {
namespace {

// Draws one value, as a double, from the named distribution; `hard` returns
// nullopt when it wants a raw bit pattern instead (see HardBits).
class Distribution {
 public:
  Distribution(const std::string& spec, uint64_t seed) : rng_(seed) {
    const auto colon = spec.find(':');
    kind_ = spec.substr(0, colon);
    if (kind_ == "uniform" || kind_ == "normal") {
      const std::string form = kind_ == "uniform" ? kUniformForm : kNormalForm;
      a_ = kind_ == "uniform" ? -1.0 : 0.0;
      b_ = 1.0;
      if (colon != std::string::npos) {
        const std::string args = spec.substr(colon + 1);
        const auto comma = args.find(',');
        if (comma == std::string::npos || !Parse(args.substr(0, comma), &a_) ||
            !Parse(args.substr(comma + 1), &b_)) {
          throw std::invalid_argument("distribution '" + spec + "': expected " + form);
        }
      }
      // A golden whose inputs are all one value tests nothing: refused.
      if (kind_ == "uniform" && a_ >= b_) {
        throw std::invalid_argument("distribution '" + spec + "': A must be below B in " + form);
      }
      if (kind_ == "normal" && b_ <= 0) {
        throw std::invalid_argument("distribution '" + spec + "': STD must be positive in " +
                                    form);
      }
    } else if (kind_ != "hard" || colon != std::string::npos) {
      throw std::invalid_argument("unknown distribution '" + spec + "' (" + DistributionHelp() +
                                  ")");
    }
  }

  // One stored bit pattern of `dtype`.
  uint64_t Next(leaky_dtype dtype) {
    if (kind_ == "uniform") return FromDouble(dtype, std::uniform_real_distribution<double>(a_, b_)(rng_));
    if (kind_ == "normal") return FromDouble(dtype, std::normal_distribution<double>(a_, b_)(rng_));
    return HardBits(dtype);
  }

 private:
  // The cases that break device kernels: subnormals, values whose product
  // with a slope underflows in f16, signed zeros, infinities, NaNs, extremes.
  uint64_t HardBits(leaky_dtype dtype) {
    std::uniform_int_distribution<int> pick(0, 9);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const bool negative = unit(rng_) < 0.6;
    const double sign = negative ? -1.0 : 1.0;
    switch (pick(rng_)) {
      case 0: return FromDouble(dtype, sign * 0.0);
      case 1: return FromDouble(dtype, sign * INFINITY);
      case 2: return FromDouble(dtype, NAN) | (negative ? uint64_t{1} << (DtypeBytes(dtype) * 8 - 1) : 0);
      case 3:  // subnormal of this dtype
        return FromDouble(dtype, sign * unit(rng_) * DtypeSmallestNormal(dtype));
      case 4:  // tiny f16 normals: x * 0.2 lands below f16's normal range
        return FromDouble(dtype, sign * (1.0 + 3.0 * unit(rng_)) * DtypeSmallestNormal(LEAKY_F16));
      case 5: return FromDouble(dtype, sign * LargestFinite(dtype) * (0.5 + 0.5 * unit(rng_)));
      default: return FromDouble(dtype, std::normal_distribution<double>(0.0, 2.0)(rng_));
    }
  }
  static double LargestFinite(leaky_dtype d) {
    return d == LEAKY_F64 ? 1.7976931348623157e308 : d == LEAKY_F16 ? 65504.0 : 3.3895313892515355e38;
  }

  // A finite number, all of `text` (std::stod would take "1x" and throw
  // "stod" on "x").
  static bool Parse(const std::string& text, double* value) {
    char* end = nullptr;
    *value = std::strtod(text.c_str(), &end);
    return !text.empty() && end == text.c_str() + text.size() && std::isfinite(*value);
  }

  std::mt19937_64 rng_;
  std::string kind_;
  double a_ = 0, b_ = 1;
};

template <class T>
T FromBits(uint64_t bits) {
  T value;
  std::memcpy(static_cast<void*>(&value), &bits, sizeof(T));
  return value;
}

template <class T>
uint64_t ToBits(T value) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const void*>(&value), sizeof(T));
  return bits;
}

template <class T>
std::vector<uint64_t> Reference(bool backward, const std::vector<uint64_t>& x,
                                const std::vector<uint64_t>& dy, double slope) {
  const reference::ieee_environment ieee;
  std::vector<uint64_t> out(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    out[i] = backward ? ToBits(reference::leaky_relu_backward(FromBits<T>(dy[i]), FromBits<T>(x[i]), slope))
                      : ToBits(reference::leaky_relu_forward(FromBits<T>(x[i]), slope));
  }
  return out;
}

}  // namespace

std::vector<uint64_t> ReferenceOutput(const GoldenDescription& d, const std::vector<uint64_t>& x,
                                      const std::vector<uint64_t>& dy, double slope) {
  const bool backward = d.op == "leaky_relu_backward";
  if (d.eight_bit) {
    const std::vector<uint8_t> bytes =
        Q8Reference(*d.eight_bit, backward, std::vector<uint8_t>(x.begin(), x.end()),
                    std::vector<uint8_t>(dy.begin(), dy.end()), slope);
    return std::vector<uint64_t>(bytes.begin(), bytes.end());
  }
  switch (d.dtype) {
    case LEAKY_F32: return Reference<float>(backward, x, dy, slope);
    case LEAKY_F64: return Reference<double>(backward, x, dy, slope);
    case LEAKY_F16: return Reference<float16>(backward, x, dy, slope);
    case LEAKY_BF16: return Reference<bfloat16>(backward, x, dy, slope);
  }
  return {};
}

void CheckDistribution(const std::string& spec) { Distribution(spec, 0); }

GoldenArrays MakeGolden(const GoldenDescription& d) {
  if (d.eight_bit) {
    // 256 inputs in all: every one, shuffled (the distribution is unused).
    GoldenArrays a;
    const std::vector<uint8_t> x = AllBytesShuffled(d.elements, d.seed);
    a.x.assign(x.begin(), x.end());
    if (d.op == "leaky_relu_backward") {
      const std::vector<uint8_t> dy = AllBytesShuffled(d.elements, d.seed + 1);
      a.dy.assign(dy.begin(), dy.end());
    }
    a.golden = ReferenceOutput(d, a.x, a.dy, d.negative_slope);
    return a;
  }
  Distribution inputs(d.distribution, d.seed), gradients(d.distribution, d.seed + 1);
  GoldenArrays a;
  a.x.resize(d.elements);
  for (auto& v : a.x) v = inputs.Next(d.dtype);
  if (d.op == "leaky_relu_backward") {
    a.dy.resize(d.elements);
    for (auto& v : a.dy) v = gradients.Next(d.dtype);
  }
  a.golden = ReferenceOutput(d, a.x, a.dy, d.negative_slope);
  return a;
}

std::vector<uint8_t> ToBytes(leaky_dtype dtype, const std::vector<uint64_t>& bits) {
  return ToBytes(DtypeBytes(dtype), bits);
}

std::vector<uint8_t> ToBytes(size_t size, const std::vector<uint64_t>& bits) {
  std::vector<uint8_t> bytes(bits.size() * size);
  for (size_t i = 0; i < bits.size(); ++i) std::memcpy(bytes.data() + i * size, &bits[i], size);
  return bytes;
}

}  // namespace leaky::toolkit

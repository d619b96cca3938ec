#include "eight_bit_data.h"
#include "user_message.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <random>

namespace leaky::toolkit {

leaky_q8_params DefaultQ8Params(leaky_type8 type) {
  leaky_q8_params q = leaky_q8_params_init(type);
  if (IsQuantized(type)) {
    // real = 3/32 (q - zp) in, 1/16 (q - zp) out: positives requantize to
    // 1.5 k, an exact tie for every odd k (ties-to-even against std::round
    // shows), and the output zero point is not the input's.
    const int32_t shift = type == LEAKY_QS8 ? -128 : 0;
    q.input = {0.09375, 128 + shift};
    q.output = {0.0625, 40 + shift};
  }
  return q;
}

double Q8Real(const leaky_q8_params& q, bool output, uint8_t byte) {
  if (IsQuantized(q.type)) {
    const leaky_quantization& t = output ? q.output : q.input;
    return t.scale * (Q8Integer(q.type, byte) - t.zero_point);
  }
  float value = 0;
  leaky_fp8_to_f32(q.type, 1, &byte, &value);
  return value;
}

std::vector<uint8_t> AllBytesShuffled(uint64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> bytes(n);
  std::array<uint8_t, 256> block;
  for (uint64_t start = 0; start < n; start += 256) {
    std::iota(block.begin(), block.end(), uint8_t{0});
    std::shuffle(block.begin(), block.end(), rng);
    std::copy_n(block.begin(), std::min<uint64_t>(256, n - start), bytes.begin() + start);
  }
  return bytes;
}

std::vector<uint8_t> Q8Reference(const leaky_q8_params& q, bool backward,
                                 const std::vector<uint8_t>& x, const std::vector<uint8_t>& dy,
                                 double slope) {
  std::vector<uint8_t> out(x.size());
  const leaky_status status =
      backward ? leaky_q8_leaky_relu_backward(&q, x.size(), dy.data(), x.data(), 0, out.data(),
                                              slope, nullptr)
               : leaky_q8_leaky_relu_forward(&q, x.size(), x.data(), out.data(), slope, nullptr);
  if (status != LEAKY_OK) {
    throw GoldenError(std::string("the library refused the ") + Type8Name(q.type) +
                      " call: " + LastErrorForUser());
  }
  return out;
}

Array DecodeBytes(const std::string& what, const std::vector<uint8_t>& bytes,
                  const leaky_q8_params& q, bool output, uint64_t elements) {
  if (bytes.size() != elements) {
    throw GoldenError(what + " holds " + std::to_string(bytes.size()) + " bytes but " +
                      std::to_string(elements) + " " + Type8Name(q.type) + " elements are " +
                      std::to_string(elements) + " (truncated, oversized, or another dtype)");
  }
  Array array;
  array.bits.assign(bytes.begin(), bytes.end());
  array.values.resize(elements);
  for (uint64_t i = 0; i < elements; ++i) array.values[i] = Q8Real(q, output, bytes[i]);
  return array;
}

}  // namespace leaky::toolkit

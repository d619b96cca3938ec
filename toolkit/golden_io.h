// Golden data on disk: the JSON description and the raw little-endian arrays
// that `leaky golden` writes and `leaky check` reads. Every reader validates
// sizes and fields and throws GoldenError with a one-line message; nothing
// here crashes on hostile input (a libFuzzer target checks that).
#ifndef LEAKY_TOOLKIT_GOLDEN_IO_H_
#define LEAKY_TOOLKIT_GOLDEN_IO_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "leaky/eight_bit.h"
#include "leaky/leaky.h"

namespace leaky::toolkit {

class GoldenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct GoldenDescription {
  std::string op = "leaky_relu_forward";  // or leaky_relu_backward
  leaky_dtype dtype = LEAKY_F32;
  std::vector<uint64_t> shape;
  uint64_t elements = 0;
  double negative_slope = 0.01;
  std::string distribution = "normal";
  uint64_t seed = 0;
  // The plan options the developer's kernel splits by (`leaky golden
  // --plan`), so `leaky check` maps indices without repeating them; null
  // when none were recorded. Validated where used (MakeLayout).
  nlohmann::json plan;
  // One-byte data (leaky/eight_bit.h): the type and its quantization or
  // saturation; `dtype` is then unused. Unset: `dtype`'s data.
  std::optional<leaky_q8_params> eight_bit;
};

// The data's type as golden.json and the messages spell it ("f16", "qu8"),
// and the bytes of one element.
std::string TypeName(const GoldenDescription& description);
size_t ElementBytes(const GoldenDescription& description);

// Largest array the tools accept: 2^32 elements keeps byte counts and the
// analysis' memory well inside a 64-bit process.
inline constexpr uint64_t kMaxGoldenElements = uint64_t{1} << 32;

const char* DtypeName(leaky_dtype dtype);
leaky_dtype ParseDtype(const std::string& name);  // throws GoldenError
size_t DtypeBytes(leaky_dtype dtype);
// The smallest positive normal value of `dtype` (bf16 shares f32's range).
double DtypeSmallestNormal(leaky_dtype dtype);
// The largest finite value of `dtype`.
double DtypeLargest(leaky_dtype dtype);

std::string DescriptionToJson(const GoldenDescription& description);
GoldenDescription DescriptionFromJson(const std::string& text);  // throws GoldenError

// An array of `dtype` values as bit patterns widened to uint64 and as doubles.
struct Array {
  std::vector<uint64_t> bits;
  std::vector<double> values;
};
// Decodes exactly `elements` values from `bytes`; a size mismatch throws,
// naming what was expected.
Array DecodeArray(const std::string& what, const std::vector<uint8_t>& bytes, leaky_dtype dtype,
                  uint64_t elements);
std::vector<uint8_t> ReadFile(const std::string& path, uint64_t max_bytes);  // throws GoldenError
void WriteFile(const std::string& path, const void* data, size_t bytes);     // throws GoldenError

// Bits -> value for one element, and a value rounded (to nearest) to
// `dtype`'s bit pattern.
double ToDouble(leaky_dtype dtype, uint64_t bits);
uint64_t FromDouble(leaky_dtype dtype, double value);
// Distance in units in the last place between two patterns of `dtype`
// (NaN handled by the caller); 0 and -0 are 0 apart.
uint64_t UlpDistance(leaky_dtype dtype, uint64_t a, uint64_t b);
bool IsNanBits(leaky_dtype dtype, uint64_t bits);
bool IsZeroBits(leaky_dtype dtype, uint64_t bits);  // +0 or -0

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_GOLDEN_IO_H_

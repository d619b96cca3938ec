// libFuzzer target for the readers `leaky check` trusts with user files: the
// golden.json description and the raw arrays. Any exception other than
// GoldenError, any crash or sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "family_io.h"
#include "golden_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace leaky::toolkit;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const GoldenDescription d = DescriptionFromJson(text);
    (void)DescriptionToJson(d);
  } catch (const GoldenError&) {
  }
  // A family op's golden.json (leaky golden --op): the description alone.
  try {
    nlohmann::json plan;
    const FamilyProblem p = FamilyFromJson(text, &plan);
    (void)p.elements();
  } catch (const GoldenError&) {
  }
  // The same bytes as an array of each dtype, with counts around the true one.
  const std::vector<uint8_t> bytes(data, data + size);
  for (leaky_dtype dtype : {LEAKY_F32, LEAKY_F64, LEAKY_F16, LEAKY_BF16}) {
    const uint64_t count = size / DtypeBytes(dtype);
    for (uint64_t elements : {count, count + 1, count == 0 ? 0 : count - 1, ~uint64_t{0}}) {
      try {
        const Array array = DecodeArray("fuzz", bytes, dtype, elements);
        for (size_t i = 0; i + 1 < array.bits.size(); ++i) {
          (void)UlpDistance(dtype, array.bits[i], array.bits[i + 1]);
        }
      } catch (const GoldenError&) {
      }
    }
  }
  return 0;
}

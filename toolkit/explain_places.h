// The second question of `leaky check`: for the wrong elements that no way
// of computing explains, what do they hold, and where? Either something the
// kernel never replaced (zeros, the untouched input, dy, the buffer's old
// fill value), or a correct result that sits at another index (a constant
// shift, a shift per core or per tile, a tile permuted inside itself).
// findings_regions names the spans found in the plan's own terms. Pure: no
// I/O.
#ifndef LEAKY_TOOLKIT_EXPLAIN_PLACES_H_
#define LEAKY_TOOLKIT_EXPLAIN_PLACES_H_

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "explain_values.h"
#include "golden_io.h"
#include "layout.h"

namespace leaky::toolkit {

// The arrays as the value analysis reads them, and the plan (null: extents
// only).
struct PlaceInput : ValueInput {
  const Layout* plan = nullptr;
};

// Elements [begin, end) of the output.
struct ElementRange {
  uint64_t begin = 0, end = 0;  // [begin, end)
  uint64_t size() const { return end - begin; }
};

// What a never-written element may still hold, its name in a finding
// ("zeros", "the input", "dy", "one repeated value"), and whether output
// element i holds it (`fill`: the repeated value, for kFill).
enum class Leftover { kZero, kInput, kDy, kFill };
const char* LeftoverName(Leftover c);
bool HoldsLeftover(const ValueInput& in, Leftover c, uint64_t fill, uint64_t i);

// A region the kernel never wrote, and what it still holds.
struct Unwritten {
  ElementRange span;
  std::string content;  // "zeros", "the input", "dy", "one repeated value"
};

// output[i] = golden[i + shift] for i in span.
struct Moved {
  ElementRange span;
  int64_t shift = 0;
};

// A tile whose values are the golden's own, in another order; map holds
// (output offset, golden offset) pairs within the tile, for a few values.
struct PermutedTile {
  uint32_t core = 0;
  uint64_t tile = 0;
  ElementRange span;
  std::vector<std::pair<uint64_t, uint64_t>> map;
};

struct PlaceExplanation {
  std::vector<Unwritten> unwritten;
  std::vector<Moved> moved;
  std::vector<PermutedTile> permuted;
  std::vector<uint64_t> explained;  // of the open elements, ascending
};

// The golden's 6-grams and where each starts (its first 4 places): where
// ExplainPlaces looks runs of the output up to find them at other indices.
// It depends on the golden alone, so a diagnosis that asks ExplainPlaces
// twice (over every differing element, then over what the values leave
// open) builds it once.
class GoldenGrams {
 public:
  static constexpr uint64_t kGram = 6;
  struct Starts {
    std::array<uint64_t, 4> at{};
    uint32_t count = 0;
  };
  explicit GoldenGrams(const Array& golden);
  // Where the golden holds the gram that starts at a[at] (NaNs of any
  // payload alike), or null.
  const Starts* Find(const Array& a, uint64_t at) const;

 private:
  std::unordered_map<uint64_t, Starts> starts_;
};

// Explains what it can of `open` (ascending wrong elements); `grams` is
// in.golden's.
PlaceExplanation ExplainPlaces(const PlaceInput& in, const GoldenGrams& grams,
                               const std::vector<uint64_t>& open);

// Where the even split's remainder (the last core's total % cores
// elements) begins: a plan boundary of its own.
uint64_t RemainderStart(const Layout& plan);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_EXPLAIN_PLACES_H_

// Golden data for every op of leaky/family.h besides LeakyReLU (whose own
// is golden_data.h's): the row's operands by name, drawn as `leaky golden`
// draws LeakyReLU's, and the library's outputs. `leaky golden/check --op`,
// leaky.testing.check_op and the family's diagnosis (family_models.h)
// read the same problem.
#ifndef LEAKY_TOOLKIT_FAMILY_GOLDEN_H_
#define LEAKY_TOOLKIT_FAMILY_GOLDEN_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "golden_io.h"
#include "leaky/leaky.h"

namespace leaky::toolkit {

// One row of leaky/family.h: its op, direction and operand names in order
// ("weight[channels]?" is "weight").
struct FamilyRow {
  std::string op;
  bool backward = false;
  bool random = false;  // draws from the Philox stream
  std::vector<std::string> inputs, outputs;
};
// The rows, as leaky/family.h lists them.
const std::vector<FamilyRow>& FamilyRows();
// The row of op and direction; throws std::invalid_argument naming the ops.
const FamilyRow& FindFamilyRow(const std::string& op, bool backward);
// Ops viewed as [outer, channels, inner] with a per-channel operand.
bool IsChannelOp(const std::string& op);

// Every scalar of the family; each op reads its own (leaky/family.h's
// scalars column). The defaults: PyTorch's where it has them; RReLU in
// training and dropout at p = 0.5, so the random stream is checked.
struct FamilyScalars {
  double alpha = 1, scale = 1, input_scale = 1;  // ELU
  double lower = 0.125, upper = 1.0 / 3;         // RReLU
  bool training = true;
  uint64_t seed = 0, offset = 0;                                  // RReLU, and dropout's forward
  leaky_activation act = LEAKY_ACT_LRELU;                         // bias_act
  double act_alpha = 0.2, gain = 1.4142135623730951, clamp = -1;  // clamp < 0: none
  double dropout_p = 0.5;
};

// The op's scalars by their Python names, with the defaults (what a kernel
// gets as keywords): {"alpha": 1.0, ...}; bias_act's clamp null for none.
// The dropout's backward takes no seed or offset (the mask carries them).
nlohmann::ordered_json FamilyDefaults(const std::string& op, bool backward);
// `given` (names of FamilyDefaults) over the defaults, checked: unknown
// names, a value of the wrong type or out of its range throw
// std::invalid_argument in one line. `resolved` receives the whole set.
FamilyScalars ParseFamilyScalars(const std::string& op, bool backward, const nlohmann::json& given,
                                 nlohmann::ordered_json* resolved);

// One operand: `dtype` elements, or the dropout mask's bytes.
struct Operand {
  std::string name;
  leaky_dtype dtype = LEAKY_F32;
  bool mask = false;           // one bit per element; bits holds the bytes
  std::vector<uint64_t> bits;  // stored patterns (the mask: byte values)
  std::vector<double> values;  // the values (empty for the mask)
  size_t size() const { return bits.size(); }
};
using Operands = std::vector<Operand>;
const Operand* FindOperand(const Operands& operands, const std::string& name);
// An operand from its stored patterns (values decoded).
Operand MakeOperand(std::string name, leaky_dtype dtype, std::vector<uint64_t> bits);
Operand MakeMask(std::string name, std::vector<uint64_t> bytes);
// An operand's stored bytes (raw little-endian; the mask's as they are),
// and an operand from the whole elements of `size` bytes (a trailing
// partial element is dropped: the callers check sizes).
std::vector<uint8_t> OperandBytes(const Operand& o);
Operand OperandFromBytes(std::string name, leaky_dtype dtype, bool mask, const uint8_t* data,
                         size_t size);

// An op of the family on one problem: the row, the [outer, channels,
// inner] view (outer = channels = 1 for elementwise ops), the scalars, the
// inputs and the library's outputs, by the row's names.
struct FamilyProblem {
  std::string op;
  bool backward = false;
  leaky_dtype dtype = LEAKY_F32;
  uint64_t outer = 1, channels = 1, inner = 0;
  FamilyScalars scalars;
  Operands inputs, golden;
  uint64_t elements() const { return outer * channels * inner; }
};

// The view of `elements` for op: channel ops (2, channels, elements /
// (2 * channels)), rounded down; throws std::invalid_argument below 2 *
// channels.
void ShapeFamilyProblem(FamilyProblem* p, uint64_t elements, uint64_t channels);
// x and dy as `leaky golden` draws LeakyReLU's (dist, seed); per-channel
// operands uniform in [-0.5, 1.5) from seed + 1 (a NaN weight or bias
// tells nothing of a kernel's indexing); the backward of dropout gets the
// forward's mask. Then the outputs, from the library.
void DrawFamilyInputs(FamilyProblem* p, const std::string& dist, uint64_t seed);
// The whole problem from its description (what `leaky golden --op` records
// and leaky.testing's arguments say): the row, the view, the scalars
// (`scalars` over the defaults; `resolved` gets them all) and the data.
// Throws std::invalid_argument in one line.
struct FamilyDescription {
  std::string op;
  bool backward = false;
  leaky_dtype dtype = LEAKY_F32;
  uint64_t elements = 0, channels = 4;
  std::string distribution = "hard";
  uint64_t seed = 1;
  nlohmann::json scalars = nlohmann::json::object();
};
FamilyProblem MakeFamilyProblem(const FamilyDescription& d,
                                nlohmann::ordered_json* resolved = nullptr);
// "hard" (every special value), or "normal" for the backwards whose
// second output sums over elements (one NaN would make every channel's NaN).
std::string FamilyDefaultDistribution(const std::string& op, bool backward);

// The library's outputs of p's op on `inputs` with scalars s, in the row's
// order (throws std::invalid_argument when the library refuses).
Operands RunFamily(const FamilyProblem& p, const FamilyScalars& s, const Operands& inputs);

// 0 where the op is exact; ELU's measured bound (leaky/reference.hpp).
uint64_t FamilyMaxUlp(const FamilyProblem& p);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_FAMILY_GOLDEN_H_

// libFuzzer target for the int32 conv epilogue of the C ABI
// (leaky_q8_bias_act_forward, eight_bit.h): qu8 and qs8, zero points and
// clamps, per-channel and per-tensor multipliers of every size class (ties,
// huge, subnormal, negative, zero, not finite), biases that push k beyond
// int32, rows (inner > 1) and channels-last layouts of up to 513 channels
// (the per-channel tables of at most 512 and the row-by-row path beyond),
// thread counts, store policies, executors, overlapping and null operands,
// acc at any int32 address and y at any byte address, sizes from 0 to
// 2^60. The property, for any input: either the call returns LEAKY_OK and
// y holds the exact reference's bytes (tests/eight_bit_reference.h:
// rationals, no floating point) with every other byte of the arena
// untouched, or it returns an error whose own message starts with the
// entry point and the arena is untouched. A call built only from valid
// choices must succeed; one with any invalid choice must be refused.
//
// Built with libFuzzer by `make fuzz`; `make test` replays
// tests/fuzz/corpus/q8_bias_act (replay_main.cc).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "eight_bit_reference.h"
#include "fuzz_input.h"
#include "leaky/eight_bit.h"
#include "leaky/leaky.h"

namespace {

namespace fuzz = leaky::fuzz;
namespace ref8 = leaky::test::eight_bit;
using fuzz::Reader;

constexpr const char* kOp = "leaky_q8_bias_act_forward";
// At most this many elements in a call that may run (the reference is a
// rational per element).
constexpr size_t kMaxElements = 10000;

[[noreturn]] void Bug(const char* what, const std::string& detail) {
  fuzz::Bug("q8_bias_act_fuzz", kOp, what, detail);
}

// A small generator for the arrays, seeded from the input, so that a few
// bytes describe thousands of accumulators.
struct Mix {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

const int32_t kSpecialInts[] = {0, 1, -1, std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max(), 255, -256, 1 << 24,
                                -(1 << 24), 127, -128};
constexpr size_t kSpecials = sizeof(kSpecialInts) / sizeof(kSpecialInts[0]);

// An int32 of the kind `kind` picks: full range, small, or a special value.
int32_t Int(Mix& mix, uint8_t kind) {
  const uint64_t v = mix.Next();
  switch (kind % 4) {
    case 0: return static_cast<int32_t>(static_cast<uint32_t>(v));
    case 1: return static_cast<int32_t>(v % 2001) - 1000;
    case 2: return kSpecialInts[v % kSpecials];
    default:  // small, with specials among them
      return (v & 8) != 0 ? kSpecialInts[(v >> 4) % kSpecials]
                          : static_cast<int32_t>(v % 513) - 256;
  }
}

// A multiplier of the class `kind` picks; clears *valid for one the call
// must refuse (not finite).
double Multiplier(Mix& mix, uint8_t kind, bool* valid) {
  const uint64_t v = mix.Next();
  const double unit = 1.0 + static_cast<double>(v % 4096) / 4096.0;  // [1, 2)
  double m;
  switch (kind % 9) {
    case 0: m = std::ldexp(unit, -static_cast<int>((v >> 12) % 40)); break;  // typical
    case 1: m = std::ldexp(1.0, -static_cast<int>((v >> 12) % 34)); break;   // products on ties
    case 2: m = -std::ldexp(unit, -static_cast<int>((v >> 12) % 40)); break;
    case 3: m = (v & 1) != 0 ? 0.0 : -0.0; break;
    case 4: m = std::ldexp(unit, static_cast<int>((v >> 12) % 64)); break;  // huge
    case 5: m = std::ldexp(1.0, -1000 - static_cast<int>((v >> 12) % 74)); break;  // subnormal
    case 6: {  // any bits
      std::memcpy(&m, &v, sizeof(m));
      break;
    }
    case 7: m = (v & 1) != 0 ? std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::quiet_NaN();
      break;
    default: m = std::ldexp(unit, -static_cast<int>((v >> 12) % 12)); break;  // near 1
  }
  if (!std::isfinite(m)) *valid = false;
  return m;
}

template <class T>
void Put(std::vector<uint8_t>& arena, size_t offset, size_t i, T v) {
  std::memcpy(arena.data() + offset + i * sizeof(T), &v, sizeof(T));
}
template <class T>
T Get(const std::vector<uint8_t>& arena, size_t offset, size_t i) {
  T v;
  std::memcpy(&v, arena.data() + offset + i * sizeof(T), sizeof(T));
  return v;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r(data, size);
  bool valid = true;
  // The output's encoding.
  leaky_q8_bias_act_params params{};
  // Mostly qu8 or qs8; else an fp8 type (no epilogue) or any int.
  const uint8_t type_choice = r.Byte();
  int type = type_choice % 2 == 0 ? LEAKY_QU8 : LEAKY_QS8;
  if (type_choice % 10 == 4) type = type_choice;
  if (type_choice % 10 == 9) type = type_choice / 10 % 2 == 0 ? LEAKY_FP8_E4M3 : LEAKY_FP8_E5M2;
  params.type = static_cast<leaky_type8>(type);
  if (params.type != LEAKY_QU8 && params.type != LEAKY_QS8) valid = false;
  const int low = params.type == LEAKY_QS8 ? -128 : 0, high = params.type == LEAKY_QS8 ? 127 : 255;
  const uint8_t zp_kind = r.Byte();
  params.output_zero_point =
      zp_kind % 8 == 7 ? static_cast<int32_t>(r.Bits(4)) : low + static_cast<int>(r.Byte());
  if (params.output_zero_point < low || params.output_zero_point > high) valid = false;
  // The clamp: none (0), a clamp within range (1), or bounds as drawn
  // (2, 3: maybe reversed or up to 16 beyond the type's range: refused).
  const uint8_t clamp_kind = r.Byte() % 4;
  const int spread = clamp_kind >= 2 ? 16 : 0;
  const auto bound = [&] { return low - spread + r.Byte() * (256 + 2 * spread) / 256; };
  int a = bound();
  int b = bound();
  if (clamp_kind == 0) a = low, b = high;
  if (clamp_kind == 1 && a > b) std::swap(a, b);
  params.output_min = a;
  params.output_max = b;
  if (a > b || a < low || b > high) valid = false;
  const uint8_t per_channel = r.Byte() % 5;
  params.per_channel = per_channel < 2 ? 1 : per_channel < 4 ? 0 : 2;
  if (params.per_channel == 2) valid = false;
  // The layout: channels-last ([outer, channels, 1], the tables' path when
  // rows are many) or rows of `inner`; sizes up to kMaxElements, zero, or
  // 2^60 (refused: the size overflows, or acc's span overlaps the other
  // operands).
  const size_t channel_choices[] = {1, 2, 3, 16, 64, 100, 130, 257, 512, 513};
  size_t channels = r.Pick(channel_choices);
  const uint8_t inner_kind = r.Byte();
  size_t inner = inner_kind % 3 == 0 ? 2 + inner_kind % 40 : 1;
  const uint8_t size_kind = r.Byte() % 8;
  size_t outer = static_cast<size_t>(r.Bits(2)) % (kMaxElements / (channels * inner) + 1);
  if (size_kind == 6) outer = 0;
  if (size_kind == 7) outer = (size_t{1} << 60) / channels + r.Byte();
  const bool huge = size_kind == 7;
  if (huge) valid = false;
  const size_t n = huge ? 64 : outer * channels * inner;  // elements in the arena
  const size_t multipliers = params.per_channel == 0 ? 1 : channels;
  // The values.
  Mix mix{r.Bits(8)};
  const uint8_t acc_kind = r.Byte(), bias_kind = r.Byte(), positive_kind = r.Byte(),
                negative_kind = r.Byte();
  // Operands: separate, bias absent, y on acc or on the bias (refused), or
  // a required operand null (refused).
  const uint8_t alias = r.Byte() % 10;
  const bool any = huge || n > 0;
  const uint8_t alias_detail = any && (alias == 3 || alias == 4) ? r.Byte() : 0;
  leaky_executor executor{};
  const leaky_options options = fuzz::ReadOptions(r, &executor, &valid);
  // acc at any int32 address, y at any byte address past a line.
  const size_t acc_shift = 4 * (r.Byte() % 16), y_shift = r.Byte() % 64;
  // The arena: acc, bias, the multipliers and y, each after a guard, at
  // offsets that keep every array aligned to its type (as a C caller's):
  // 64 bytes, then acc's and y's shifts.
  constexpr size_t kGuard = 64;
  size_t offset = 0;
  const auto region = [&](size_t bytes) {
    const size_t at = offset + kGuard;
    offset = (at + bytes + kGuard - 1) / kGuard * kGuard;
    return at;
  };
  const size_t acc_at = region(n * 4 + acc_shift) + acc_shift;
  const size_t bias_at = region(channels * 4);
  const size_t positive_at = region(channels * 8);
  const size_t negative_at = region(channels * 8);
  size_t y_at = region(n + y_shift) + y_shift;
  // operator new aligns the vector's bytes for any fundamental type.
  std::vector<uint8_t> arena(offset + kGuard);
  for (size_t i = 0; i < arena.size(); ++i) arena[i] = static_cast<uint8_t>(mix.Next());
  for (size_t i = 0; i < n; ++i) Put(arena, acc_at, i, Int(mix, acc_kind));
  for (size_t c = 0; c < channels; ++c) Put(arena, bias_at, c, Int(mix, bias_kind));
  bool multipliers_valid = true;
  for (size_t c = 0; c < multipliers; ++c) {
    // A kind per multiplier sometimes, so one channel may differ (one
    // channel beyond the folded limit sends a call to the general path).
    const uint8_t pk = positive_kind % 16 == 15 ? static_cast<uint8_t>(mix.Next()) : positive_kind;
    const uint8_t nk = negative_kind % 16 == 15 ? static_cast<uint8_t>(mix.Next()) : negative_kind;
    Put(arena, positive_at, c, Multiplier(mix, pk, &multipliers_valid));
    Put(arena, negative_at, c, Multiplier(mix, nk, &multipliers_valid));
  }
  // Multipliers are read only when there are elements.
  if (!multipliers_valid && any) valid = false;
  bool null_acc = false, null_bias = alias == 1, null_positive = false, null_negative = false,
       null_y = false;
  if (alias == 2 && any) {
    y_at = acc_at;
    valid = false;
  }
  if (alias == 3 && any) {
    y_at = bias_at + alias_detail % (channels * 4);
    valid = false;
  }
  if (alias == 4 && any) {
    const uint8_t which = alias_detail % 4;
    null_acc = which == 0, null_positive = which == 1, null_negative = which == 2,
    null_y = which == 3;
    valid = false;
  }
  const std::vector<uint8_t> before = arena;
  auto at = [&](size_t where, bool null) -> uint8_t* {
    return null ? nullptr : arena.data() + where;
  };
  fuzz::SetForeignLastError();
  const leaky_status status = leaky_q8_bias_act_forward(
      &params, outer, channels, inner, reinterpret_cast<const int32_t*>(at(acc_at, null_acc)),
      reinterpret_cast<const int32_t*>(at(bias_at, null_bias)),
      reinterpret_cast<const double*>(at(positive_at, null_positive)),
      reinterpret_cast<const double*>(at(negative_at, null_negative)), at(y_at, null_y), &options);
  const std::string message = leaky_last_error();
  if (status != LEAKY_OK) {
    if (valid) Bug("refused a valid call:", message);
    if (arena != before) Bug("wrote despite an error:", message);
    if (message.rfind(kOp, 0) != 0) {
      Bug("error message does not start with the entry point:", message);
    }
    return 0;
  }
  if (!valid) {
    Bug("accepted a call it must refuse:",
        "type " + std::to_string(params.type) + ", zero point " +
            std::to_string(params.output_zero_point) + ", clamp [" +
            std::to_string(params.output_min) + ", " + std::to_string(params.output_max) +
            "], per_channel " + std::to_string(params.per_channel) + ", [" +
            std::to_string(outer) + ", " + std::to_string(channels) + ", " +
            std::to_string(inner) + "], operands " + std::to_string(alias) + ", threads " +
            std::to_string(options.num_threads) + ", stores " +
            std::to_string(options.stream_stores));
  }
  // The expected arena: `before` with y from the exact reference.
  std::vector<uint8_t> want = before;
  std::vector<ref8::Rational> positive, negative;
  for (size_t m = 0; m < (n > 0 ? multipliers : 0); ++m) {  // unread (maybe not finite) at n = 0
    positive.push_back(ref8::Exact(Get<double>(before, positive_at, m)));
    negative.push_back(ref8::Exact(Get<double>(before, negative_at, m)));
  }
  for (size_t i = 0; i < n; ++i) {
    const size_t c = (i / inner) % channels;
    const int64_t k = int64_t{Get<int32_t>(before, acc_at, i)} +
                      (null_bias ? 0 : Get<int32_t>(before, bias_at, c));
    const size_t m = params.per_channel ? c : 0;
    want[y_at + i] = ref8::EpilogueByte(k, k >= 0 ? positive[m] : negative[m],
                                        params.output_zero_point, params.output_min,
                                        params.output_max);
  }
  for (size_t i = 0; i < arena.size(); ++i) {
    if (arena[i] == want[i]) continue;
    if (i < y_at || i >= y_at + n) {
      Bug("changed a byte outside y at arena byte", std::to_string(i));
    }
    const size_t e = i - y_at, c = (e / inner) % channels;
    char detail[400];
    std::snprintf(detail, sizeof(detail),
                  "element %zu of [%zu, %zu, %zu]: got %d, want %d (acc %d, bias %d, positive "
                  "%a, negative %a, %s, zero point %d, clamp [%d, %d], per_channel %d, threads "
                  "%d, stores %d)",
                  e, outer, channels, inner, arena[i], want[i], Get<int32_t>(before, acc_at, e),
                  null_bias ? 0 : Get<int32_t>(before, bias_at, c),
                  Get<double>(before, positive_at, params.per_channel ? c : 0),
                  Get<double>(before, negative_at, params.per_channel ? c : 0),
                  params.type == LEAKY_QU8 ? "qu8" : "qs8", params.output_zero_point,
                  params.output_min, params.output_max, params.per_channel, options.num_threads,
                  options.stream_stores);
    Bug("differs from the exact reference:", detail);
  }
  return 0;
}

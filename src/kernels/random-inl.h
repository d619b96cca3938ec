// Counter-based random words (Philox4x32-10) and the loop of the ops that
// use them or otherwise need each element's absolute index: RReLU, and
// bias_act with dropout (whose keep-mask is one bit per element).
//
// The stream layout (leaky.h) gives 64 consecutive words from 16 consecutive
// counters: word w of counter 16 g + j is stream word 64 g + 16 w + j. So a
// vector of L <= 16 lanes runs Philox once on L consecutive counters and
// stores its four result vectors as four runs of L consecutive words, with no
// shuffles, and every vector width yields the same words (wider vectors are
// capped at 16 u32 lanes here).

#if defined(LEAKY_KERNELS_RANDOM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_RANDOM_INL_H_
#undef LEAKY_KERNELS_RANDOM_INL_H_
#else
#define LEAKY_KERNELS_RANDOM_INL_H_
#endif

#include <atomic>
#include <cstdint>
#include <cstring>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/elementwise-inl.h"
#include "kernels/kernels.h"
#include "leaky/reference.hpp"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

inline constexpr size_t kWordsPerGroup = 64;
inline constexpr size_t kCountersPerGroup = 16;

// Fills whole groups of stream words, a batch of counters per Step(), so
// the positional loop can interleave the next chunk's Philox with this
// chunk's loads and stores. The layout of `words`: group g (relative to the first) at
// words + 64 g, word w of its counter j at 16 w + j.
class StreamFiller {
 public:
  void Start(uint64_t first_group, size_t groups, uint64_t seed, uint32_t* HWY_RESTRICT words) {
    first_counter_ = first_group * kCountersPerGroup;
    counters_ = groups * kCountersPerGroup;
    done_ = 0;
    seed_ = seed;
    words_ = words;
#if HWY_TARGET != HWY_SCALAR
    uint64_t k0 = static_cast<uint32_t>(seed), k1 = seed >> 32;
    for (size_t round = 0; round < 10; ++round) {
      round_keys_[2 * round] = k0;
      round_keys_[2 * round + 1] = k1;
      k0 = static_cast<uint32_t>(k0 + 0x9E3779B9u);
      k1 = static_cast<uint32_t>(k1 + 0xBB67AE85u);
    }
#endif
  }
  bool Done() const { return done_ >= counters_; }
  HWY_INLINE void Step() {
    if (!Done()) Batch();
  }
  HWY_INLINE void Finish() {
    while (!Done()) Batch();
  }
  // Counters per Step().
  static size_t BatchCounters() {
#if HWY_TARGET == HWY_SCALAR
    return kCountersPerGroup;
#else
    return kStates * hn::Lanes(D64());
#endif
  }

 private:
#if HWY_TARGET == HWY_SCALAR
  // One lane: the scalar definition is the kernel; a batch is one group.
  HWY_NOINLINE void Batch() {
    const std::array<uint32_t, 2> key{static_cast<uint32_t>(seed_),
                                      static_cast<uint32_t>(seed_ >> 32)};
    uint32_t* out = words_ + done_ / kCountersPerGroup * kWordsPerGroup;
    for (size_t j = 0; j < kCountersPerGroup; ++j) {
      const uint64_t counter = first_counter_ + done_ + j;
      const auto r = reference::philox4x32_10(
          {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0}, key);
      for (size_t w = 0; w < 4; ++w) out[w * 16 + j] = r[w];
    }
    done_ += kCountersPerGroup;
  }
#else
  // At most one group's 16 counters per u32 vector, so the four result
  // vectors store as runs of consecutive words: wider vectors (SVE up to
  // 2048 bits) are capped.
  using DU = hn::CappedTag<uint32_t, kCountersPerGroup>;
  using D64 = hn::Repartition<uint64_t, DU>;
  using V = hn::Vec<D64>;
  // One Philox state: each counter's four words in the low halves of u64
  // lanes. MulEven (vpmuludq) reads only those and returns the whole 64-bit
  // product, so a round is 2 multiplies, 2 shifts and 2 three-way xors
  // per vector, and the high halves may hold garbage (never read). The
  // fresh shifted product is Xor3's first operand, the one a ternlog
  // overwrites: written as two xors, GCC fused them with the key shared by
  // the states as destination and copied the key before each.
  static HWY_INLINE void Round(V& c0, V& c1, V& c2, V& c3, V key0, V key1) {
    const DU du;
    const V p0 = hn::MulEven(hn::BitCast(du, c0), hn::Set(du, 0xD2511F53u));
    const V p1 = hn::MulEven(hn::BitCast(du, c2), hn::Set(du, 0xCD9E8D57u));
    c0 = hn::Xor3(hn::ShiftRight<32>(p1), c1, key0);
    c1 = p1;
    c2 = hn::Xor3(hn::ShiftRight<32>(p0), c3, key1);
    c3 = p0;
  }
  // Two independent states run together (a and b): one alone is a chain of
  // dependent multiplies; more spill registers on AVX2 (docs/design.md).
  // AVX-512's 32 registers hold four (c and d: the next group's counters).
  // Named, not arrays: SVE vectors cannot be array elements.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  static constexpr size_t kStates = 4;
#else
  static constexpr size_t kStates = 2;
#endif
  HWY_NOINLINE void Batch() {
    const D64 d64;
    const size_t lanes64 = hn::Lanes(d64);
    const V iota = hn::Iota(d64, 0);
    // The last batch may run past the groups (words has room for it). The
    // counters of one u32 vector share their high word: base is a multiple
    // of the lane count, which divides 16.
    const uint64_t base_a = first_counter_ + done_, base_b = base_a + lanes64;
    V a0 = hn::Add(iota, hn::Set(d64, base_a & 0xFFFFFFFFu)), a1 = hn::Set(d64, base_a >> 32);
    V b0 = hn::Add(iota, hn::Set(d64, base_b & 0xFFFFFFFFu)), b1 = hn::Set(d64, base_b >> 32);
    V a2 = hn::Zero(d64), a3 = hn::Zero(d64), b2 = hn::Zero(d64), b3 = hn::Zero(d64);
    // c and d, the next group's 16 counters, run only with four states (on
    // the other targets they are dead code).
    const uint64_t base_c = base_a + 2 * lanes64, base_d = base_a + 3 * lanes64;
    V c0 = hn::Add(iota, hn::Set(d64, base_c & 0xFFFFFFFFu)), c1 = hn::Set(d64, base_c >> 32);
    V d0 = hn::Add(iota, hn::Set(d64, base_d & 0xFFFFFFFFu)), d1 = hn::Set(d64, base_d >> 32);
    V c2 = hn::Zero(d64), c3 = hn::Zero(d64), d2 = hn::Zero(d64), d3 = hn::Zero(d64);
    // Unrolled: GCC kept the four states' rotation as 20 register moves per
    // round in a loop (docs/design.md).
    HWY_UNROLL(10)
    for (int round = 0; round < 10; ++round) {
      const V key0 = hn::Set(d64, round_keys_[2 * round]);
      const V key1 = hn::Set(d64, round_keys_[2 * round + 1]);
      Round(a0, a1, a2, a3, key0, key1);
      Round(b0, b1, b2, b3, key0, key1);
      if constexpr (kStates == 4) {
        Round(c0, c1, c2, c3, key0, key1);
        Round(d0, d1, d2, d3, key0, key1);
      }
    }
    uint32_t* out = words_ + (done_ / kCountersPerGroup) * kWordsPerGroup + done_ % kCountersPerGroup;
    StorePair(a0, a1, a2, a3, b0, b1, b2, b3, out);
    if constexpr (kStates == 4) {
      // 8 u64 lanes: a and b filled one group, c and d fill the next.
      HWY_DASSERT(2 * lanes64 == kCountersPerGroup);
      StorePair(c0, c1, c2, c3, d0, d1, d2, d3, out + kWordsPerGroup);
    }
    done_ += kStates * lanes64;
  }
  // The low halves of a pair of states, in counter order.
  static HWY_INLINE void StorePair(V a0, V a1, V a2, V a3, V b0, V b1, V b2, V b3,
                                   uint32_t* HWY_RESTRICT out) {
    const DU du;
    hn::StoreU(hn::ConcatEven(du, hn::BitCast(du, b0), hn::BitCast(du, a0)), du, out);
    hn::StoreU(hn::ConcatEven(du, hn::BitCast(du, b1), hn::BitCast(du, a1)), du, out + 16);
    hn::StoreU(hn::ConcatEven(du, hn::BitCast(du, b2), hn::BitCast(du, a2)), du, out + 32);
    hn::StoreU(hn::ConcatEven(du, hn::BitCast(du, b3), hn::BitCast(du, a3)), du, out + 48);
  }
#endif
  uint64_t first_counter_ = 0, seed_ = 0;
  size_t counters_ = 0, done_ = 0;
  uint32_t* words_ = nullptr;
#if HWY_TARGET != HWY_SCALAR
  // Each round's key {k0, k1}, set by Start(): Batch's rounds broadcast
  // them from memory, as ternlog operands, instead of from general
  // registers (docs/design.md).
  uint64_t round_keys_[20] = {};
#endif
};

// Elements per chunk: one batch of random words, one batch of mask bits.
inline constexpr size_t kPositionalChunk = 256;

// Dropout draws 16 bits per element: stream position s uses the low half
// (s % 128 < 64) or the high half of word 64 (s / 128) + s % 64. Other ops
// draw a word per element: position s is word s.
inline constexpr size_t kHalfWordsPerGroup = 2 * kWordsPerGroup;

// The stream groups that hold positions [first, first + count).
struct ChunkGroups {
  uint64_t first_group;
  size_t groups;
  ChunkGroups(uint64_t first, size_t count, size_t positions_per_group)
      : first_group(first / positions_per_group),
        groups(static_cast<size_t>((first + count - 1) / positions_per_group - first_group + 1)) {}
};

// The keep bits of `groups` whole groups, in position order: bit i of
// out[2 g] is position i of group g (the low half of its word i), bit i of
// out[2 g + 1] position 64 + i (the high half); a position is kept when
// its 16 bits are >= threshold. Straight from the words, in registers:
// expanding the halves to words in memory and comparing them a vector of
// elements at a time cost about a tenth of the op (docs/design.md).
// Out of line, as StoreBits: called once per chunk of 256 elements (f32
// dropout in cache measured no slower), and not compiled into every
// instantiation of the loop that uses it.
HWY_NOINLINE inline void GroupKeepBits(size_t groups, const uint32_t* HWY_RESTRICT words,
                                       uint32_t threshold, uint64_t* HWY_RESTRICT out) {
  if (threshold > 0xFFFFu) {  // p within 2^-16 of 1: nothing is kept
    for (size_t g = 0; g < 2 * groups; ++g) out[g] = 0;
    return;
  }
#if HWY_TARGET == HWY_SCALAR
  for (size_t g = 0; g < groups; ++g) {
    uint64_t low = 0, high = 0;
    for (size_t i = 0; i < kWordsPerGroup; ++i) {
      const uint32_t w = words[g * kWordsPerGroup + i];
      low |= uint64_t{(w & 0xFFFFu) >= threshold} << i;
      high |= uint64_t{(w >> 16) >= threshold} << i;
    }
    out[2 * g] = low;
    out[2 * g + 1] = high;
  }
#else
  // n16 halves per compare (8 to 64 lanes: whole bytes of mask bits): the
  // even u16 lanes of n16 words are their low halves, the odd their high.
  const hn::CappedTag<uint16_t, kWordsPerGroup> d16;
  const hn::Repartition<uint32_t, decltype(d16)> d32;
  const size_t n16 = hn::Lanes(d16);
  const auto t = hn::Set(d16, static_cast<uint16_t>(threshold));
  const auto zero = hn::Zero(d16);
  for (size_t g = 0; g < groups; ++g) {
    // 16 bytes of bits; StoreMaskBits may write up to 8 at each offset.
    uint8_t bytes[16 + 8];
    const uint32_t* w = words + g * kWordsPerGroup;
    for (size_t q = 0; q < kWordsPerGroup; q += n16) {
      const auto v0 = hn::BitCast(d16, hn::LoadU(d32, w + q));
      const auto v1 = hn::BitCast(d16, hn::LoadU(d32, w + q + n16 / 2));
      // half >= t exactly when t - half saturates to 0.
      const auto kept_low = hn::Eq(hn::SaturatedSub(t, hn::ConcatEven(d16, v1, v0)), zero);
      const auto kept_high = hn::Eq(hn::SaturatedSub(t, hn::ConcatOdd(d16, v1, v0)), zero);
      hn::StoreMaskBits(d16, kept_low, bytes + q / 8);
      hn::StoreMaskBits(d16, kept_high, bytes + 8 + q / 8);
    }
    std::memcpy(out + 2 * g, bytes, 16);  // little-endian
  }
#endif
}

// One bit per element, bit e % 8 of byte e / 8: elements [first, first +
// count) from bit k = e - first of `bits`. A byte that also holds elements
// outside [owned_first, owned_end), the caller's range (a channel row of a
// tile), may be written by another call, on another thread, at the same
// time, and is updated atomically; one whose other elements are the
// caller's own (a neighbouring chunk's) is updated in place. A locked update is a full fence that waits for the
// streamed stores of y: with one at every chunk (tiles aligned in memory
// but not to 8 elements, as for a std::vector output) dropout at 64 Mi ran
// 2.5x slower (docs/design.md).
HWY_NOINLINE inline void StoreBits(const uint64_t* bits, uint64_t first, size_t count,
                                   uint64_t owned_first, uint64_t owned_end, uint8_t* mask) {
  size_t k = 0;  // bits stored so far
  const auto partial_byte = [&](size_t take) {
    const uint64_t e = first + k;
    const unsigned shift = static_cast<unsigned>(e % 8);
    uint64_t window = bits[k / 64] >> (k % 64);
    if (k % 64 + take > 64) window |= bits[k / 64 + 1] << (64 - k % 64);
    const unsigned covered = ((1u << take) - 1u) << shift;
    const auto value = static_cast<uint8_t>((static_cast<unsigned>(window) << shift) & covered);
    const uint64_t byte_first = e / 8 * 8;
    if (byte_first < owned_first || byte_first + 8 > owned_end) {
      std::atomic_ref<uint8_t> byte(mask[e / 8]);
      byte.fetch_and(static_cast<uint8_t>(~covered), std::memory_order_relaxed);
      byte.fetch_or(value, std::memory_order_relaxed);
    } else {
      mask[e / 8] = static_cast<uint8_t>((mask[e / 8] & ~covered) | value);
    }
    k += take;
  };
  if (first % 8 != 0) partial_byte(HWY_MIN(size_t{8} - first % 8, count));
  // Whole bytes from element first + k (k < 8), eight at a time from the
  // bits shifted down by k (little-endian words).
  const size_t whole = (count - k) / 8;
  uint8_t* out = mask + (first + k) / 8;
  for (size_t q = 0; q < whole; q += 8) {
    uint64_t word = bits[q / 8] >> k;
    if (k != 0) word |= bits[q / 8 + 1] << (64 - k);
    std::memcpy(out + q, &word, HWY_MIN(size_t{8}, whole - q));
  }
  k += whole * 8;
  if (k < count) partial_byte(count - k);
}

// Bits [first, first + count) of a mask, count <= 64 (a 2048-bit SVE
// vector of f32 is 64 lanes), as the low bits.
HWY_INLINE uint64_t LoadBits(const uint8_t* mask, uint64_t first, size_t count) {
  const uint64_t first_byte = first / 8, last_byte = (first + count - 1) / 8;
  const unsigned shift = static_cast<unsigned>(first % 8);
  uint64_t window = 0;
  for (uint64_t b = first_byte; b <= last_byte && b - first_byte < 8; ++b) {
    window |= uint64_t{mask[b]} << (8 * (b - first_byte));
  }
  uint64_t bits = window >> shift;
  // A ninth byte, when 64 bits start mid-byte.
  if (last_byte - first_byte == 8) bits |= uint64_t{mask[last_byte]} << (64 - shift);
  return count >= 64 ? bits : bits & ((uint64_t{1} << count) - 1);
}

// The op as a Highway mask over the lanes of d, from the low bits of `bits`.
template <class D>
HWY_INLINE hn::Mask<D> MaskFromBits(D d, uint64_t bits) {
  uint8_t bytes[8];
  std::memcpy(bytes, &bits, sizeof(bytes));  // little-endian x86
  return hn::LoadMaskBits(d, bytes);
}

// The words of the lanes of d (compute type f32 or f64) as uniform values,
// exactly: f32 keeps the top 24 bits, f64 all 32.
template <class D>
HWY_INLINE hn::Vec<D> UniformFromWords(D d, const uint32_t* words) {
  using T = hn::TFromD<D>;
  if constexpr (sizeof(T) == 4) {
    const hn::RebindToSigned<D> di;
    const hn::RebindToUnsigned<D> du;
    const auto top = hn::BitCast(di, hn::ShiftRight<8>(hn::LoadU(du, words)));
    return hn::Mul(hn::ConvertTo(d, top), hn::Set(d, T(0x1p-24)));
  } else {
    const hn::Rebind<uint32_t, D> du;
    const hn::Rebind<int32_t, D> di;
    // u32 -> f64 through i32: flip the top bit, convert, add 2^31 back.
    const auto flipped = hn::BitCast(di, hn::Xor(hn::LoadU(du, words), hn::Set(du, 0x80000000u)));
    const auto value = hn::Add(hn::PromoteTo(d, flipped), hn::Set(d, 2147483648.0));
    return hn::Mul(value, hn::Set(d, 0x1p-32));
  }
}

// Dropout's and RReLU's loops keep the core busy between loads (Philox, the
// keep bits), so at 1 thread too few misses are in flight for the hardware
// prefetchers alone: asking for the lines of the sources and of y (whose
// cached stores read each line first) 8 KiB ahead helps; the two were not
// measured apart.
// f32 bias_act + dropout at 64 Mi, Zen 4 AVX3_DL, `leaky bench` over the
// same binary with the library built with and without, alternated 18
// times in three batches, ratio to the streaming copy: 1 thread 0.69-0.80
// (median 0.75) without, 0.75-0.85 (0.80) with, higher in 16 of the 18;
// 2 threads 0.66-0.92 against 0.59-0.95, higher in 9 of 18. In cache (1
// Mi), RReLU's forward (4 alternations) and dropout's backward (3)
// unchanged within the spread.
constexpr size_t kRandomPrefetchBytes = 8192;

// dst[i] = op(d, ...) for the n elements whose absolute indices are
// [index, index + n), in chunks. Op provides:
//   kRandom: whether it needs stream words (then seed and offset members);
//   kKeepBits: whether it draws a keep bit per element from 16 random bits
//     (then a threshold member, and a mask member the bits are written to):
//     the loop computes the bits (GroupKeepBits) and hands each vector its
//     own; words are then null;
//   op(d, words, e, count, kept, sources...): the vector of elements
//     [e, e + count) (absolute indices), count == Lanes(d) except at the
//     end; `words` are their stream words (null when !kRandom or kKeepBits),
//     `kept` holds their keep bits in its low `count` bits when kKeepBits
//     (the bits above are not theirs: the op masks them off).
// The next chunk's Philox runs a batch at a time inside this chunk's loop
// (every 64 elements), so its arithmetic overlaps this chunk's loads and
// stores (a small gain, docs/design.md: the loop is compute-bound, so the
// two mostly add up anyway).
// The keep bits of a chunk are computed before its loop and go out to the
// mask after it.
// With `stream`, vector-aligned whole vectors go out as non-temporal stores.
template <class Codec, class Op, class... Sources>
HWY_INLINE void PositionalElementwise(size_t n, uint64_t index, typename Codec::Storage* dst,
                                      bool stream, Op& op, const Sources*... srcs) {
  using Storage = typename Codec::Storage;
  const typename Codec::D d;
  const size_t lanes = hn::Lanes(d);
  const size_t vector_bytes = lanes * sizeof(Storage);
  stream = stream && Codec::kCanStream;
  constexpr size_t kPositionsPerGroup = Op::kKeepBits ? kHalfWordsPerGroup : kWordsPerGroup;
  // Whether the op reads stream words itself (else it gets null).
  constexpr bool kWords = Op::kRandom && !Op::kKeepBits;
  // Two chunks' words (this one's, the next one's): whole groups around a
  // chunk, plus a partial last batch of counters.
  alignas(64) uint32_t words[2][kPositionalChunk + 5 * kWordsPerGroup];
  // Keep bits: those of the (at most 3) groups of 128 positions that cover
  // a chunk, and the chunk's own from its first element (StoreBits reads
  // one word past a chunk's last bit). Zeroed once: bits past a chunk's end
  // (stale, from an earlier chunk) are never stored.
  uint64_t group_bits[2 * 3] = {}, bits[kPositionalChunk / 64 + 1] = {};
  StreamFiller filler;
  size_t steps_per_block = 0;  // filler batches per 64 elements
  // Starts the words of the chunk at element i into words[slot].
  auto start_chunk = [&](size_t i, size_t slot) {
    const ChunkGroups g(op.offset + index + i, HWY_MIN(kPositionalChunk, n - i),
                        kPositionsPerGroup);
    filler.Start(g.first_group, g.groups, op.seed, words[slot]);
    const size_t batches = (g.groups * kCountersPerGroup + StreamFiller::BatchCounters() - 1) /
                           StreamFiller::BatchCounters();
    steps_per_block = (batches + kPositionalChunk / 64 - 1) / (kPositionalChunk / 64);
  };
  if constexpr (Op::kRandom) {
    if (n != 0) {
      start_chunk(0, 0);
      filler.Finish();
    }
  }
  for (size_t i = 0, slot = 0; i < n; i += kPositionalChunk, slot ^= 1) {
    const size_t count = HWY_MIN(kPositionalChunk, n - i);
    const uint64_t first = index + i;
    const uint32_t* w = nullptr;
    if constexpr (Op::kRandom) {
      const ChunkGroups g(op.offset + first, count, kPositionsPerGroup);
      const uint64_t skip = op.offset + first - g.first_group * kPositionsPerGroup;
      if constexpr (Op::kKeepBits) {
        GroupKeepBits(g.groups, words[slot], op.threshold, group_bits);
        // The chunk's bits from bit `skip` on (skip < 128, so the word read
        // last is at most group_bits[1 + 3 + 1]).
        const uint64_t* from = group_bits + skip / 64;
        const unsigned shift = static_cast<unsigned>(skip % 64);
        for (size_t b = 0; b <= (count - 1) / 64; ++b) {
          bits[b] = shift == 0 ? from[b] : (from[b] >> shift) | (from[b + 1] << (64 - shift));
        }
      } else {
        w = words[slot] + skip;
      }
      if (i + kPositionalChunk < n) start_chunk(i + kPositionalChunk, slot ^ 1);
    }
    // Vector j's keep bits (j is a multiple of Lanes(d), which divides 64:
    // no vector crosses a word).
    const auto kept = [&](size_t j) -> uint64_t {
      if constexpr (Op::kKeepBits) return bits[j / 64] >> (j % 64);
      return 0;
    };
    // Every vector of a chunk has the alignment of its first.
    const bool non_temporal =
        stream && reinterpret_cast<uintptr_t>(dst + i) % vector_bytes == 0;
    const auto whole_vector = [&](size_t j) HWY_ATTR {
      const auto v = op(d, kWords ? w + j : nullptr, first + j, lanes, kept(j),
                        Codec::Load(d, srcs + i + j)...);
      if (non_temporal) {
        Codec::Stream(d, v, dst + i + j);
      } else {
        Codec::Store(d, v, dst + i + j);
      }
    };
    // Blocks of 64 elements (one word of keep bits), each followed by its
    // share of the next chunk's Philox. A step is a call that clobbers the
    // vector registers: stepping inside the vector loop (after every 64th
    // element) made GCC keep the op's constants on the stack and reload
    // them every vector (docs/design.md).
    HWY_DASSERT(64 % lanes == 0);  // Highway's lane counts are powers of two, at most 64 here
    size_t j = 0;
    for (; j + 64 <= count; j += 64) {
      // Ask for the block's lines kRandomPrefetchBytes ahead, the sources'
      // and, when stores are cached, dst's (streamed lines are never read);
      // a prefetch may run past the arrays: it never faults.
      for (size_t line = 0; line < 64 * sizeof(*dst); line += 64) {
        (kernels::PrefetchAhead(srcs + i + j, kRandomPrefetchBytes + line), ...);
        if (!non_temporal) kernels::PrefetchAhead(dst + i + j, kRandomPrefetchBytes + line, true);
      }
      // Unrolled by at most 4: fully unrolled (64 vectors of one lane on
      // HWY_SCALAR) the kernels' file took half as long again to compile.
      HWY_UNROLL(4)
      for (size_t k = 0; k < 64; k += lanes) whole_vector(j + k);
      if constexpr (Op::kRandom) {
        for (size_t step = 0; step < steps_per_block; ++step) filler.Step();
      }
    }
    for (; j + lanes <= count; j += lanes) whole_vector(j);
    if (j < count) {
      const size_t rest = count - j;
      StorePartial<Codec>(d,
                          op(d, kWords ? w + j : nullptr, first + j, rest, kept(j),
                             LoadPartial<Codec>(d, rest, srcs + i + j)...),
                          rest, dst + i + j);
    }
    if constexpr (Op::kRandom) filler.Finish();
    if constexpr (Op::kKeepBits) StoreBits(bits, first, count, index, index + n, op.mask);
  }
  // Non-temporal stores are weakly ordered: fence before the tile is done.
  if (stream) hwy::FlushStream();
}

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_RANDOM_INL_H_

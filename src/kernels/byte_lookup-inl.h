// Byte-table lookups for the 8-bit ops (eight_bit.h): y = table[x] over
// 256-entry tables, and the fp8 backward's select. The tables are built
// before the call (src/eight_bit); these loops only look them up.
//
// Per target: AVX3_DL has VBMI's two-table byte permute (vpermi2b: 128
// entries from two registers), so 256 entries are two permutes and a blend
// on the index's top bit per 64 bytes. Other vector targets use Highway's
// 16-entry TableLookupBytes once per high nibble and pick among the 16 by
// the high nibble's bits: Highway 1.0.3 has no wider byte table. The
// scalar and EMU128 targets index the table directly.

#if defined(LEAKY_KERNELS_BYTE_LOOKUP_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_BYTE_LOOKUP_INL_H_
#undef LEAKY_KERNELS_BYTE_LOOKUP_INL_H_
#else
#define LEAKY_KERNELS_BYTE_LOOKUP_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef LEAKY_BYTE_LOOKUP_SCALAR
#if HWY_TARGET == HWY_SCALAR || HWY_TARGET == HWY_EMU128
#define LEAKY_BYTE_LOOKUP_SCALAR 1
#else
#define LEAKY_BYTE_LOOKUP_SCALAR 0
#endif

#if !LEAKY_BYTE_LOOKUP_SCALAR
using DByte = hn::ScalableTag<uint8_t>;

// A 256-entry table held in registers for the loop.
class ByteTable {
 public:
#if HWY_TARGET == HWY_AVX3_DL
  explicit ByteTable(const uint8_t* table) {
    for (int i = 0; i < 4; ++i) part_[i] = hn::LoadU(DByte(), table + 64 * i).raw;
  }
  HWY_INLINE hn::Vec<DByte> operator()(hn::Vec<DByte> x) const {
    // vpermi2b reads bits 0-6 of each index: entries 0-127 and 128-255.
    const __m512i low = _mm512_permutex2var_epi8(part_[0], x.raw, part_[1]);
    const __m512i high = _mm512_permutex2var_epi8(part_[2], x.raw, part_[3]);
    return hn::Vec<DByte>{_mm512_mask_blend_epi8(_mm512_movepi8_mask(x.raw), low, high)};
  }

 private:
  __m512i part_[4];
#else
  explicit ByteTable(const uint8_t* table) : table_(table) {}
  // The 16 rows' lookups by the low nibble, then a tree of 15 blends on the
  // high nibble's bits, each bit moved to the sign (x + x shifts a byte
  // without touching its neighbours): 16 lookups, 15 blends and 7 more
  // instructions a vector on AVX2, where keeping each row's lookup where
  // the high nibble matches took a compare, an and and an or a row (qu8
  // forward over XNNPACK at 64 Mi, 1 thread, Zen 3: 0.83-0.88 before,
  // 1.28-1.34 after; docs/design.md).
  HWY_INLINE hn::Vec<DByte> operator()(hn::Vec<DByte> x) const {
    const DByte d;
    const hn::RebindToSigned<DByte> di;
    const auto low_nibble = hn::And(x, hn::Set(d, 0x0F));
    const auto row = [&](int k) LEAKY_INLINE_LAMBDA {
      return hn::TableLookupBytes(hn::LoadDup128(d, table_ + 16 * k), low_nibble);
    };
    const auto sign = [&](hn::Vec<DByte> v) LEAKY_INLINE_LAMBDA {
      return hn::RebindMask(d, hn::Lt(hn::BitCast(di, v), hn::Zero(di)));
    };
    const auto x2 = hn::Add(x, x);
    const auto x4 = hn::Add(x2, x2);
    const auto bit4 = sign(hn::Add(x4, x4)), bit5 = sign(x4), bit6 = sign(x2), bit7 = sign(x);
    const auto pair = [&](int k) LEAKY_INLINE_LAMBDA {
      return hn::IfThenElse(bit4, row(k + 1), row(k));
    };
    const auto quad = [&](int k) LEAKY_INLINE_LAMBDA {
      return hn::IfThenElse(bit5, pair(k + 2), pair(k));
    };
    const auto half = [&](int k) LEAKY_INLINE_LAMBDA {
      return hn::IfThenElse(bit6, quad(k + 4), quad(k));
    };
    return hn::IfThenElse(bit7, half(8), half(0));
  }

 private:
  const uint8_t* table_;
#endif
};

// The loop both kernels share: whole vectors through `op`, streamed once dst
// is vector-aligned when asked, the rest element by element through `one`.
template <class VectorOp, class OneOp>
HWY_INLINE void ByteLoop(size_t n, uint8_t* dst, bool stream, const VectorOp& op,
                         const OneOp& one) {
  const DByte d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;
  if (stream) {
    const size_t misalignment = reinterpret_cast<uintptr_t>(dst) % lanes;
    const size_t head = HWY_MIN(n, misalignment == 0 ? 0 : lanes - misalignment);
    for (; i < head; ++i) dst[i] = one(i);
    for (; i + lanes <= n; i += lanes) hn::Stream(op(i), d, dst + i);
    hwy::FlushStream();
  } else {
    for (; i + 2 * lanes <= n; i += 2 * lanes) {
      const auto v0 = op(i), v1 = op(i + lanes);
      hn::StoreU(v0, d, dst + i);
      hn::StoreU(v1, d, dst + i + lanes);
    }
    for (; i + lanes <= n; i += lanes) hn::StoreU(op(i), d, dst + i);
  }
  for (; i < n; ++i) dst[i] = one(i);
}
#endif  // !LEAKY_BYTE_LOOKUP_SCALAR

// y[i] = table[x[i]]; y may be x.
HWY_INLINE void ByteLookup(size_t n, const uint8_t* x, uint8_t* y, const uint8_t* table,
                           bool stream) {
#if LEAKY_BYTE_LOOKUP_SCALAR
  (void)stream;
  for (size_t i = 0; i < n; ++i) y[i] = table[x[i]];
#else
  const ByteTable lookup(table);
  ByteLoop(
      n, y, stream, [&](size_t i) LEAKY_INLINE_LAMBDA { return lookup(hn::LoadU(DByte(), x + i)); },
      [&](size_t i) { return table[x[i]]; });
#endif
}

// dx[i] = pass[saved[i]] ? keep[dy[i]] : table[dy[i]] (keep null: dy[i]
// itself); dx may be dy or saved.
HWY_INLINE void ByteSelect(size_t n, const uint8_t* dy, const uint8_t* saved, uint8_t* dx,
                           const uint8_t* table, const uint8_t* pass, const uint8_t* keep,
                           bool stream) {
#if LEAKY_BYTE_LOOKUP_SCALAR
  (void)stream;
  for (size_t i = 0; i < n; ++i) {
    dx[i] = pass[saved[i]] != 0 ? (keep != nullptr ? keep[dy[i]] : dy[i]) : table[dy[i]];
  }
#else
  const ByteTable lookup(table), passes(pass);
  const auto one = [&](size_t i) {
    return pass[saved[i]] != 0 ? (keep != nullptr ? keep[dy[i]] : dy[i]) : table[dy[i]];
  };
  if (keep == nullptr) {
    ByteLoop(
        n, dx, stream,
        [&](size_t i) LEAKY_INLINE_LAMBDA {
          const DByte d;
          const auto g = hn::LoadU(d, dy + i);
          return hn::IfThenElse(hn::MaskFromVec(passes(hn::LoadU(d, saved + i))), g, lookup(g));
        },
        one);
  } else {
    const ByteTable keeps(keep);
    ByteLoop(
        n, dx, stream,
        [&](size_t i) LEAKY_INLINE_LAMBDA {
          const DByte d;
          const auto g = hn::LoadU(d, dy + i);
          return hn::IfThenElse(hn::MaskFromVec(passes(hn::LoadU(d, saved + i))), keeps(g),
                                lookup(g));
        },
        one);
  }
#endif
}

// dx[i] = table[256 * saved[i] + dy[i]] over a 65536-entry table (fp8
// ELU's backward); dx may be dy or saved. One load per element on every
// target: no target has a byte gather, and a 64 KiB table would be 4096
// of the 16-entry lookups above per vector.
HWY_INLINE void BytePairLookup(size_t n, const uint8_t* dy, const uint8_t* saved, uint8_t* dx,
                               const uint8_t* table) {
  for (size_t i = 0; i < n; ++i) dx[i] = table[(size_t{saved[i]} << 8) | dy[i]];
}

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_BYTE_LOOKUP_INL_H_

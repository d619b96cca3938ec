// Per-target storage codecs: how each storage dtype loads into compute
// vectors and is stored back. f16 and bf16 widen to f32 lanes, so one vector
// of compute lanes covers Lanes(f32) stored elements.
//
// Highway 1.0.3 traps found while building these codecs, and the reason for
// code below:
// - f32 -> bf16 DemoteTo truncates; we round to nearest-even ourselves.
// - f16 <-> f32 without F16C (SSSE3, SSE4, EMU128) truncates on the way down
//   and maps inf/NaN to finite values on the way up; we convert with integer
//   ops there. With F16C (AVX2 and up) the hardware is exact.
// - MaskedLoad of 16-bit lanes (and of any lane on SSE4) loads the whole
//   vector, reading past the array end; BlendedStore of 16-bit lanes on AVX2
//   is a scalar loop. Partial vectors therefore use hardware masks only where
//   Highway maps them to vmaskmov (32/64-bit lanes, AVX2 and up) and a
//   one-vector bounce buffer elsewhere.

#if defined(LEAKY_KERNELS_CODECS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_CODECS_INL_H_
#undef LEAKY_KERNELS_CODECS_INL_H_
#else
#define LEAKY_KERNELS_CODECS_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#undef LEAKY_HAVE_F16C
#undef LEAKY_HAVE_WIDE_MASKS
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define LEAKY_HAVE_F16C 1
#define LEAKY_HAVE_WIDE_MASKS 1
#else
#define LEAKY_HAVE_F16C 0
#define LEAKY_HAVE_WIDE_MASKS 0
#endif

// Largest number of compute lanes of any codec on this target.
inline constexpr size_t kMaxLanes = HWY_MAX_BYTES / sizeof(float);

// f32 and f64: storage is the compute type.
template <typename T>
struct NativeCodec {
  using Storage = T;
  using D = hn::ScalableTag<T>;
  static constexpr bool kHardwareMasks = LEAKY_HAVE_WIDE_MASKS;
  static constexpr bool kCanStream = true;
  static constexpr bool kPaired = false;
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) { return hn::LoadU(d, p); }
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) { hn::StoreU(v, d, p); }
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) { hn::Stream(v, d, aligned); }
  static HWY_INLINE hn::Vec<D> MaskedLoad(D d, size_t count, const Storage* p) {
    return hn::MaskedLoad(hn::FirstN(d, count), d, p);
  }
  static HWY_INLINE void MaskedStore(D d, hn::Vec<D> v, size_t count, Storage* p) {
    hn::BlendedStore(v, hn::FirstN(d, count), d, p);
  }
};

using CodecF32 = NativeCodec<float>;
using CodecF64 = NativeCodec<double>;

// Shared by the two 16-bit codecs: u16 storage, f32 compute lanes.
struct HalfStorage {
  using Storage = uint16_t;
  using D = hn::ScalableTag<float>;
  using DU32 = hn::RebindToUnsigned<D>;
  using DI32 = hn::RebindToSigned<D>;
  using DU16 = hn::Rebind<uint16_t, D>;
  static constexpr bool kHardwareMasks = false;
  // Highway 1.0.3 rounds partial-vector Stream up to 16 bytes (writing past
  // the end), so targets whose u16 half-vector is narrower store normally.
  static constexpr bool kCanStream = hn::MaxLanes(DU16()) * sizeof(uint16_t) >= 16;
  static constexpr bool kPaired = false;

  static HWY_INLINE hn::Vec<DU32> LoadBits(const Storage* p) {
    return hn::PromoteTo(DU32(), hn::LoadU(DU16(), p));
  }
  // `bits` holds values <= 0xFFFF, so the saturating i32 -> u16 pack is exact.
  static HWY_INLINE hn::Vec<DU16> Narrow(hn::Vec<DU32> bits) {
    return hn::DemoteTo(DU16(), hn::BitCast(DI32(), bits));
  }
  static HWY_INLINE void StoreBits(hn::Vec<DU32> bits, Storage* p) {
    hn::StoreU(Narrow(bits), DU16(), p);
  }
  static HWY_INLINE void StreamBits(hn::Vec<DU32> bits, Storage* aligned) {
    if constexpr (kCanStream) {
      hn::Stream(Narrow(bits), DU16(), aligned);
    } else {
      hn::StoreU(Narrow(bits), DU16(), aligned);
    }
  }
};

// kGuardNaN = false is for results whose every NaN is quiet and has a zero
// low half (StoreCodecOf below): such a NaN rounds to itself, so the test
// and blend that quiet it and guard a payload living only in the low half
// are left out.
// LeakyReLU bf16 forward without them, the two builds alternated per round
// in one process: 1.13x at 1 thread and 1.14x at 2 at 64 Mi, 1.33x and
// 1.31x at 1 Mi (docs/design.md).
template <bool kGuardNaN>
struct CodecBF16Rounding : HalfStorage {
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return hn::BitCast(d, hn::ShiftLeft<16>(LoadBits(p)));
  }
  // Round to nearest-even on the dropped 16 bits; NaN gets its quiet bit so a
  // payload living only in the dropped half cannot round into inf. Returns
  // the bf16 in the upper half of each u32 (lower half undefined).
  static HWY_INLINE hn::Vec<DU32> RoundedHigh(hn::Vec<D> v) {
    const DU32 du;
    const DI32 di;
    const auto bits = hn::BitCast(du, v);
    const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1));
    const auto rounded = hn::Add(bits, hn::Add(hn::Set(du, 0x7fffu), lsb));
    if constexpr (!kGuardNaN) return rounded;
    const auto magnitude = hn::BitCast(di, hn::And(bits, hn::Set(du, 0x7fffffffu)));
    const auto is_nan = hn::RebindMask(du, hn::Gt(magnitude, hn::Set(di, 0x7f800000)));
    const auto quieted = hn::Or(bits, hn::Set(du, 0x00400000u));
    return hn::IfThenElse(is_nan, quieted, rounded);
  }
  static HWY_INLINE hn::Vec<DU32> ToBits(D /*d*/, hn::Vec<D> v) {
    return hn::ShiftRight<16>(RoundedHigh(v));
  }
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) { StoreBits(ToBits(d, v), p); }
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    StreamBits(ToBits(d, v), aligned);
  }

#if HWY_TARGET == HWY_SCALAR
  static constexpr bool kPaired = false;  // one lane: nothing to pair
#else
  // Paired access: one full u16 vector holds 2 * Lanes(f32) elements. The
  // even elements are the low halves of its u32 lanes, the odd ones the high
  // halves, so widening is one shift (even) or one mask (odd), and narrowing
  // is a shift plus one OddEven blend - no pack or cross-lane permute. This
  // halves the work per element, which made bf16 compute-bound before
  // (docs/design.md).
  static constexpr bool kPaired = true;
  using DU16Full = hn::Repartition<uint16_t, D>;
  static HWY_INLINE hn::Vec<D> LoadEven(D d, const Storage* p) {
    return hn::BitCast(d, hn::ShiftLeft<16>(hn::BitCast(DU32(), hn::LoadU(DU16Full(), p))));
  }
  static HWY_INLINE hn::Vec<D> LoadOdd(D d, const Storage* p) {
    const DU32 du;
    return hn::BitCast(d, hn::And(hn::BitCast(du, hn::LoadU(DU16Full(), p)),
                                  hn::Set(du, 0xffff0000u)));
  }
  static HWY_INLINE hn::Vec<DU16Full> Pack(hn::Vec<D> even, hn::Vec<D> odd) {
    const DU16Full du16;
    return hn::OddEven(hn::BitCast(du16, RoundedHigh(odd)),
                       hn::BitCast(du16, hn::ShiftRight<16>(RoundedHigh(even))));
  }
  static HWY_INLINE void StorePair(D /*d*/, hn::Vec<D> even, hn::Vec<D> odd, Storage* p) {
    hn::StoreU(Pack(even, odd), DU16Full(), p);
  }
  static HWY_INLINE void StreamPair(D /*d*/, hn::Vec<D> even, hn::Vec<D> odd, Storage* aligned) {
    hn::Stream(Pack(even, odd), DU16Full(), aligned);
  }
#endif
};

using CodecBF16 = CodecBF16Rounding<true>;

struct CodecF16 : HalfStorage {
#if LEAKY_HAVE_F16C
  using DF16 = hn::Rebind<hwy::float16_t, D>;
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    return hn::PromoteTo(d, hn::BitCast(DF16(), hn::LoadU(DU16(), p)));
  }
  static HWY_INLINE hn::Vec<DU16> ToHalf(D d, hn::Vec<D> v) {
    (void)d;
    return hn::BitCast(DU16(), hn::DemoteTo(DF16(), v));
  }
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) { hn::StoreU(ToHalf(d, v), DU16(), p); }
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    if constexpr (kCanStream) {
      hn::Stream(ToHalf(d, v), DU16(), aligned);
    } else {
      hn::StoreU(ToHalf(d, v), DU16(), aligned);
    }
  }
#else
  // Exact integer conversions (the same bit rules as leaky::float16).
  static HWY_INLINE hn::Vec<D> Load(D d, const Storage* p) {
    const DU32 du;
    const DI32 di;
    const auto h = LoadBits(p);
    const auto sign = hn::ShiftLeft<16>(hn::And(h, hn::Set(du, 0x8000u)));
    const auto magnitude = hn::And(h, hn::Set(du, 0x7fffu));
    const auto magnitude_i = hn::BitCast(di, magnitude);
    const auto normal = hn::Add(hn::ShiftLeft<13>(magnitude), hn::Set(du, 0x38000000u));
    const auto inf_nan = hn::Add(normal, hn::Set(du, 0x38000000u));
    // magnitude * 2^-24 is exact and lands on a normal f32, so DAZ cannot bite.
    const auto subnormal =
        hn::BitCast(du, hn::Mul(hn::ConvertTo(d, magnitude_i), hn::Set(d, 5.9604644775390625e-8f)));
    auto bits = hn::IfThenElse(hn::RebindMask(du, hn::Lt(magnitude_i, hn::Set(di, 0x400))),
                               subnormal, normal);
    bits = hn::IfThenElse(hn::RebindMask(du, hn::Gt(magnitude_i, hn::Set(di, 0x7bff))), inf_nan,
                          bits);
    // NaN gets its quiet bit, as F16C's widening does.
    bits = hn::IfThenElse(hn::RebindMask(du, hn::Gt(magnitude_i, hn::Set(di, 0x7c00))),
                          hn::Or(bits, hn::Set(du, 0x00400000u)), bits);
    return hn::BitCast(d, hn::Or(bits, sign));
  }
  // Round to nearest-even (F. Giesen's float_to_half_fast3_rtne, vectorised).
  static HWY_INLINE hn::Vec<DU32> ToBits(D d, hn::Vec<D> v) {
    const DU32 du;
    const DI32 di;
    const auto bits = hn::BitCast(du, v);
    const auto sign = hn::ShiftRight<16>(hn::And(bits, hn::Set(du, 0x80000000u)));
    const auto magnitude = hn::And(bits, hn::Set(du, 0x7fffffffu));
    const auto magnitude_i = hn::BitCast(di, magnitude);
    // NaN keeps its upper payload and gets the quiet bit; overflow is inf.
    const auto nan = hn::Or(hn::Set(du, 0x7e00u), hn::And(hn::ShiftRight<13>(magnitude), hn::Set(du, 0x3ffu)));
    const auto overflow = hn::IfThenElse(
        hn::RebindMask(du, hn::Gt(magnitude_i, hn::Set(di, 0x7f800000))), nan, hn::Set(du, 0x7c00u));
    // Subnormal results: adding 0.5f aligns the mantissa so that the FPU's
    // nearest-even rounding drops exactly the bits f16 cannot hold.
    const auto magic = hn::Set(du, 0x3f000000u);
    const auto subnormal =
        hn::Sub(hn::BitCast(du, hn::Add(hn::BitCast(d, magnitude), hn::BitCast(d, magic))), magic);
    const auto odd = hn::And(hn::ShiftRight<13>(magnitude), hn::Set(du, 1));
    const auto normal = hn::ShiftRight<13>(
        hn::Add(hn::Add(magnitude, hn::Set(du, 0xc8000fffu)), odd));
    auto out = hn::IfThenElse(hn::RebindMask(du, hn::Lt(magnitude_i, hn::Set(di, 0x38800000))),
                              subnormal, normal);
    out = hn::IfThenElse(hn::RebindMask(du, hn::Gt(magnitude_i, hn::Set(di, 0x477fefff))),
                         overflow, out);
    return hn::Or(out, sign);
  }
  static HWY_INLINE void Store(D d, hn::Vec<D> v, Storage* p) { StoreBits(ToBits(d, v), p); }
  static HWY_INLINE void Stream(D d, hn::Vec<D> v, Storage* aligned) {
    StreamBits(ToBits(d, v), aligned);
  }
#endif
};

// The codec an op's results go through. An op that declares
// `kQuietNaNsOnly` returns NaN only from an arithmetic operation on an input
// NaN (the FPU quiets it and keeps its payload, on x86 and Arm) or as the
// default NaN (inf * 0): with bf16 inputs each such NaN is quiet with a zero
// low half, so its bf16 results need no NaN guard. An op that can pass a NaN
// input through unchanged (a select) must not declare it: the guard is what
// quiets a signalling NaN.
template <class Codec, class Op>
struct StoreCodecOf {
  using type = Codec;
};
template <class Op>
  requires(Op::kQuietNaNsOnly)
struct StoreCodecOf<CodecBF16, Op> {
  using type = CodecBF16Rounding<false>;
};

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_CODECS_INL_H_

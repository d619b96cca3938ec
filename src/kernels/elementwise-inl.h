// The one streaming loop every elementwise kernel shares: load each source
// through its codec, apply the op's vector functor, store (or stream) the
// result. It knows nothing of threads or tiling; callers hand it one tile.

#if defined(LEAKY_KERNELS_ELEMENTWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef LEAKY_KERNELS_ELEMENTWISE_INL_H_
#undef LEAKY_KERNELS_ELEMENTWISE_INL_H_
#else
#define LEAKY_KERNELS_ELEMENTWISE_INL_H_
#endif

#include <cstdint>
#include <cstring>

#include "hwy/cache_control.h"
#include "hwy/highway.h"
#include "kernels/codecs-inl.h"

HWY_BEFORE_NAMESPACE();
namespace leaky {
namespace HWY_NAMESPACE {

// Loads `count` < Lanes elements. Beyond `count` the lanes hold zeros, which
// every op maps to finite values that are never stored.
template <class Codec>
HWY_INLINE hn::Vec<typename Codec::D> LoadPartial(typename Codec::D d, size_t count,
                                                  const typename Codec::Storage* src) {
  if constexpr (Codec::kHardwareMasks) {
    return Codec::MaskedLoad(d, count, src);
  } else {
    alignas(64) typename Codec::Storage bounce[kMaxLanes] = {};
    std::memcpy(bounce, src, count * sizeof(typename Codec::Storage));
    return Codec::Load(d, bounce);
  }
}

template <class Codec>
HWY_INLINE void StorePartial(typename Codec::D d, hn::Vec<typename Codec::D> v, size_t count,
                             typename Codec::Storage* dst) {
  if constexpr (Codec::kHardwareMasks) {
    Codec::MaskedStore(d, v, count, dst);
  } else {
    alignas(64) typename Codec::Storage bounce[kMaxLanes];
    Codec::Store(d, v, bounce);
    std::memcpy(dst, bounce, count * sizeof(typename Codec::Storage));
  }
}

// dst[i] = op(d, src0[i], src1[i], ...) for i in [0, n). Sources may equal
// dst (in-place): every vector is loaded before the store that covers it.
// With `stream`, whole vectors go out as non-temporal stores once dst is
// vector-aligned; the caller decides when that pays (see the store policy).
template <class LoadCodec, class Op, class... Sources>
HWY_INLINE void Elementwise(size_t n, typename LoadCodec::Storage* dst, bool stream, const Op& op,
                            const Sources*... srcs) {
  // Loads are the same through either; stores may drop the bf16 NaN guard.
  using Codec = typename StoreCodecOf<LoadCodec, Op>::type;
  using Storage = typename Codec::Storage;
  const typename Codec::D d;
  const size_t lanes = hn::Lanes(d);
  size_t i = 0;

  // Paired codecs move two compute vectors per stored vector.
  const size_t step = Codec::kPaired ? 2 * lanes : lanes;
  const size_t vector_bytes = step * sizeof(Storage);

  const uintptr_t address = reinterpret_cast<uintptr_t>(dst);
  if (Codec::kCanStream && stream && address % sizeof(Storage) == 0) {
    const size_t head = HWY_MIN(n, ((vector_bytes - address % vector_bytes) % vector_bytes) /
                                       sizeof(Storage));
    for (; i + lanes <= head; i += lanes) {
      Codec::Store(d, op(d, Codec::Load(d, srcs + i)...), dst + i);
    }
    if (i < head) {
      StorePartial<Codec>(d, op(d, LoadPartial<Codec>(d, head - i, srcs + i)...), head - i,
                          dst + i);
      i = head;
    }
    if constexpr (Codec::kPaired) {
      for (; i + step <= n; i += step) {
        const auto even = op(d, Codec::LoadEven(d, srcs + i)...);
        const auto odd = op(d, Codec::LoadOdd(d, srcs + i)...);
        Codec::StreamPair(d, even, odd, dst + i);
      }
    } else {
      for (; i + 2 * lanes <= n; i += 2 * lanes) {
        const auto v0 = op(d, Codec::Load(d, srcs + i)...);
        const auto v1 = op(d, Codec::Load(d, srcs + i + lanes)...);
        Codec::Stream(d, v0, dst + i);
        Codec::Stream(d, v1, dst + i + lanes);
      }
    }
    for (; i + lanes <= n; i += lanes) Codec::Stream(d, op(d, Codec::Load(d, srcs + i)...), dst + i);
    // Non-temporal stores are weakly ordered: fence before the pool reports
    // this tile done, so other threads see every byte.
    hwy::FlushStream();
  } else {
    if constexpr (Codec::kPaired) {
      for (; i + 2 * step <= n; i += 2 * step) {
        const auto e0 = op(d, Codec::LoadEven(d, srcs + i)...);
        const auto o0 = op(d, Codec::LoadOdd(d, srcs + i)...);
        const auto e1 = op(d, Codec::LoadEven(d, srcs + i + step)...);
        const auto o1 = op(d, Codec::LoadOdd(d, srcs + i + step)...);
        Codec::StorePair(d, e0, o0, dst + i);
        Codec::StorePair(d, e1, o1, dst + i + step);
      }
    }
    // Four vectors in flight hide load latency; more gains nothing measurable
    // on a memory-bound loop.
    for (; i + 4 * lanes <= n; i += 4 * lanes) {
      const auto v0 = op(d, Codec::Load(d, srcs + i)...);
      const auto v1 = op(d, Codec::Load(d, srcs + i + lanes)...);
      const auto v2 = op(d, Codec::Load(d, srcs + i + 2 * lanes)...);
      const auto v3 = op(d, Codec::Load(d, srcs + i + 3 * lanes)...);
      Codec::Store(d, v0, dst + i);
      Codec::Store(d, v1, dst + i + lanes);
      Codec::Store(d, v2, dst + i + 2 * lanes);
      Codec::Store(d, v3, dst + i + 3 * lanes);
    }
    for (; i + lanes <= n; i += lanes) Codec::Store(d, op(d, Codec::Load(d, srcs + i)...), dst + i);
  }
  if (i < n) {
    const size_t rest = n - i;
    StorePartial<Codec>(d, op(d, LoadPartial<Codec>(d, rest, srcs + i)...), rest, dst + i);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace leaky
HWY_AFTER_NAMESPACE();

#endif  // LEAKY_KERNELS_ELEMENTWISE_INL_H_

#include "ops/channels.h"

#include <cstdint>

#include "runtime/error.h"

namespace leaky::internal {
namespace {

// Non-temporal stores pay only for long contiguous segments; short
// per-channel rows would fence after every few vectors.
constexpr size_t kMinStreamSegment = 4096;

}  // namespace

leaky_status DescribeChannelCall(const char* function, leaky_dtype dtype, size_t outer,
                                 size_t channels, size_t inner, const leaky_options* options,
                                 ChannelCall* c, size_t joined_channels) {
  c->params = kernels::Params{};
  LEAKY_RETURN_IF_ERROR(DescribeCall(function, dtype, 0, options, {}, &c->call));
  if (channels == 0 && outer != 0 && inner != 0) {
    return Fail(LEAKY_ERROR_SIZE, "%s: channels is 0 but outer = %zu and inner = %zu", function,
                outer, inner);
  }
  size_t n = outer;
  for (size_t factor : {channels, inner}) {
    if (factor != 0 && n > SIZE_MAX / factor) {
      return Fail(LEAKY_ERROR_SIZE, "%s: outer * channels * inner overflows", function);
    }
    n *= factor;
  }
  c->call.n = n;
  c->params.common.channels = channels == 0 ? 1 : channels;
  c->params.common.inner = inner == 0 ? 1 : inner;
  const bool joined = inner <= 1 && channels <= joined_channels;
  const size_t segment = inner > 1 ? inner : (joined ? n : channels);
  if (segment < kMinStreamSegment) KeepStoresCached(&c->call.options);
  return LEAKY_OK;
}

}  // namespace leaky::internal

#include "plan_options.h"

#include <limits>
#include <stdexcept>

#include "golden_io.h"
#include "user_message.h"

namespace leaky::toolkit {

std::string PlanOptionValue(const PlanOptions& o, const std::string& flag) {
  if (flag == "--preset") return o.preset;
  if (flag == "--cores") return std::to_string(o.cores);
  if (flag == "--buffer-bytes") return std::to_string(o.buffer_bytes);
  if (flag == "--align") return std::to_string(o.align_bytes);
  if (flag == "--buffers") return std::to_string(o.buffers);
  if (flag == "--split") return o.split;
  if (flag == "--tile-elems") return std::to_string(o.tile_elems);
  if (flag == "--address-offset") return std::to_string(o.address_offset);
  return "";
}

nlohmann::json PlanOptions::ToJson() const {
  return {{"preset", preset}, {"cores", cores}, {"buffer_bytes", buffer_bytes},
          {"align_bytes", align_bytes}, {"buffers", buffers}, {"split", split},
          {"tile_elems", tile_elems}, {"address_offset", address_offset}};
}

namespace {

// Field `key` of a recorded plan, in plain words when it is missing or of
// another type (nlohmann's texts are for programmers).
std::string Text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_string()) {
    throw std::invalid_argument(std::string("\"") + key + "\" must be a string");
  }
  return it->get<std::string>();
}

template <class T>
T Whole(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number_unsigned() ||
      it->get<uint64_t>() > std::numeric_limits<T>::max()) {
    throw std::invalid_argument(std::string("\"") + key + "\" must be a whole number from 0 to " +
                                std::to_string(std::numeric_limits<T>::max()));
  }
  return static_cast<T>(it->get<uint64_t>());
}

}  // namespace

PlanOptions PlanOptions::FromJson(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("a plan must be a JSON object");
  PlanOptions o;
  o.preset = Text(j, "preset");
  o.cores = Whole<uint32_t>(j, "cores");
  o.buffer_bytes = Whole<uint64_t>(j, "buffer_bytes");
  o.align_bytes = Whole<uint32_t>(j, "align_bytes");
  o.buffers = Whole<uint32_t>(j, "buffers");
  o.split = Text(j, "split");
  o.tile_elems = Whole<uint64_t>(j, "tile_elems");
  o.address_offset = Whole<uint32_t>(j, "address_offset");
  return o;
}

leaky_plan_request MakePlanRequest(const PlanOptions& options, leaky_dtype dtype, uint64_t n) {
  const uint32_t streams = options.op == "backward" ? 3 : 2;
  leaky_plan_request request{};
  if (options.preset == "cpu") {
    if (leaky_cpu_plan_request(dtype, n, streams, nullptr, &request) != LEAKY_OK) {
      throw std::invalid_argument(LastErrorForUser());
    }
  } else if (options.preset == "npu") {
    request.total_length = n;
    request.element_bytes = static_cast<uint32_t>(DtypeBytes(dtype));
    request.streams = streams;
    request.max_cores = 48;
    request.align_bytes = 32;
    request.buffer_bytes = 192 << 10;
    request.buffer_count = 2;
    request.min_bytes_per_core = 0;  // a kernel launch wakes every core anyway
    request.stream_threshold_bytes = UINT64_MAX;
    request.stream_stores = 0;
  } else {
    throw std::invalid_argument("unknown preset '" + options.preset + "'");
  }
  ApplyPlanOverrides(options, &request);
  return request;
}

leaky_plan_request MakeBytePlanRequest(const PlanOptions& options, uint64_t n) {
  // The CPU's request depends on the element only through element_bytes
  // (the 8-bit ops plan with PlanForCpu(n, 1, ...)); the public call takes
  // a float dtype, so ask for f32's and say one byte.
  leaky_plan_request request = MakePlanRequest(options, LEAKY_F32, n);
  request.element_bytes = 1;
  return request;
}

uint32_t SplitCode(const std::string& name) {
  if (name == "granule") return LEAKY_SPLIT_GRANULE;
  if (name == "even") return LEAKY_SPLIT_EVEN;
  if (name == "balanced") return LEAKY_SPLIT_BALANCED;
  throw std::invalid_argument("unknown split '" + name + "' (granule, even or balanced)");
}

const char* SplitName(uint32_t split) {
  return split == LEAKY_SPLIT_EVEN ? "even" : split == LEAKY_SPLIT_BALANCED ? "balanced" : "granule";
}

void ApplyPlanOverrides(const PlanOptions& options, leaky_plan_request* request) {
  if (options.cores != 0) request->max_cores = options.cores;
  if (options.buffer_bytes != 0) request->buffer_bytes = options.buffer_bytes;
  if (options.align_bytes != 0) request->align_bytes = options.align_bytes;
  if (options.buffers != 0) request->buffer_count = options.buffers;
  request->split = SplitCode(options.split);
  if (options.tile_elems != 0) request->tile_length = options.tile_elems;
  if (options.address_offset != 0) request->address_offset = options.address_offset;
}

}  // namespace leaky::toolkit

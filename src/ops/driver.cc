#include "ops/driver.h"

#include <algorithm>
#include <atomic>

#include "plan/cpu_plan.h"
#include "runtime/parallel.h"
#include "runtime/pool.h"

namespace leaky::internal {
namespace {

// The tiles of one core's range not yet claimed: (front << 32) | back, in
// tile numbers. The core's own task claims from the front, others steal
// from the back, both by compare-and-swap on the one word. (One per cache
// line made no difference that leaky bench could see: docs/design.md.)
using TileDeque = std::atomic<uint64_t>;

// One call's work, shared by every core's task.
struct Job {
  const leaky_tiling* tiling;
  const OpDesc* op;
  kernels::Params params;  // the op's, with the plan's stream_stores
  TileDeque* deques;       // one per core used; null: each core runs its own range only
};

// The kernel on elements [start, start + length): the elementwise slots
// advance with the tile, each by its own element size (the conv epilogue
// reads 4-byte accumulators and writes bytes), the side arrays do not.
void RunTile(const Job& job, uint64_t start, uint64_t length) {
  const OpDesc& op = *job.op;
  auto at = [start](const Slot<const void*>& slot) {
    return slot.pointer != nullptr
               ? static_cast<const char*>(slot.pointer) + start * slot.element_bytes
               : nullptr;
  };
  char* dst = static_cast<char*>(op.dst.pointer) + start * op.dst.element_bytes;
  if (const auto* unary = std::get_if<kernels::UnaryKernel>(&op.kernel)) {
    (*unary)(length, at(op.x), dst, job.params);
  } else if (const auto* binary = std::get_if<kernels::BinaryKernel>(&op.kernel)) {
    (*binary)(length, at(op.dy), at(op.x), dst, job.params);
  } else {
    const kernels::SideArrays side{op.mask.pointer, op.side_output.pointer};
    std::get<kernels::IndexedKernel>(op.kernel)(length, start, at(op.dy),
                                                at(op.x), op.side_input.pointer, dst,
                                                side, job.params);
  }
}

// In-place calls keep the automatic policy from streaming: the output lines
// were just read, so they sit in cache and a non-temporal store only evicts
// them (measured in docs/design.md).
leaky_options InPlacePolicy(const leaky_options& options, bool in_place) {
  leaky_options resolved = options;
  if (in_place) KeepStoresCached(&resolved);
  return resolved;
}

// Claims the next tile of a deque, from the front (its core's task) or
// the back (a thief); false once it is empty.
bool ClaimTile(TileDeque& deque, bool front, uint64_t* tile) {
  uint64_t bounds = deque.load(std::memory_order_relaxed);
  for (;;) {
    const uint64_t first = bounds >> 32, end = bounds & 0xffffffffu;
    if (first >= end) return false;
    const uint64_t next = front ? bounds + (uint64_t{1} << 32) : bounds - 1;
    if (deque.compare_exchange_weak(bounds, next, std::memory_order_relaxed)) {
      *tile = front ? first : end - 1;
      return true;
    }
  }
}

void RunStolenTile(const Job& job, uint32_t core, uint64_t tile) {
  uint64_t start, length;
  leaky_tiling_tile_range(job.tiling, core, tile, &start, &length);
  RunTile(job, start, length);
}

// A core's task with stealing: its own tiles in order from the front (as
// planned), then tiles from the back of the other cores' ranges, one at a
// time, until none is left. A worker that starts late (descheduled by a
// busy neighbour, or asleep) then costs the call only the tile it is in:
// the others have taken the rest of its range from the back, and it joins
// whatever is left when it runs. Without such delays every core ends its
// own range at about the same time and the tiles run exactly as planned.
// Which thread runs a tile never changes a result (elementwise kernels; the
// dropout stream is keyed by element index).
void RunCoreStealing(const Job& job, uint32_t core) {
  const uint32_t cores = job.tiling->cores_used;
  uint64_t tile;
  while (ClaimTile(job.deques[core], /*front=*/true, &tile)) RunStolenTile(job, core, tile);
  uint64_t stolen = 0;
  for (uint32_t k = 1; k < cores; ++k) {
    const uint32_t victim = (core + k) % cores;
    while (ClaimTile(job.deques[victim], /*front=*/false, &tile)) {
      RunStolenTile(job, victim, tile);
      ++stolen;
    }
  }
  if (stolen != 0) CountStolenTiles(stolen);
}

void RunCore(void* context, size_t core) {
  const Job& job = *static_cast<const Job*>(context);
  if (job.deques != nullptr) return RunCoreStealing(job, static_cast<uint32_t>(core));
  const leaky_tiling* tiling = job.tiling;
  uint64_t first, count;
  leaky_tiling_core_granules(tiling, static_cast<uint32_t>(core), &first, &count);
  // Walk the tiles incrementally: the same ranges as leaky_tiling_tile_range
  // (grid coordinates from the core's first granule, clamped to [0, n)),
  // without its divisions per tile (they show at 4 Ki-element calls).
  const uint64_t lead = tiling->lead_length, n = tiling->total_length;
  const auto element_at = [lead, n](uint64_t grid) {
    grid = grid > lead ? grid - lead : 0;
    return grid < n ? grid : n;
  };
  const uint64_t tile = tiling->tile_length, grid_end = (first + count) * tiling->granule_length;
  uint64_t grid = first * tiling->granule_length;
  uint64_t start = element_at(grid);
  while (grid < grid_end) {
    grid = grid_end - grid > tile ? grid + tile : grid_end;
    const uint64_t stop = element_at(grid);
    RunTile(job, start, stop - start);
    start = stop;
  }
}

}  // namespace

void KeepStoresCached(leaky_options* options) {
  if (options->stream_stores == -1) options->stream_stores = 0;
}

leaky_status DescribeCall(const char* function, leaky_dtype dtype, size_t n,
                          const leaky_options* options, std::initializer_list<NamedValue> scalars,
                          Call* call) {
  leaky_status status = LEAKY_OK;
  *call = Call{function, dtype, n, ElementBytes(function, dtype, &status), {0, -1, nullptr}};
  if (call->element_bytes == 0) return status;
  LEAKY_RETURN_IF_ERROR(ResolveOptions(function, options, &call->options));
  return CheckFinite(function, scalars);
}

leaky_status CheckOp(const OpDesc& op) {
  Operand operands[7];
  size_t count = 0;
  auto add = [&](const auto& slot, Role role) {
    if (slot.name != nullptr) {
      operands[count++] = {slot.name, slot.pointer, slot.count, slot.element_bytes, role,
                           slot.optional};
    }
  };
  add(op.side_input, Role::kSideInput);
  add(op.dy, Role::kInput);
  add(op.x, Role::kInput);
  add(op.mask, Role::kSideInput);
  add(op.dst, Role::kOutput);
  add(op.side_output, Role::kSideOutput);
  add(op.reduction, Role::kReduction);
  return CheckOperands(op.call.function, operands, count);
}

leaky_status PlanOp(const OpDesc& op, leaky_tiling* tiling) {
  const Call& call = op.call;
  // The streams the pass moves: every elementwise array present, counted in
  // arrays of dst's element size, the plan's: an input of wider elements
  // (the epilogue's int32 to its byte output) is that many streams, so the
  // traffic that sizes tiles, cores and the streaming threshold is right,
  // and granules of whole dst cache lines are whole input lines too.
  const size_t unit = op.dst.element_bytes;
  uint32_t streams = 1;  // dst
  for (const Slot<const void*>* slot : {&op.dy, &op.x}) {
    if (slot->pointer != nullptr) {
      streams += static_cast<uint32_t>((slot->element_bytes + unit - 1) / unit);
    }
  }
  if (op.side_output.pointer != nullptr && op.side_output.count == call.n) ++streams;
  const bool in_place = op.dst.pointer == op.x.pointer || op.dst.pointer == op.dy.pointer;
  LEAKY_RETURN_IF_ERROR(PlanForCpu(call.function, call.n, unit, streams,
                                   InPlacePolicy(call.options, in_place), op.dst.pointer, tiling));
  // A per-channel reduction (ReducePerChannel) runs on all the call's threads.
  const int threads = op.reduction.pointer != nullptr
                          ? std::max(call.options.num_threads, static_cast<int>(tiling->cores_used))
                          : static_cast<int>(tiling->cores_used);
  return ReadyThreads(call.function, threads, call.options.executor);
}

namespace {

// Stealing needs a deque per core, on the stack up to kMaxStealingCores
// (larger machines run each core's range as planned), and tile numbers that
// fit 32 bits; one core has nobody to steal from. Only calls of several
// cores come here, since the deques' constructors write them (512 bytes):
// made in every call, a 4 Ki-element call on one thread ran at 0.92-0.93 of
// XNNPACK, made here at 1.00-1.13 (leaky bench, Zen 4 AVX3_DL, the two
// builds alternated three times; padded to a line each, 0.85-0.90).
// ParallelFor's threads start after these stores (the pool publishes the
// call with release order; an executor's own synchronization does too).
[[gnu::noinline]] void RunCoresStealing(Job& job, const leaky_executor* executor) {
  constexpr uint32_t kMaxStealingCores = 64;
  const leaky_tiling& tiling = *job.tiling;
  const uint32_t cores = tiling.cores_used;
  TileDeque deques[kMaxStealingCores];
  bool fits = cores <= kMaxStealingCores;
  for (uint32_t core = 0; fits && core < cores; ++core) {
    const uint64_t tiles = leaky_tiling_tile_count(&tiling, core);
    fits = tiles <= 0xffffffffu;
    deques[core].store(tiles, std::memory_order_relaxed);
  }
  job.deques = fits ? deques : nullptr;
  ParallelFor(cores, static_cast<int>(cores), &RunCore, &job, executor);
}

}  // namespace

void RunPlannedOp(const OpDesc& op, const leaky_tiling& tiling) {
  Job job{&tiling, &op, op.params, nullptr};
  job.params.common.stream_stores = tiling.stream_stores != 0;
  const uint32_t cores = tiling.cores_used;
  if (cores > 1) return RunCoresStealing(job, op.call.options.executor);
  ParallelFor(cores, static_cast<int>(cores), &RunCore, &job, op.call.options.executor);
}

leaky_status RunOp(const OpDesc& op) {
  if (op.call.n == 0) return LEAKY_OK;
  leaky_tiling tiling;
  LEAKY_RETURN_IF_ERROR(PlanOp(op, &tiling));
  RunPlannedOp(op, tiling);
  return LEAKY_OK;
}

leaky_status CheckAndRunOp(const OpDesc& op) {
  LEAKY_RETURN_IF_ERROR(CheckOp(op));
  return RunOp(op);
}

leaky_status RunUnaryOp(const Call& call, const void* x, void* y,
                        UnaryKernels kernels::KernelTable::*field, const kernels::Params& params) {
  OpDesc op{call, (kernels::Dispatched().*field)[call.dtype], params};
  op.x = Elementwise(call, "x", x);
  op.dst = Elementwise(call, "y", y);
  return CheckAndRunOp(op);
}

leaky_status RunBinaryOp(const Call& call, const void* dy, const void* saved, void* dx,
                         BinaryKernels kernels::KernelTable::*field, const kernels::Params& params,
                         const char* saved_name) {
  OpDesc op{call, (kernels::Dispatched().*field)[call.dtype], params};
  op.dy = Elementwise(call, "dy", dy);
  op.x = Elementwise(call, saved_name, saved);
  op.dst = Elementwise(call, "dx", dx);
  return CheckAndRunOp(op);
}

}  // namespace leaky::internal

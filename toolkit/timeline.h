// `leaky plan --timeline`: a pipeline model of one launch. Per core, tile
// after tile goes through three engines - copy-in, vector compute,
// copy-out - each busy with one tile at a time; with B buffers, tile i's
// copy-in waits for the copy-out of tile i - B (its buffer). Times come from
// a copy bandwidth per core and direction and a vector throughput per core
// (options; the presets carry example numbers, not a product's).
#ifndef LEAKY_TOOLKIT_TIMELINE_H_
#define LEAKY_TOOLKIT_TIMELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "layout.h"

namespace leaky::toolkit {

struct Span {
  double start = 0, end = 0;  // nanoseconds from launch
};

struct TileTimes {
  uint64_t tile = 0, elements = 0;
  Span copy_in, compute, copy_out;
};

struct CoreTimeline {
  uint32_t core = 0;
  std::vector<TileTimes> tiles;
  double end = 0;     // the core's last copy-out
  double serial = 0;  // the same work with nothing overlapped
};

struct Timeline {
  uint32_t buffers = 0;
  std::vector<CoreTimeline> cores;
  double makespan = 0;      // the slowest core
  uint32_t slowest_core = 0;
};

// copy_bytes_per_ns: each of copy-in and copy-out, per core (GB/s);
// elements_per_ns: vector compute per core (G elements/s). The layout's
// streams give the bytes: streams - 1 inputs in, one output out.
Timeline ModelTimeline(const Layout& layout, uint32_t buffers, double copy_bytes_per_ns,
                       double elements_per_ns);

// A self-contained SVG Gantt chart: per core, three lanes (copy-in,
// compute, copy-out), a legend, a time axis with 1-2-5 ticks. Every core
// when there are at most `max_cores`, else the `max_cores` slowest (the
// slowest always), the caption saying how many are not drawn.
std::string TimelineSvg(const Timeline& timeline, const std::string& title, uint32_t max_cores);

}  // namespace leaky::toolkit

#endif  // LEAKY_TOOLKIT_TIMELINE_H_

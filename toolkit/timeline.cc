#include "timeline.h"

#include <algorithm>
#include <cstdio>

namespace leaky::tools {

Timeline ModelTimeline(const Layout& layout, uint32_t buffers, double copy_bytes_per_ns,
                       double elements_per_ns) {
  Timeline t;
  t.buffers = buffers;
  const double inputs = layout.streams - 1;
  for (uint32_t core = 0; core < layout.cores(); ++core) {
    CoreTimeline c;
    c.core = core;
    const uint64_t tiles = layout.core_length[core] == 0 ? 0 : layout.TileCount(core);
    for (uint64_t i = 0; i < tiles; ++i) {
      uint64_t start, length;
      layout.TileRange(core, i, &start, &length);
      const double bytes = static_cast<double>(length) * layout.element_bytes;
      const double in = inputs * bytes / copy_bytes_per_ns;
      const double compute = static_cast<double>(length) / elements_per_ns;
      const double out = bytes / copy_bytes_per_ns;
      TileTimes tile;
      tile.tile = i;
      tile.elements = length;
      double ready = i > 0 ? c.tiles[i - 1].copy_in.end : 0;
      if (i >= buffers) ready = std::max(ready, c.tiles[i - buffers].copy_out.end);
      tile.copy_in = {ready, ready + in};
      const double compute_start = std::max(tile.copy_in.end, i > 0 ? c.tiles[i - 1].compute.end : 0);
      tile.compute = {compute_start, compute_start + compute};
      const double out_start = std::max(tile.compute.end, i > 0 ? c.tiles[i - 1].copy_out.end : 0);
      tile.copy_out = {out_start, out_start + out};
      c.serial += in + compute + out;
      c.tiles.push_back(tile);
    }
    c.end = c.tiles.empty() ? 0 : c.tiles.back().copy_out.end;
    if (c.end > t.makespan) {
      t.makespan = c.end;
      t.slowest_core = core;
    }
    t.cores.push_back(std::move(c));
  }
  return t;
}

std::string TimelineSvg(const Timeline& timeline, const std::string& title, uint32_t max_cores) {
  const uint32_t shown = std::min<uint32_t>(max_cores, static_cast<uint32_t>(timeline.cores.size()));
  const double width = 960, left = 80, lane = 10, row = 3 * lane + 12, top = 40;
  const double scale = timeline.makespan > 0 ? (width - left - 20) / timeline.makespan : 0;
  const double height = top + shown * row + 30;
  std::string svg;
  char buffer[512];
  std::snprintf(buffer, sizeof(buffer),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "font-family=\"sans-serif\" font-size=\"11\">\n"
                "<text x=\"8\" y=\"18\" font-size=\"13\">%s</text>\n"
                "<text x=\"8\" y=\"32\">copy-in</text><rect x=\"60\" y=\"24\" width=\"12\" "
                "height=\"8\" fill=\"#4e79a7\"/><text x=\"80\" y=\"32\">compute</text><rect "
                "x=\"132\" y=\"24\" width=\"12\" height=\"8\" fill=\"#f28e2b\"/><text x=\"152\" "
                "y=\"32\">copy-out</text><rect x=\"204\" y=\"24\" width=\"12\" height=\"8\" "
                "fill=\"#59a14f\"/>\n",
                width, height, title.c_str());
  svg += buffer;
  const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f"};
  const char* names[] = {"copy-in", "compute", "copy-out"};
  for (uint32_t k = 0; k < shown; ++k) {
    const CoreTimeline& core = timeline.cores[k];
    const double y = top + k * row;
    std::snprintf(buffer, sizeof(buffer), "<text x=\"8\" y=\"%.1f\">core %u</text>\n", y + 2 * lane,
                  core.core);
    svg += buffer;
    for (const TileTimes& tile : core.tiles) {
      const Span spans[] = {tile.copy_in, tile.compute, tile.copy_out};
      for (int s = 0; s < 3; ++s) {
        std::snprintf(buffer, sizeof(buffer),
                      "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                      "stroke=\"white\" stroke-width=\"0.5\"><title>core %u tile %llu %s: "
                      "%.1f-%.1f ns</title></rect>\n",
                      left + spans[s].start * scale, y + s * lane,
                      std::max(0.5, (spans[s].end - spans[s].start) * scale), lane - 1, colors[s],
                      core.core, static_cast<unsigned long long>(tile.tile), names[s],
                      spans[s].start, spans[s].end);
        svg += buffer;
      }
    }
  }
  std::snprintf(buffer, sizeof(buffer),
                "<text x=\"%.0f\" y=\"%.0f\">0</text><text x=\"%.0f\" y=\"%.0f\" "
                "text-anchor=\"end\">%.0f ns</text>\n</svg>\n",
                left, height - 8, width - 20, height - 8, timeline.makespan);
  svg += buffer;
  return svg;
}

}  // namespace leaky::tools

#include "timeline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "vega.h"

namespace leaky::toolkit {

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
      const double compute_start =
          std::max(tile.copy_in.end, i > 0 ? c.tiles[i - 1].compute.end : 0);
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

namespace {

// A tick step of 1, 2 or 5 times a power of ten giving at most `ticks`
// intervals over `span`.
double NiceStep(double span, int ticks) {
  const double raw = span / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

}  // namespace

std::string TimelineSvg(const Timeline& timeline, const std::string& title, uint32_t max_cores) {
  const uint32_t total = static_cast<uint32_t>(timeline.cores.size());
  // The slowest cores set the time: when not all fit, those are drawn
  // (the slowest always), in core order, and the caption counts the rest.
  std::vector<uint32_t> shown(total);
  for (uint32_t i = 0; i < total; ++i) shown[i] = i;
  if (total > max_cores) {
    std::stable_sort(shown.begin(), shown.end(), [&](uint32_t a, uint32_t b) {
      return timeline.cores[a].end > timeline.cores[b].end;
    });
    shown.resize(max_cores);
    std::sort(shown.begin(), shown.end());
  }
  const double width = 960, left = 120, right = 30, lane = 10, row = 3 * lane + 8, top = 66;
  const double plot_width = width - left - right;
  const double span = timeline.makespan > 0 ? timeline.makespan : 1;
  // Microseconds once the labels would need five digits of nanoseconds.
  const bool micro = span >= 10000;
  const double unit = micro ? 1000 : 1;
  const double step = NiceStep(span / unit, 8) * unit;
  const double axis_end = std::ceil(span / step - 1e-9) * step;
  const double scale = plot_width / axis_end;
  const double plot_bottom = top + static_cast<double>(shown.size()) * row;
  const double height = plot_bottom + 44;
  std::string svg;
  char buffer[768];
  std::snprintf(buffer, sizeof(buffer),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">%s</text>\n",
                width, height, width, height, HtmlEscape(title).c_str());
  svg += buffer;
  std::string caption =
      total > shown.size() ? std::to_string(shown.size()) + " slowest of " + std::to_string(total) +
                                 " cores drawn; " + std::to_string(total - shown.size()) + " of " +
                                 std::to_string(total) + " cores not drawn (the fastest)"
                           : "all " + std::to_string(total) + " cores drawn";
  caption += "; the slowest, core " + std::to_string(timeline.slowest_core) + ", sets the time (" +
             std::to_string(timeline.buffers) + " buffer(s))";
  std::snprintf(buffer, sizeof(buffer), "<text x=\"8\" y=\"34\" fill=\"#444\">%s</text>\n",
                HtmlEscape(caption).c_str());
  svg += buffer;
  // The legend: each swatch directly left of its own label.
  const char* colors[] = {"#4e79a7", "#f28e2b", "#59a14f"};
  const char* names[] = {"copy-in", "compute", "copy-out"};
  svg += "<g class=\"legend\">\n";
  double x = 8;
  for (int s = 0; s < 3; ++s) {
    std::snprintf(
        buffer, sizeof(buffer),
        "<rect x=\"%.0f\" y=\"43\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%.0f\" "
        "y=\"52\">%s</text>\n",
        x, colors[s], x + 16, names[s]);
    svg += buffer;
    x += 16 + 7.0 * static_cast<double>(std::string(names[s]).size()) + 18;
  }
  svg += "</g>\n";
  // The time axis: gridlines and labels at 1-2-5 steps.
  svg += "<g class=\"axis\">\n";
  const int ticks = static_cast<int>(std::lround(axis_end / step));
  for (int i = 0; i <= ticks; ++i) {
    const double t = i * step, tx = left + t * scale;
    std::snprintf(buffer, sizeof(buffer),
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#ddd\"/>"
                  "<text class=\"tick\" x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n",
                  tx, tx, top - 4, plot_bottom + 4, tx, plot_bottom + 16, t / unit);
    svg += buffer;
  }
  std::snprintf(buffer, sizeof(buffer),
                "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">time from launch (%s)</text>\n"
                "</g>\n",
                left + plot_width / 2, plot_bottom + 34, micro ? "\xc2\xb5s" : "ns");
  svg += buffer;
  for (size_t k = 0; k < shown.size(); ++k) {
    const CoreTimeline& core = timeline.cores[shown[k]];
    const double y = top + static_cast<double>(k) * row;
    const bool slowest = core.core == timeline.slowest_core;
    std::snprintf(buffer, sizeof(buffer), "<text x=\"8\" y=\"%.1f\"%s>core %u%s</text>\n",
                  y + 2 * lane, slowest ? " font-weight=\"bold\"" : "", core.core,
                  slowest ? " (slowest)" : "");
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
  svg += "</svg>\n";
  return svg;
}

}  // namespace leaky::toolkit

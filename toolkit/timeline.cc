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

// Cores whose tiles run at the very same times (an even split's equal
// shares): one row each, in the order of their first core.
struct CoreGroup {
  std::vector<uint32_t> cores;  // ascending
  double end = 0;
};

std::vector<CoreGroup> GroupAlike(const Timeline& timeline) {
  std::vector<CoreGroup> groups;
  auto alike = [](const CoreTimeline& a, const CoreTimeline& b) {
    if (a.tiles.size() != b.tiles.size()) return false;
    for (size_t i = 0; i < a.tiles.size(); ++i) {
      const TileTimes &x = a.tiles[i], &y = b.tiles[i];
      if (x.copy_in.start != y.copy_in.start || x.copy_in.end != y.copy_in.end ||
          x.compute.start != y.compute.start || x.compute.end != y.compute.end ||
          x.copy_out.start != y.copy_out.start || x.copy_out.end != y.copy_out.end) {
        return false;
      }
    }
    return true;
  };
  for (uint32_t c = 0; c < timeline.cores.size(); ++c) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const CoreGroup& g) {
      return alike(timeline.cores[g.cores.front()], timeline.cores[c]);
    });
    if (it == groups.end()) {
      groups.push_back({{c}, timeline.cores[c].end});
    } else {
      it->cores.push_back(c);
    }
  }
  return groups;
}

// "core 7", "cores 0-46 (47 alike)", "cores 1, 5, 9 (3 alike)",
// "12 cores alike (0, 2, 4, ...)".
std::string GroupLabel(const std::vector<uint32_t>& cores) {
  if (cores.size() == 1) return "core " + std::to_string(cores[0]);
  const std::string count = std::to_string(cores.size());
  if (cores.back() - cores.front() + 1 == cores.size()) {
    return "cores " + std::to_string(cores.front()) + "-" + std::to_string(cores.back()) + " (" +
           count + " alike)";
  }
  if (cores.size() <= 3) {
    std::string list;
    for (uint32_t c : cores) list += (list.empty() ? "" : ", ") + std::to_string(c);
    return "cores " + list + " (" + count + " alike)";
  }
  return count + " cores alike (" + std::to_string(cores[0]) + ", " + std::to_string(cores[1]) +
         ", ...)";
}

// A time in the axis's unit: "2931 ns", or "2.931 us" past 10,000 ns.
std::string TimeText(double ns, bool micro) {
  char text[48];
  if (micro) {
    std::snprintf(text, sizeof(text), "%.4g \xc2\xb5s", ns / 1000);
  } else {
    std::snprintf(text, sizeof(text), "%.0f ns", ns);
  }
  return text;
}

}  // namespace

std::string TimelineSvg(const Timeline& timeline, const std::string& title, uint32_t max_cores) {
  const uint32_t total = static_cast<uint32_t>(timeline.cores.size());
  // Tied cores share a row; the slowest rows set the time: when not all
  // fit, those are drawn (the slowest always), in core order, and the
  // caption counts the cores left out.
  std::vector<CoreGroup> groups = GroupAlike(timeline);
  if (groups.size() > max_cores) {
    std::stable_sort(groups.begin(), groups.end(),
                     [](const CoreGroup& a, const CoreGroup& b) { return a.end > b.end; });
    groups.resize(max_cores);
    std::sort(groups.begin(), groups.end(), [](const CoreGroup& a, const CoreGroup& b) {
      return a.cores.front() < b.cores.front();
    });
  }
  uint32_t drawn = 0;
  for (const CoreGroup& g : groups) drawn += static_cast<uint32_t>(g.cores.size());
  const double width = 960, left = 150, right = 30, lane = 10, row = 3 * lane + 8, top = 66;
  const double plot_width = width - left - right;
  const double span = timeline.makespan > 0 ? timeline.makespan : 1;
  // Microseconds once the labels would need five digits of nanoseconds;
  // the title's time in the same unit.
  const bool micro = span >= 10000;
  const double unit = micro ? 1000 : 1;
  const double step = NiceStep(span / unit, 8) * unit;
  const double axis_end = std::ceil(span / step - 1e-9) * step;
  const double scale = plot_width / axis_end;
  const double plot_bottom = top + static_cast<double>(groups.size()) * row;
  const double height = plot_bottom + 44;
  std::string svg;
  char buffer[768];
  std::snprintf(buffer, sizeof(buffer),
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n"
                "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
                "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">%s</text>\n",
                width, height, width, height,
                HtmlEscape(title + ", " + TimeText(timeline.makespan, micro)).c_str());
  svg += buffer;
  std::string caption = drawn < total ? std::to_string(total - drawn) + " of " +
                                            std::to_string(total) + " cores not drawn (the fastest)"
                                      : "all " + std::to_string(total) + " cores drawn";
  if (groups.size() < drawn) {
    caption += ", " + std::to_string(drawn) + " in " + std::to_string(groups.size()) +
               " row(s): cores whose tiles run at the same times share one";
  }
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
  for (size_t k = 0; k < groups.size(); ++k) {
    const CoreTimeline& core = timeline.cores[groups[k].cores.front()];
    const double y = top + static_cast<double>(k) * row;
    const bool slowest = std::find(groups[k].cores.begin(), groups[k].cores.end(),
                                   timeline.slowest_core) != groups[k].cores.end();
    std::snprintf(buffer, sizeof(buffer), "<text x=\"8\" y=\"%.1f\"%s>%s%s</text>\n", y + 2 * lane,
                  slowest ? " font-weight=\"bold\"" : "",
                  HtmlEscape(GroupLabel(groups[k].cores)).c_str(), slowest ? " (slowest)" : "");
    svg += buffer;
    const std::string who = GroupLabel(groups[k].cores);
    for (int s = 0; s < 3; ++s) {
      // Tiles thinner than two pixels with less than a pixel between them
      // are drawn as one block (at a thousand tiles a core, one rectangle
      // each washed out into hatching), its tooltip naming the tiles.
      auto lane_span = [&](const TileTimes& t) {
        return s == 0 ? t.copy_in : s == 1 ? t.compute : t.copy_out;
      };
      for (size_t i = 0; i < core.tiles.size();) {
        size_t j = i + 1;
        Span block = lane_span(core.tiles[i]);
        while (j < core.tiles.size()) {
          const Span next = lane_span(core.tiles[j]);
          const bool thin =
              (block.end - block.start) * scale < 2 || (next.end - next.start) * scale < 2;
          if (!thin || (next.start - block.end) * scale >= 1) break;
          block.end = next.end;
          ++j;
        }
        const std::string tiles = j == i + 1 ? "tile " + std::to_string(core.tiles[i].tile)
                                             : "tiles " + std::to_string(core.tiles[i].tile) + "-" +
                                                   std::to_string(core.tiles[j - 1].tile);
        std::snprintf(buffer, sizeof(buffer),
                      "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" "
                      "stroke=\"white\" stroke-width=\"0.5\"><title>%s %s %s: "
                      "%.1f-%.1f ns</title></rect>\n",
                      left + block.start * scale, y + s * lane,
                      std::max(0.5, (block.end - block.start) * scale), lane - 1, colors[s],
                      HtmlEscape(who).c_str(), tiles.c_str(), names[s], block.start, block.end);
        svg += buffer;
        i = j;
      }
    }
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace leaky::toolkit

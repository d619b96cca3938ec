"""Renders a page in headless Chromium and measures its charts after they
have drawn: the console's errors, each chart's legends and every text of a
chart against its chart's box, every table against the page's width (at
the screenshot's window size), plus a PNG screenshot for a person to look
at.

The page is copied beside the screenshot with a script appended (the page
itself is left alone); the script awaits the page's charts (window.leakyCharts, the
Vega-Lite embeds' promises, toolkit/vega.h), then writes its measurements
as JSON into <pre id="chart-check">, which --dump-dom prints. A standalone
SVG (the timeline) is wrapped in such a page.

Chromium runs in its own process group, stopped by that group's id when it
outlives its timeout."""
import html
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"

MEASURE = r"""
<script>
(async () => {
  const result = {errors: window.__chartErrors || [], charts: []};
  try {
    const embeds = window.leakyCharts || [];
    result.embeds = embeds.length;
    await Promise.all(embeds);
    await new Promise(done => setTimeout(done, 100));  // virtual time: a timer, not a frame
    // A chart: a Vega-Lite embed's SVG, or a standalone SVG (the timeline).
    const svgs = [...document.querySelectorAll('.vega-chart > svg, body > svg')];
    for (const svg of svgs) {
      const box = svg.getBoundingClientRect();
      const chart = {id: (svg.parentElement.id || svg.id || 'svg'),
                     legends: svg.querySelectorAll('g.role-legend, g.legend').length,
                     width: box.width, height: box.height, overflow: []};
      for (const text of svg.querySelectorAll('text')) {
        if (!text.textContent.trim()) continue;
        const r = text.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue;
        if (r.left < box.left - 0.5 || r.right > box.right + 0.5 ||
            r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) {
          chart.overflow.push(text.textContent.trim().slice(0, 60));
        }
      }
      result.charts.push(chart);
    }
    // Every table against the page's width: none may be wider (a laptop's
    // window shows the page; a table cut at its right edge hides columns).
    result.page_width = document.documentElement.clientWidth;
    result.tables = [...document.querySelectorAll('table')].map((t, i) => ({
      index: i, right: t.getBoundingClientRect().right,
      header: ((t.querySelector('th') || {}).textContent || '').trim().slice(0, 40)}));
  } catch (e) {
    result.errors.push('measuring: ' + e);
  }
  const out = document.createElement('pre');
  out.id = 'chart-check';
  out.style.display = 'none';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
})();
</script>
"""

# Installed first in <head>: errors raised while the charts render.
CATCH = """<script>window.__chartErrors=[];window.addEventListener('error',e=>window.__chartErrors.push(String(e.message)));
window.addEventListener('unhandledrejection',e=>window.__chartErrors.push('rejected: '+e.reason));</script>"""


def _chromium(args, timeout):
    profile = tempfile.mkdtemp()
    proc = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError(f"chromium did not finish within {timeout} s: {args[-1]}")
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, err[-2000:]
    return out, err


def check_page(page, screenshot, width=1400, height=2000, budget_ms=20000):
    """Renders `page` (an .html, or an .svg wrapped in a page) and returns
    its measurements: {'console': [...], 'errors': [...], 'embeds': n,
    'charts': [{'id', 'legends', 'overflow': [texts]}]}; writes `screenshot`."""
    page = os.path.abspath(page)
    text = open(page, encoding="utf-8").read()
    if page.endswith(".svg"):
        text = ("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body style='margin:0'>" +
                re.sub(r"<\?xml[^>]*>", "", text) + "</body></html>")
    if "<head>" in text:
        text = text.replace("<head>", "<head>" + CATCH, 1)
    measured = os.path.splitext(os.path.abspath(screenshot))[0] + ".check.html"  # beside the PNG
    with open(measured, "w", encoding="utf-8") as f:
        at = text.rfind("</body>")  # the page's own (a script may hold the string too)
        f.write(text[:at] + MEASURE + text[at:] if at >= 0 else text + MEASURE)
    url = "file://" + measured
    out, err = _chromium([f"--virtual-time-budget={budget_ms}", f"--window-size={width},{height}",
                          "--dump-dom", url], timeout=180)
    found = re.search(r'<pre id="chart-check"[^>]*>(.*?)</pre>', out, re.S)
    assert found, f"{page}: the measuring script wrote nothing (the page did not finish rendering)"
    result = json.loads(html.unescape(found.group(1)))
    result["console"] = [line for line in err.splitlines() if "CONSOLE" in line]
    _chromium([f"--virtual-time-budget={budget_ms}", f"--window-size={width},{height}",
               f"--screenshot={os.path.abspath(screenshot)}", url], timeout=180)
    assert os.path.getsize(screenshot) > 0, screenshot
    return result


def problems(result, charts, legends_per_chart=1):
    """What is wrong with a page that should show `charts` charts, each with
    at least `legends_per_chart` legends: a list of lines (empty when none)."""
    found = []
    found += [f"console: {line}" for line in result["console"]]
    found += [f"error: {e}" for e in result["errors"]]
    if len(result["charts"]) != charts:
        found.append(f"{len(result['charts'])} charts rendered, expected {charts}")
    for chart in result["charts"]:
        if chart["legends"] < legends_per_chart:
            found.append(f"chart {chart['id']}: {chart['legends']} legend(s)")
        for label in chart["overflow"]:
            found.append(f"chart {chart['id']}: '{label}' overflows the chart's box")
    for table in result.get("tables", []):
        if table["right"] > result["page_width"] + 0.5:
            found.append(f"table {table['index']} ('{table['header']}') ends at "
                         f"{table['right']:.0f} px, wider than the page ({result['page_width']} px)")
    return found

"""The charts, rendered in headless Chromium (tests/charts/chart_check.py):
no console errors, every chart with its legend, no text outside its chart's
box, and a PNG screenshot of each page in the scratch folder for a person
to look at. The pages: the GAN lab's report.html of a short ring8 run, the
committed study report docs/study/dcgan-3000/report.html, `leaky plan
--timeline --svg` (48 cores: the slowest 16 drawn, the rest counted) and
`leaky bench`'s bench.html (where leaky-bench is built). First, the checks
must catch a broken page: one chart without its legend, one whose labels
are cut off at the left edge. Also: a one-seed report says "1 seed: no
interval", and without the charting scripts the lab still writes its report
and says in one line how to fetch them.

usage: check_charts.py <leaky binary> <scratch dir> <checkout> <leaky-bench binary or ->"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chart_check import check_page, problems  # noqa: E402

leaky, scratch, checkout = (os.path.abspath(a) for a in sys.argv[1:4])
bench_binary = sys.argv[4]
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
fetch = subprocess.run(["bash", os.path.join(checkout, "scripts", "fetch_vega.sh")],
                       capture_output=True, text=True, timeout=600)
assert fetch.returncode == 0, fetch.stderr
vega_dir = os.path.join(checkout, "data", "vega")


def run(*args, env=None, timeout=600):
    result = subprocess.run([leaky, *args], capture_output=True, text=True, timeout=timeout,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, (args, result.stderr[-3000:], result.stdout[-2000:])
    return result


def expect_clean(page, charts, name, **size):
    shot = os.path.join(scratch, name + ".png")
    result = check_page(page, shot, **size)
    found = problems(result, charts)
    assert not found, f"{page}:\n  " + "\n  ".join(found)
    print(f"{page}: {charts} chart(s), each with its legend, no text outside its box; "
          f"screenshot {shot}")
    return result


# 0. The checks catch a broken page: a chart without its legend, a chart
# whose y labels fall outside its box (autosize none, no padding), a table
# wider than a 1400-pixel window.
scripts = "".join(f"<script>{open(os.path.join(vega_dir, f)).read()}</script>"
                  for f in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"))
data = {"values": [{"x": i, "y": 1000 * i, "c": "a" if i % 2 else "b"} for i in range(10)]}
no_legend = {"data": data, "mark": "line", "encoding": {
    "x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"},
    "color": {"field": "c", "type": "nominal", "legend": None}}}
clipped = {"data": data, "mark": "line", "autosize": {"type": "none"}, "padding": 0,
           "width": 200, "height": 100, "encoding": {
               "x": {"field": "x", "type": "quantitative"}, "y": {"field": "y", "type": "quantitative"},
               "color": {"field": "c", "type": "nominal"}}}
broken = os.path.join(scratch, "broken.html")
with open(broken, "w") as f:
    f.write("<!DOCTYPE html><html><head><meta charset='utf-8'>" + scripts +
            "<script>window.leakyCharts=[];</script></head><body>" +
            "".join(f"<div class='vega-chart' id='{name}'></div><script>window.leakyCharts.push("
                    f"vegaEmbed('#{name}',{json.dumps(spec)},{{renderer:'svg',actions:false}}));</script>"
                    for name, spec in (("no-legend", no_legend), ("clipped", clipped))) +
            "<table><tr><th>too wide</th><td style='min-width:1500px'>x</td></tr></table>"
            "</body></html>")
found = problems(check_page(broken, os.path.join(scratch, "broken.png")), 2)
assert any("no-legend: 0 legend(s)" in p for p in found), found
assert any(p.startswith("chart clipped:") and "overflows" in p for p in found), found
assert any(p.startswith("table 0 ('too wide')") and "wider than the page" in p for p in found), found
print("a broken page is caught:\n  " + "\n  ".join(found))

# 1. The timeline: 48 cores, the 16 slowest drawn (the slowest among them),
# the rest counted; and a 4-core plan, every core drawn.
timeline = os.path.join(scratch, "timeline.svg")
run("plan", "--elems", "1000003", "--dtype", "f16", "--preset", "npu", "--cores", "48", "--split",
    "even", "--tile-elems", "4096", "--buffers", "2", "--timeline", "--svg", timeline)
svg = open(timeline).read()
# The even split's 47 equal shares share one row; the last core (its share
# and the remainder) is the slowest.
assert "all 48 cores drawn, 48 in 2 row(s)" in svg and "cores 0-46 (47 alike)" in svg, svg[:900]
# The title's modelled time in the axis's unit, as the CLI prints it.
modelled = run("plan", "--elems", "1000003", "--dtype", "f16", "--preset", "npu", "--cores", "48",
               "--split", "even", "--tile-elems", "4096", "--buffers", "2", "--timeline").stdout
ns = re.search(r"modelled time, 2 buffer\(s\): +(\d+) ns", modelled).group(1)
assert "core 47 (slowest)" in svg and svg.split("\n")[2].endswith(f"buffer(s), {ns} ns</text>"), (
    ns, svg[:900])
expect_clean(timeline, 1, "timeline-48-cores", width=980, height=800)
small = os.path.join(scratch, "timeline-4-cores.svg")
plan = json.loads(run("plan", "--elems", "100000", "--preset", "npu", "--cores", "4", "--timeline",
                      "--svg", small, "--json").stdout)
svg = open(small).read()
assert "all 4 cores drawn" in svg and "(slowest)" in svg, svg[:600]
expect_clean(small, 1, "timeline-4-cores", width=980, height=300)

# 2. The lab's report of a short ring8 run: 8 training charts, 3 per-layer.
run("gan", "--preset", "ring8", "--steps", "60", "--log-every", "10", "--seeds", "2", "--acts",
    "relu,lrelu:0.2,prelu", "--d-act-layers", "2,4", "--threads", "1", "--samples", "300",
    "--no-speed-check", "--name", "ring8", "--out", scratch, env={"LEAKY_VEGA_DIR": vega_dir})
report = os.path.join(scratch, "ring8", "report.html")
result = expect_clean(report, 11, "report-ring8", height=4000)
assert result["embeds"] == 11, result["embeds"]

# 3. One seed: no interval, said so; charts without bands.
run("gan", "--preset", "ring8", "--steps", "20", "--log-every", "10", "--seeds", "1", "--acts",
    "relu,lrelu:0.2", "--threads", "1", "--samples", "300", "--no-speed-check", "--name", "one-seed",
    "--out", scratch, env={"LEAKY_VEGA_DIR": vega_dir})
page = open(os.path.join(scratch, "one-seed", "report.html")).read()
assert "1 seed: no interval" in page and "&plusmn; 0<" not in page
expect_clean(os.path.join(scratch, "one-seed", "report.html"), 11, "report-one-seed", height=3000)

# 4. Without the charting scripts: the report all the same, and one line.
result = run("gan", "report", os.path.join(scratch, "one-seed"), "--out",
             os.path.join(scratch, "no-scripts.html"),
             env={"LEAKY_VEGA_DIR": os.path.join(scratch, "nowhere")})
lines = result.stderr.strip().splitlines()
assert len(lines) == 1 and "scripts/fetch_vega.sh" in lines[0], result.stderr
page = open(os.path.join(scratch, "no-scripts.html")).read()
assert "scripts/fetch_vega.sh" in page and "vegaEmbed" not in page and "<table>" in page
expect_clean(os.path.join(scratch, "no-scripts.html"), 0, "report-no-scripts")

# 5. The committed study report (10 variants, FCD on a log axis).
expect_clean(os.path.join(checkout, "docs", "study", "dcgan-3000", "report.html"), 11, "study-dcgan-3000",
             height=7000)

# 6. The bench's chart page.
if bench_binary != "-":
    out = os.path.join(scratch, "bench")
    run("bench", "--quick", "--filter", "/f32/fwd/(4096|1048576)/", "--rounds", "3", "--min-time",
        "0.01", "--out", out, "--bench-binary", bench_binary, env={"LEAKY_VEGA_DIR": vega_dir})
    expect_clean(os.path.join(out, "bench.html"), 1, "bench", height=500)
print("charts: ok")

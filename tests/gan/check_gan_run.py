"""`leaky gan` end to end on ring8: valid results.json with every key the
lab promises, bit-for-bit the same file from the same seed and thread count
(wall-time fields aside), a self-contained report that headless Chromium
renders without console errors, and Ctrl-C that still writes the report.

usage: check_gan_run.py <leaky binary> <scratch dir>"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_runs import study  # noqa: E402

leaky, scratch = sys.argv[1], sys.argv[2]
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
FINAL_KEYS = {"d_loss", "g_loss", "d_real", "d_fake", "sparsity_zero", "sparsity_nonpos",
              "dead_channels", "grad_norm_first_layer", "modes_covered", "high_quality_share",
              "step_ms"}


def run(name, *extra, acts="relu,lrelu:0.2,prelu", seeds="2", steps="60"):
    cmd = [leaky, "gan", "--preset", "ring8", "--steps", steps, "--log-every", "10", "--seeds",
           seeds, "--acts", acts, "--d-act-layers", "2,4", "--threads", "1",
           "--samples", "500", "--name", name, "--out", scratch, *extra]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr + result.stdout
    with open(os.path.join(scratch, name, "results.json")) as f:
        return json.load(f)


first = run("first")
assert first["dataset"] == "ring8" and len(first["variants"]) == 3, first.keys()
for variant in first["variants"]:
    final = variant["final"]
    missing = FINAL_KEYS - set(final)
    assert not missing, (variant["name"], missing)
    for key in ("sparsity_zero", "sparsity_nonpos", "dead_channels"):
        assert len(final[key]) == 4 and all(0 <= v <= 1 for v in final[key]), (key, final[key])
    assert 0 <= final["modes_covered"] <= 8
    assert variant["seeds_completed"] == 2 and len(variant["history"]) == 2
    assert len(variant["history"][0]) == 6, len(variant["history"][0])  # steps 10..60
    assert set(variant["summary"]["d_loss"]) == {"mean", "std", "ci_low", "ci_high", "boot_low",
                                                 "boot_high", "n"}
    run_dir = os.path.join(scratch, "first", variant["name"])
    assert os.path.exists(os.path.join(run_dir, "seed0.csv"))
    assert os.path.exists(os.path.join(run_dir, "samples_step60.png"))
# ReLU's layers 2 and 4 output exact zeros; LeakyReLU's do not.
relu, lrelu = first["variants"][0]["final"], first["variants"][1]["final"]
assert relu["sparsity_zero"][1] > 0.05 and lrelu["sparsity_zero"][1] == 0.0, (relu, lrelu)
assert "precision" in first and len(first["precision"]["rows"]) == 6
assert first["speed_check"]["ratio"] > 0

second = run("second", "--no-speed-check")
assert study(first) == study(second), "the same seeds gave different results"

# The precision table measures at the slope of the variant it reads.
tenth = run("tenth", "--no-speed-check", acts="lrelu:0.1", seeds="1", steps="20")
assert tenth["precision"]["slope"] == 0.1, tenth["precision"]["slope"]
assert tenth["precision"]["source"].endswith(os.path.join("lrelu:0.1", "preact_layer2.f32"))

# Bad options: one line, exit 2, before any work (no output folder).
for bad in (["--steps", "0"], ["--seeds", "0"], ["--log-every", "0"], ["--samples", "0"],
            ["--threads", "-1"], ["--acts", "lrelu:nan"], ["--acts", "lrelu:x"],
            ["--acts", "tanh"], ["--d-act-layers", "5"], ["--d-act-layers", "x"]):
    result = subprocess.run([leaky, "gan", "--preset", "ring8", "--name", "bad", "--out", scratch,
                             *bad], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, (bad, result.returncode, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) in (1, 2) and "Traceback" not in result.stderr, (bad, result.stderr)
    assert not os.path.exists(os.path.join(scratch, "bad")), bad

report = os.path.join(scratch, "first", "report.html")
html = open(report).read()
# Charts: Vega-Lite specs rendered by the inlined scripts (scripts/fetch_vega.sh),
# or, where those are not fetched, the line that says how.
assert html.count("vegaEmbed('#") == 11 or "scripts/fetch_vega.sh" in html, "report lacks charts"
assert "data:image/png;base64," in html, "report lacks samples"
# Nothing loaded from the network (the inlined scripts mention URLs in their text).
assert not re.search(r"<(script|img|link|iframe)[^>]*(src|href)=[\"']?(https?:)?//", html), \
    "report needs the network"

# Headless Chromium renders it with no console errors.
profile = tempfile.mkdtemp()
chromium = subprocess.run(
    ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
     "--disable-background-networking", "--disable-component-update", "--disable-sync",
     f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
     "--virtual-time-budget=3000", "--dump-dom", "file://" + os.path.abspath(report)],
    capture_output=True, text=True, timeout=120)
shutil.rmtree(profile, ignore_errors=True)
assert chromium.returncode == 0, chromium.stderr
assert "<h1>GAN lab: first</h1>" in chromium.stdout, chromium.stdout[:500]
console = [line for line in chromium.stderr.splitlines() if "CONSOLE" in line]
assert not console, console

# Ctrl-C before any run finished: exits 130, says which runs stopped (the
# one in progress checkpointed), and writes no results of zero runs (it
# once wrote a results.json with none and no word of stopping).
# check_gan_resume.py resumes interrupted studies.
proc = subprocess.Popen([leaky, "gan", "--preset", "ring8", "--steps", "100000", "--threads", "1",
                         "--name", "interrupted", "--out", scratch, "--seeds", "2",
                         "--acts", "relu,lrelu:0.2"],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
try:
    time.sleep(6)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
finally:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
assert proc.returncode == 130, (proc.returncode, err[-2000:])
assert "gan: stopped early: 0 of 4 run(s) finished; not finished: relu seed 0 (checkpointed)" in err, err[-2000:]
assert not os.path.exists(os.path.join(scratch, "interrupted", "results.json"))
assert os.path.exists(os.path.join(scratch, "interrupted", "relu", "seed0.checkpoint.pt"))
print("gan end to end: ok")

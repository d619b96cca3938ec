#!/usr/bin/env python3
"""Writes docs/study/*/report.html again with this checkout's `leaky gan
report`, after the report's layout changed. The committed results.json are
only read; a checkout has no run folders, so each page's sample grids are
taken out of the page itself (its base64 PNGs, bit for bit) into a scratch
run folder beside a copy of results.json, which the report reads.

usage: python3 scripts/rewrite_study_reports.py LEAKY [STUDY ...]   (default: every study)
"""
import base64
import html
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

STUDY = pathlib.Path(__file__).resolve().parent.parent / "docs" / "study"
GRIDS = re.compile(r'<div class="grids"><h3>(?P<variant>[^<]*)</h3>(?P<figures>.*?)</div>', re.S)
FIGURE = re.compile(r'<img alt="samples at step (?P<step>\d+)" src="data:image/png;base64,'
                    r'(?P<png>[A-Za-z0-9+/=]*)"')


def rewrite(leaky, study):
    page = study / "report.html"
    text = page.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as scratch:
        run = pathlib.Path(scratch) / study.name
        run.mkdir()
        shutil.copy(study / "results.json", run / "results.json")
        grids = 0
        for block in GRIDS.finditer(text):
            folder = run / html.unescape(block.group("variant"))
            folder.mkdir(exist_ok=True)
            for figure in FIGURE.finditer(block.group("figures")):
                (folder / ("samples_step%s.png" % figure.group("step"))).write_bytes(
                    base64.b64decode(figure.group("png")))
                grids += 1
        done = subprocess.run([leaky, "gan", "report", str(run), "--out", str(page)],
                              capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit("%s: %s" % (study.name, done.stderr.strip()))
    print("%s: report.html written again (%d sample grids carried over)" % (study.name, grids))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    leaky = str(pathlib.Path(sys.argv[1]).resolve())
    names = sys.argv[2:] or sorted(p.parent.name for p in STUDY.glob("*/report.html"))
    for name in names:
        rewrite(leaky, STUDY / name)


if __name__ == "__main__":
    main()

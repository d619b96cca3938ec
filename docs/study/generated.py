#!/usr/bin/env python3
"""The generated blocks of docs/study/README.md, from the committed results.

A block is written between two HTML comments (invisible on the rendered page):

    <!-- generated: gan table crossing dcgan-3000 cross-w1-default -->
    ...the command's output...
    <!-- end generated -->

`gan ...` runs `LEAKY gan ...` and `summary STUDY` runs summary_table.py on
STUDY/results.json, both from docs/study (study names are folders there).

    generated.py LEAKY PYTHON --check   exit 1 and name every stale block
    generated.py LEAKY PYTHON --write   rewrite the stale blocks in place

Only the blocks are machine-written; the prose around them is the author's.
"""
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
BLOCK = re.compile(r"(<!-- generated: (?P<cmd>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)",
                   re.S)


def run(leaky, python, cmd):
    words = cmd.split()
    if words[0] == "gan":
        argv = [leaky] + words
    elif words[0] == "summary" and len(words) == 2:
        argv = [python, str(HERE / "summary_table.py"), words[1] + "/results.json"]
    else:
        sys.exit(f"generated.py: unknown block command '{cmd}'")
    out = subprocess.run(argv, cwd=HERE, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"generated.py: '{cmd}' failed: {out.stderr.strip()}")
    return out.stdout.strip() + "\n"


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("--check", "--write"):
        sys.exit("usage: generated.py LEAKY PYTHON --check|--write")
    leaky, python, mode = sys.argv[1:]
    leaky = str(pathlib.Path(leaky).resolve())  # the commands run from docs/study
    readme = HERE / "README.md"
    text = readme.read_text()
    stale = []

    def regenerate(m):
        body = run(leaky, python, m.group("cmd"))
        if body != m.group("body"):
            stale.append(m.group("cmd"))
        return m.group(1) + body + m.group(4)

    new = BLOCK.sub(regenerate, text)
    blocks = len(BLOCK.findall(text))
    if blocks == 0:
        sys.exit("generated.py: README.md has no generated block")
    if mode == "--write":
        readme.write_text(new)
        print(f"generated.py: {blocks} blocks, {len(stale)} rewritten")
    elif stale:
        for cmd in stale:
            print(f"FAILED: the block '{cmd}' of docs/study/README.md is not what it prints now")
        sys.exit(1)
    else:
        print(f"generated.py: {blocks} blocks, all current")


if __name__ == "__main__":
    main()

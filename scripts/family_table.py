#!/usr/bin/env python3
"""The family's table in docs/semantics.md, from leaky/family.h's rows
(leaky.numpy.family()). The table sits between two HTML comments:

    <!-- generated: family table -->
    ...
    <!-- end generated -->

    family_table.py            print the table
    family_table.py --check    exit 1 if docs/semantics.md's block differs
    family_table.py --write    rewrite the block
"""
import pathlib
import re
import sys

import leaky.numpy

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "semantics.md"
BLOCK = re.compile(r"(<!-- generated: family table -->\n)(.*?)(<!-- end generated -->)", re.S)


def table():
    lines = ["| op | direction | C | reads | writes | scalars | exact | random |",
             "|---|---|---|---|---|---|---|---|"]
    for r in leaky.numpy.family():
        lines.append(f"| `{r['op']}` | {r['direction']} | `{r['c_name']}` | {r['inputs']} | "
                     f"{r['outputs']} | {r['scalars'] or '-'} | {r['exactness']} | "
                     f"{'yes' if r['random'] else '-'} |")
    return "\n".join(lines) + "\n"


def main(argv):
    if not argv:
        sys.stdout.write(table())
        return 0
    text = DOC.read_text()
    match = BLOCK.search(text)
    if match is None:
        print(f"{DOC} has no 'generated: family table' block", file=sys.stderr)
        return 1
    if argv == ["--check"]:
        if match.group(2) != table():
            print(f"{DOC}: the family table is stale (scripts/family_table.py --write)",
                  file=sys.stderr)
            return 1
        return 0
    if argv == ["--write"]:
        DOC.write_text(text[:match.start(2)] + table() + text[match.end(2):])
        return 0
    print("usage: family_table.py [--check | --write]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

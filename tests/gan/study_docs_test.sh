#!/usr/bin/env bash
# docs/study/README.md tells what the committed studies hold: for every
# docs/study/<study>/results.json, the claims table that `leaky gan claims`
# measures from it and the summary table of summary_table.py appear in the
# README verbatim.
#
# usage: study_docs_test.sh <leaky binary> <python>
set -euo pipefail
leaky=$1
python=$2
docs="$(cd "$(dirname "$0")/../../docs/study" && pwd)"
found=0
for results in "$docs"/*/results.json; do
  [ -f "$results" ] || continue
  study=$(dirname "$results")
  found=$((found + 1))
  for table in "$("$leaky" gan claims "$study")" "$("$python" "$docs/summary_table.py" "$results")"; do
    [ -n "$table" ] || { echo "FAILED: no table from $study"; exit 1; }
    if ! "$python" -c 'import sys; sys.exit(sys.argv[1].strip() not in open(sys.argv[2]).read())' \
         "$table" "$docs/README.md"; then
      echo "FAILED: docs/study/README.md lacks this table of $(basename "$study"):"
      echo "$table"
      exit 1
    fi
  done
done
[ "$found" -ge 2 ] || { echo "FAILED: expected the two studies under docs/study, found $found"; exit 1; }
echo "docs/study: $found studies, their tables in the README"

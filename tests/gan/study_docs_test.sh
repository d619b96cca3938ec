#!/usr/bin/env bash
# docs/study/README.md tells what the committed studies hold: for every
# docs/study/<study>/results.json, the claims table that `leaky gan claims`
# measures from it and the summary table of summary_table.py appear in the
# README verbatim; so do the tables registered in docs/study/PLAN.md (the
# setup crossing, the claims per setup and where the 6,000-step runs
# settle) and in PLAN-4.md (each claim across every setup, the floors, the
# slope sweep, the long runs' windows and the headline chart).
# docs/study/generated.py rewrites the README's generated blocks.
#
# usage: study_docs_test.sh <leaky binary> <python>
set -euo pipefail
leaky=$1
python=$2
docs="$(cd "$(dirname "$0")/../../docs/study" && pwd)"
in_readme() {  # <what> <table>
  [ -n "$2" ] || { echo "FAILED: no $1"; exit 1; }
  if ! "$python" -c 'import sys; sys.exit(sys.argv[1].strip() not in open(sys.argv[2]).read())' \
       "$2" "$docs/README.md"; then
    echo "FAILED: docs/study/README.md lacks $1:"
    echo "$2"
    exit 1
  fi
}
found=0
for results in "$docs"/*/results.json; do
  [ -f "$results" ] || continue
  study=$(dirname "$results")
  found=$((found + 1))
  in_readme "the claims of $(basename "$study")" "$("$leaky" gan claims "$study")"
  in_readme "the summary of $(basename "$study")" "$("$python" "$docs/summary_table.py" "$results")"
done
# The registered setups whose runs are committed (PLAN.md's order); the
# README says which are still to run.
setups=()
for s in dcgan-3000 cross-w1-default cross-w2-dcgan cross-w2-default; do
  [ -f "$docs/$s/results.json" ] && setups+=("$docs/$s")
done
[ -f "$docs/dcgan-3000/results.json" ] || { echo "FAILED: docs/study/dcgan-3000 is missing"; exit 1; }
[ "${#setups[@]}" -ge 2 ] || { echo "FAILED: fewer than two setups of the crossing committed"; exit 1; }
long=()
[ -f "$docs/ext-6000/results.json" ] && long=("$docs/ext-6000")
in_readme "the crossing table" "$("$leaky" gan table crossing "${setups[@]}")"
in_readme "the claims per setup" "$("$leaky" gan claims "${setups[@]}" "${long[@]}")"
if [ "${#long[@]}" -gt 0 ]; then
  in_readme "the settle table" "$("$leaky" gan table settle "${long[0]}")"
fi
# The second study's registered tables and chart (PLAN-4.md, "The tables
# registered for the README"), once all six setups are committed.
v4=(v4-w1-dcgan-20 v4-w1-default-20 v4-sn-hinge-w1 v4-fashion-w1 v4-slopes-w1 v4-ext-20000)
v4_dirs=()
for s in "${v4[@]}"; do [ -f "$docs/$s/results.json" ] && v4_dirs+=("$docs/$s"); done
if [ "${#v4_dirs[@]}" -eq "${#v4[@]}" ]; then
  in_readme "each claim across every setup" "$("$leaky" gan claims "${v4_dirs[@]}")"
  in_readme "the floors per dataset" "$("$leaky" gan table floors "${v4_dirs[@]}")"
  in_readme "the slope sweep" "$("$leaky" gan table slopes "$docs/v4-slopes-w1")"
  in_readme "the long runs' windows" "$("$leaky" gan table long "$docs/v4-ext-20000")"
  # The chart: its spec is what the command makes now, and its SVG what
  # scripts/vega_svg.js draws from that spec (Node.js is in every profile of
  # scripts/bootstrap.sh; the charting scripts come with scripts/fetch_vega.sh).
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  "$leaky" gan chart headline "${v4_dirs[@]}" >"$scratch/headline.vl.json"
  cmp -s "$scratch/headline.vl.json" "$docs/headline.vl.json" ||
    { echo "FAILED: docs/study/headline.vl.json is not what 'leaky gan chart headline' makes now"; exit 1; }
  bash "$docs/../../scripts/fetch_vega.sh" >/dev/null
  node "$docs/../../scripts/vega_svg.js" "$docs/headline.vl.json" "$scratch/headline.svg"
  cmp -s "$scratch/headline.svg" "$docs/headline.svg" ||
    { echo "FAILED: docs/study/headline.svg is not what scripts/vega_svg.js draws from its spec"; exit 1; }
  grep -q '](headline.svg)' "$docs/README.md" || { echo "FAILED: the README does not show headline.svg"; exit 1; }
fi
# Every generated block (<!-- generated: ... -->) is what its command prints now.
"$python" "$docs/generated.py" "$leaky" "$python" --check
echo "docs/study: $found studies and the registered tables (${#setups[@]} setups; ${#v4_dirs[@]} of the second study's), all in the README"

#!/usr/bin/env bash
# The runs of docs/study/PLAN.md, in its order, on local workers; each study
# merged into OUT/<study> as it finishes. Usage:
#   bash scripts/study.sh [OUT] [LEAKY]   (defaults: runs, build/leaky)
# JOBS (default: the number of cores) sets the workers, each at 1 thread.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs}
leaky=${2:-build/leaky}
jobs=${JOBS:-$(nproc)}
data=${LEAKY_DATA_DIR:-data/mnist}
common=(--jobs "$jobs" --threads 1 --out "$out" --data-dir "$data")
cross=(--acts relu,lrelu:0.2 --d-act-layers 2,4 --d-norm none --seeds 5 --log-every 25)
stamp() { date -u +%Y-%m-%dT%H:%M:%SZ; }
run() {
  local name=$1; shift
  echo "study: $name started $(stamp)"
  "$leaky" gan --name "$name" "$@" "${common[@]}"
  echo "study: $name merged $(stamp)"
}
run dcgan-3000 --preset dcgan-3000
run cross-w1-default "${cross[@]}" --steps 3000 --width 1 --init default
run cross-w2-dcgan "${cross[@]}" --steps 3000 --width 2 --init dcgan
run cross-w2-default "${cross[@]}" --steps 3000 --width 2 --init default
run ext-6000 "${cross[@]}" --steps 6000 --width 1 --init dcgan

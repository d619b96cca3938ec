#!/usr/bin/env bash
# The runs of a registered study plan, in its order, on local workers; each
# study merged into OUT/<study> as it finishes. Usage:
#   bash scripts/study.sh [OUT] [LEAKY] [PLAN]   (defaults: runs, build/leaky, 4)
# PLAN 4: docs/study/PLAN-4.md (lab version 4, issue 42); PLAN 3:
# docs/study/PLAN.md (lab version 3, issue 23; that lab's binary is needed
# to repeat its bits). JOBS (default: the number of cores) sets the
# workers, each at 1 thread. Run again after a stop or a kill, it trains
# nothing twice: finished runs are kept, unfinished ones resume from their
# checkpoints.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-runs}
leaky=${2:-build/leaky}
plan=${3:-4}
jobs=${JOBS:-$(nproc)}
mnist=${LEAKY_DATA_DIR:-data/mnist}
common=(--jobs "$jobs" --threads 1 --out "$out")
stamp() { date -u +%Y-%m-%dT%H:%M:%SZ; }
run() {
  local name=$1; shift
  echo "study: $name started $(stamp)"
  "$leaky" gan --name "$name" "$@" "${common[@]}"
  echo "study: $name merged $(stamp)"
}
if [ "$plan" = 3 ]; then
  cross=(--acts relu,lrelu:0.2 --d-act-layers 2,4 --d-norm none --seeds 5 --log-every 25
         --data-dir "$mnist")
  run dcgan-3000 --preset dcgan-3000 --data-dir "$mnist"
  run cross-w1-default "${cross[@]}" --steps 3000 --width 1 --init default
  run cross-w2-dcgan "${cross[@]}" --steps 3000 --width 2 --init dcgan
  run cross-w2-default "${cross[@]}" --steps 3000 --width 2 --init default
  run ext-6000 "${cross[@]}" --steps 6000 --width 1 --init dcgan
  exit 0
fi
[ "$plan" = 4 ] || { echo "study: PLAN is 3 or 4, not '$plan'" >&2; exit 2; }
bash scripts/fetch_mnist.sh "$mnist"
bash scripts/fetch_fashion_mnist.sh
w1=(--d-act-layers 2,4 --d-norm none --log-every 25 --width 1 --steps 3000)
run v4-w1-dcgan-20 --acts relu,lrelu:0.2 "${w1[@]}" --init dcgan --seeds 20 --data-dir "$mnist"
run v4-w1-default-20 --acts relu,lrelu:0.2 "${w1[@]}" --init default --seeds 20 --data-dir "$mnist"
run v4-sn-hinge-w1 --acts relu,lrelu:0.2 "${w1[@]}" --init dcgan --seeds 10 --d-spectral-norm \
  --loss hinge --data-dir "$mnist"
run v4-fashion-w1 --data fashion --acts relu,lrelu:0.2 "${w1[@]}" --init dcgan --seeds 10
run v4-slopes-w1 --acts relu,lrelu:0.01,lrelu:0.05,lrelu:0.1,lrelu:0.2,lrelu:0.3 "${w1[@]}" \
  --init dcgan --seeds 10 --data-dir "$mnist"
run v4-ext-20000 --acts relu,lrelu:0.2 --d-act-layers 2,4 --d-norm none --log-every 25 --width 1 \
  --steps 20000 --init dcgan --seeds 5 --data-dir "$mnist"

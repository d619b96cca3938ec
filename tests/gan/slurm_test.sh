#!/usr/bin/env bash
# `leaky gan --slurm` against a real one-node Slurm on loopback: a small
# ring8 study as a 2-task job array plus the merge job (afterok), waited for
# with a bounded timeout; the merged study must equal the same study run in
# one process (wall-time fields aside). Then the bad cases: no sbatch on
# PATH, a controller that does not answer. Every daemon started here is
# stopped by its pid on exit, also when a check fails.
#
# usage: slurm_test.sh <leaky binary> <scratch dir>
set -euo pipefail
leaky=$(realpath "$1")
scratch=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
scratch=$(realpath "$scratch")
SLURM_DIR="$scratch/cluster"
source "$here/slurm_cluster.sh"
trap slurm_cluster_stop EXIT

fail() { echo "FAILED: $*"; exit 1; }

study=(gan --preset ring8 --steps 40 --log-every 10 --seeds 2 --acts relu,lrelu:0.2
       --threads 1 --samples 400 --no-speed-check --out "$scratch/runs")

# The dry run needs no cluster: the two scripts and the dependency.
dry=$("$leaky" "${study[@]}" --name dry --slurm --jobs 2 --slurm-dry-run \
      --slurm-args "--time=10:00 --partition=test")
for want in "#SBATCH --array=1-2" "--shard \"\${SLURM_ARRAY_TASK_ID}/2\"" "gan merge" \
            "--dependency=afterok:ARRAY_JOB_ID" "--time=10:00 --partition=test"; do
  grep -qF -- "$want" <<<"$dry" || fail "the dry run lacks '$want':"$'\n'"$dry"
done
[ ! -e "$scratch/runs/dry" ] || fail "the dry run wrote files"

# No sbatch on PATH: one line, exit 2, nothing written.
set +e
out=$(PATH=/nonexistent "$leaky" "${study[@]}" --name nosbatch --slurm 2>&1); status=$?
set -e
[ "$status" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "sbatch is not on PATH" <<<"$out" ||
  fail "without sbatch: exit $status, '$out'"
[ ! -e "$scratch/runs/nosbatch" ] || fail "a failed submission wrote files"

set +e
slurm_cluster_start; status=$?
set -e
[ "$status" = 0 ] || exit "$status"
echo "cluster up: $(sinfo -h -o '%P %a %D %T')"

"$leaky" "${study[@]}" --name local >/dev/null 2>&1
submitted=$("$leaky" "${study[@]}" --name viaslurm --slurm --jobs 2 --slurm-args "--time=10:00")
echo "$submitted"
grep -q "submitted job array [0-9]* (2 tasks" <<<"$submitted" || fail "no job array: $submitted"
if ! slurm_wait_for "[ -z \"\$(squeue -h)\" ]" 240; then
  squeue; fail "the jobs did not finish within 240 s"
fi
merged="$scratch/runs/viaslurm"
if [ ! -f "$merged/results.json" ]; then
  for f in "$merged"/slurm/*.out; do echo "== $f"; tail -5 "$f"; done
  fail "the merge job wrote no results.json"
fi
grep -q "^\[4/4\]\|^\[2/2\]" "$merged/slurm/shard-1-of-2.out" ||
  fail "a task's log has no plain progress lines"
! grep -q $'\r' "$merged"/slurm/*.out || fail "carriage returns in the Slurm logs"
/usr/bin/python3 "$here/compare_runs.py" "$scratch/runs/local" "$merged"

# A task requeued mid-run (Slurm stops it with SIGTERM and starts the same
# command again): its shard resumes from the checkpoints, and the merged
# study equals the local one bit for bit.
long=(gan --preset ring8 --steps 1500 --log-every 10 --seeds 2 --acts relu,lrelu:0.2 --threads 1
      --samples 400 --no-speed-check --checkpoint-every 50 --out "$scratch/runs")
"$leaky" "${long[@]}" --name local-long >/dev/null 2>&1
submitted=$("$leaky" "${long[@]}" --name requeued --slurm --jobs 2 --slurm-args "--time=10:00")
array=$(grep -o "submitted job array [0-9]*" <<<"$submitted" | grep -o "[0-9]*$")
[ -n "$array" ] || fail "no job array: $submitted"
shard1="$scratch/runs/requeued/shards/shard-1-of-2"
slurm_wait_for "ls $shard1/*/seed*.checkpoint.pt >/dev/null 2>&1" 120 || fail "no checkpoint in $shard1"
scontrol requeue "${array}_1"
if ! slurm_wait_for "[ -z \"\$(squeue -h)\" ]" 400; then
  squeue; fail "the requeued jobs did not finish within 400 s"
fi
log="$scratch/runs/requeued/slurm/shard-1-of-2.out"
grep -q "stopped early" "$log" || { tail -20 "$log"; fail "the requeued task did not stop at a checkpoint"; }
[ -f "$scratch/runs/requeued/results.json" ] || { tail -20 "$log"; fail "the requeued study was not merged"; }
/usr/bin/python3 "$here/compare_runs.py" "$scratch/runs/local-long" "$scratch/runs/requeued"

# A controller that does not answer: one line, exit 2, nothing written.
kill "${SLURM_PIDS[1]}"
wait "${SLURM_PIDS[1]}" 2>/dev/null || true
set +e
out=$("$leaky" "${study[@]}" --name down --slurm 2>&1); status=$?
set -e
[ "$status" = 2 ] && [ "$(wc -l <<<"$out")" = 1 ] && grep -q "does not answer" <<<"$out" ||
  fail "with slurmctld down: exit $status, '$out'"
[ ! -e "$scratch/runs/down" ] || fail "a failed submission wrote files"
echo "slurm: the merged job array equals the local run"

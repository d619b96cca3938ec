#!/usr/bin/env bash
# The library pool's wait policy, measured: leaky-bench's f32 forward rows
# (in cache and streaming, out of place and in place, 2 threads) and two
# test processes side by side, for each spin time (LEAKY_POOL_SPIN_US),
# alternated twice so drift on a shared machine hits all. Prints the rows
# and the test-suite wall times; docs/design.md keeps the table.
# Usage: bench/wait_policy.sh [BUILD_DIR] [OUT_DIR] [SPIN_US...]
set -euo pipefail
build=${1:-build} out=${2:-runs/wait-policy}
shift $(( $# < 2 ? $# : 2 ))
policies=("${@:-0 20 50 200 1000}")
read -r -a policies <<< "${policies[*]}"
mkdir -p "$out"
rm -f "$out"/bench-*.json "$out/tests.txt"
filter='^(leaky|onednn|xnnpack|stream_copy)/f32/(fwd|fwd_inplace)/(65536|262144|1048576|67108864)/[12]/'
for round in 1 2; do
  for policy in "${policies[@]}"; do
    LEAKY_POOL_SPIN_US=$policy "$build/leaky-bench" --benchmark_filter="$filter" \
      --benchmark_min_time=0.2 --benchmark_format=json > "$out/bench-$policy-$round.json" 2>/dev/null
    start=$(date +%s%N)
    for i in 1 2; do
      LEAKY_POOL_SPIN_US=$policy LEAKY_TEST_BEST_TARGET_ONLY=1 \
        "$build/tests/kernel_sizes_test" --gtest_filter='KernelSizes.leaky_relu_forward_CodecF16' \
        > /dev/null &
    done
    wait
    echo "spin $policy us, round $round: two kernel_sizes_test processes side by side took" \
      "$(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/tests.txt"
  done
done
/usr/bin/python3 - "$out" "${policies[@]}" <<'PY'
# Per spin time, leaky's time and its speed against the peers of the same
# run (their own pools do not change with LEAKY_POOL_SPIN_US, so they show
# drift).
import glob, json, statistics, sys
out, policies = sys.argv[1], sys.argv[2:]
times = {}  # (policy, peer, case) -> [us]
for path in glob.glob(f"{out}/bench-*.json"):
    policy = path.split("bench-")[1].split("-")[0]
    for b in json.load(open(path))["benchmarks"]:
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[b["time_unit"]]
        peer, _, case = b["name"].partition("/")
        times.setdefault((policy, peer, case), []).append(b["real_time"] * scale)
med = {k: statistics.median(v) for k, v in times.items()}
cases = sorted({c for (_, p, c) in med if p == "leaky" and "/2/" in c},
               key=lambda c: (int(c.split("/")[2]), c))
print(f"{'case (2 threads)':<28} {'spin':<6} {'leaky us':>10} {'vs onednn':>10} {'vs xnnpack':>11} {'of copy':>8} {'vs 1 thread':>11}")
for case in cases:
    short = case.replace("/2/real_time", "")
    for policy in policies:
        ours = med[(policy, "leaky", case)]
        row = f"{short:<28} {policy:<6} {ours:10.1f}"
        for peer in ("onednn", "xnnpack", "stream_copy"):
            theirs = med.get((policy, peer, case))
            row += f" {theirs / ours:10.2f}x" if theirs else f" {'-':>10} "
        one = med.get((policy, "leaky", case.replace("/2/", "/1/")))
        row += f" {one / ours:10.2f}x" if one else f" {'-':>10} "
        print(row)
PY

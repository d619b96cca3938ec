#!/usr/bin/env bash
# The library pool's wait policy, measured: leaky-bench's f32 forward rows
# (in cache and streaming, out of place and in place, 1 and 2 threads) and
# two test processes side by side, for each spin time (LEAKY_POOL_SPIN_US).
# Inside a process leaky-bench times leaky and the peers in interleaved
# rounds, with the pause and untimed call before each sample
# (docs/design.md, "Performance targets"), so the "vs" columns are
# per-round ratios, median [quartiles]. The spin time is read once per
# process, so processes alternate over the spin times, twice. Prints the
# rows and the test-suite wall times; docs/design.md keeps the table.
# Usage: bench/wait_policy.sh [BUILD_DIR] [OUT_DIR] [SPIN_US...]
set -euo pipefail
build=${1:-build} out=${2:-runs/wait-policy}
shift $(( $# < 2 ? $# : 2 ))
policies=("${@:-0 20 50 200 1000}")
read -r -a policies <<< "${policies[*]}"
mkdir -p "$out"
rm -f "$out"/bench-*.json "$out/tests.txt"
filter='^(leaky|onednn|xnnpack|stream_copy)/f32/(fwd|fwd_inplace)/(65536|262144|1048576|67108864)/[12]$'
for round in 1 2; do
  for policy in "${policies[@]}"; do
    LEAKY_POOL_SPIN_US=$policy "$build/leaky-bench" --filter="$filter" --rounds=7 \
      --out="$out/bench-$policy-$round.json" > /dev/null
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
# Per spin time and case (2 threads), leaky's median time and its ratios:
# each a per-round ratio of two samples taken side by side in one process
# (time of the other over leaky's, so > 1 means leaky is faster), pooled
# over the processes, as median [quartiles]. The peers' own pools do not
# change with LEAKY_POOL_SPIN_US.
import glob, json, statistics, sys
out, policies = sys.argv[1], sys.argv[2:]

def quartiles(values):  # linear interpolation, as leaky bench
    if len(values) < 2:
        return values[0], values[0], values[0]
    return tuple(statistics.quantiles(values, n=4, method="inclusive"))

ours_us, ratios = {}, {}  # (policy, case) -> [us]; (policy, case, column) -> [ratio]
for path in glob.glob(f"{out}/bench-*.json"):
    policy = path.split("bench-")[1].split("-")[0]
    rows = {b["name"]: b["seconds"] for b in json.load(open(path))["benchmarks"] if "seconds" in b}
    for name, ours in rows.items():
        contender, dtype, mode, n, threads = name.split("/")
        if contender != "leaky" or threads != "2":
            continue
        case = f"{mode}/{n}"
        ours_us.setdefault((policy, case), []).extend(s * 1e6 for s in ours)
        others = {"onednn": f"onednn/{dtype}/{mode}/{n}/2", "xnnpack": f"xnnpack/{dtype}/{mode}/{n}/2",
                  # in place moves the bytes of an out-of-place forward
                  "of copy": f"stream_copy/{dtype}/fwd/{n}/2", "vs 1 thread": f"leaky/{dtype}/{mode}/{n}/1"}
        for column, other in others.items():
            if other in rows:
                ratios.setdefault((policy, case, column), []).extend(
                    t / o for t, o in zip(rows[other], ours))
columns = ("onednn", "xnnpack", "of copy", "vs 1 thread")
print(f"{'case (2 threads)':<20} {'spin':<6} {'leaky us':>10}" + "".join(f" {c:>20}" for c in columns))
cases = sorted({c for (_, c) in ours_us}, key=lambda c: (int(c.split("/")[1]), c))
for case in cases:
    for policy in policies:
        if (policy, case) not in ours_us:
            continue
        row = f"{case:<20} {policy:<6} {statistics.median(ours_us[(policy, case)]):10.1f}"
        for column in columns:
            values = ratios.get((policy, case, column))
            if values:
                q1, med, q3 = quartiles(values)
                row += f" {f'{med:.2f} [{q1:.2f}, {q3:.2f}]':>20}"
            else:
                row += f" {'-':>20}"
        print(row)
PY

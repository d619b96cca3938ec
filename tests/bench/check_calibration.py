"""The bench's estimate of changed verdicts against recorded pairs of runs.

Each pair under DATA (PAIR/a.json.gz and PAIR/b.json.gz: the raw.json of two
full `leaky bench` runs in a row, reruns merged in) is replayed through
`leaky bench` (tests/replay_bench.sh in place of leaky-bench, no rerun: the
files hold theirs). A pair's expected changes are the mean of its two runs'
figures (each run's estimate of the verdicts that differ between two runs
like it); its seen changes, the checks judged in both runs whose verdicts
differ. Over every pair the expected total must lie within 20% of the seen
total (issue 46's calibration), and no verdict may go from PASS to MISS or
back. Prints each pair's figures.

Usage: check_calibration.py LEAKY REPLAY_SCRIPT DATA_DIR SCRATCH_DIR
"""
import gzip
import json
import os
import pathlib
import shutil
import subprocess
import sys


def replay(leaky, script, raw_gz, scratch):
    raw = scratch / (raw_gz.parent.name + "-" + raw_gz.name.removesuffix(".gz"))
    raw.write_bytes(gzip.decompress(raw_gz.read_bytes()))
    out = scratch / (raw.stem + "-out")
    shutil.rmtree(out, ignore_errors=True)
    subprocess.run([leaky, "bench", "--bench-binary", script, "--out", str(out), "--rerun-passes", "0"],
                   env=dict(os.environ, LEAKY_REPLAY_RAW=str(raw)), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((out / "bench.json").read_text())


def main():
    leaky, script, data, scratch = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), pathlib.Path(sys.argv[4])
    scratch.mkdir(parents=True, exist_ok=True)
    pairs = sorted(p for p in data.iterdir() if (p / "a.json.gz").is_file())
    if len(pairs) < 4:
        sys.exit(f"FAIL: {len(pairs)} recorded pairs in {data}; the calibration needs at least 4")
    expected_total = seen_total = 0.0
    failures = []
    for pair in pairs:
        runs = [replay(leaky, script, pair / f"{side}.json.gz", scratch) for side in "ab"]
        verdicts = [{t["target"]: t["verdict"] for t in run["targets"] if t["verdict"] != "n/a"} for run in runs]
        both = verdicts[0].keys() & verdicts[1].keys()
        changed = sorted(t for t in both if verdicts[0][t] != verdicts[1][t])
        reversed_ = [t for t in changed if {verdicts[0][t], verdicts[1][t]} == {"PASS", "MISS"}]
        expected = [run["verdicts_expected_to_change"] for run in runs]
        print(f"{pair.name}: {len(changed)} of {len(both)} verdicts changed, expected "
              f"{expected[0]:.1f} and {expected[1]:.1f}; PASS <-> MISS: {len(reversed_)}")
        expected_total += sum(expected) / 2
        seen_total += len(changed)
        failures += [f"{pair.name}: {t} went {verdicts[0][t]} -> {verdicts[1][t]}" for t in reversed_]
    print(f"over {len(pairs)} pairs: expected {expected_total:.1f}, seen {seen_total:.0f}")
    if abs(expected_total - seen_total) > 0.2 * seen_total:
        failures.append(f"expected {expected_total:.1f} changes, seen {seen_total:.0f}: not within 20%")
    for f in failures:
        print("FAIL:", f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()

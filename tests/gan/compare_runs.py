"""Two lab run folders hold the same study bit for bit, wall-time fields
aside: results.json (without step_ms, speed_check, provenance and the run's name), every
variant folder's files (CSV without the step_ms column; each finished run's
record, seed<k>.run.json, without step_ms, where both folders have it; PNG
sample grids and
pre-activations byte for byte), and the same set of files.

usage: compare_runs.py <run dir> <run dir>     (exit 1 naming the first difference)
"""
import json
import os
import sys

WALL_TIME = {"step_ms", "speed_check", "provenance"}  # provenance: where and when it ran


def without_wall_time(value):
    if isinstance(value, dict):
        return {k: without_wall_time(v) for k, v in value.items() if k not in WALL_TIME}
    if isinstance(value, list):
        return [without_wall_time(v) for v in value]
    return value


def study(results):
    """results.json without the wall-time fields and the run's name."""
    return {k: v for k, v in without_wall_time(results).items() if k != "name"}


def first_difference(a, b, where="results.json"):
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}.{key}: only in one"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{where}[{i}]")
            if found:
                return found
        return None
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def csv_without_wall_time(path):
    with open(path) as f:
        rows = [line.rstrip("\n").split(",") for line in f]
    drop = rows[0].index("step_ms")
    return [row[:drop] + row[drop + 1:] for row in rows]


def variant_files(run):
    files = {}
    for variant in sorted(os.listdir(run)):
        folder = os.path.join(run, variant)
        if not os.path.isdir(folder) or variant in ("shards", "slurm"):
            continue
        for name in sorted(os.listdir(folder)):
            files[os.path.join(variant, name)] = os.path.join(folder, name)
    return files


def compare(a, b):
    with open(os.path.join(a, "results.json")) as f:
        ra = json.load(f)
    with open(os.path.join(b, "results.json")) as f:
        rb = json.load(f)
    found = first_difference(study(ra), study(rb))
    if found:
        return found
    fa, fb = variant_files(a), variant_files(b)
    # A run's record is where its process ran it: in the run folder, or in a
    # shard's for --jobs and Slurm. Compared where both folders hold it.
    for records, others in ((fa, fb), (fb, fa)):
        for name in [n for n in records if n.endswith(".run.json") and n not in others]:
            del records[name]
    if sorted(fa) != sorted(fb):
        return f"files differ: {sorted(set(fa) ^ set(fb))}"
    for name in fa:
        if name.endswith(".csv"):
            same = csv_without_wall_time(fa[name]) == csv_without_wall_time(fb[name])
        elif name.endswith(".run.json"):
            with open(fa[name]) as x, open(fb[name]) as y:
                found = first_difference(without_wall_time(json.load(x)),
                                         without_wall_time(json.load(y)), name)
            if found:
                return found
            same = True
        else:
            with open(fa[name], "rb") as x, open(fb[name], "rb") as y:
                same = x.read() == y.read()
        if not same:
            return f"{name} differs"
    return None


if __name__ == "__main__":
    difference = compare(sys.argv[1], sys.argv[2])
    if difference:
        print(f"{sys.argv[1]} and {sys.argv[2]} differ: {difference}")
        sys.exit(1)
    print(f"{sys.argv[1]} and {sys.argv[2]}: the same study")

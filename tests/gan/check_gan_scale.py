"""The lab at scale, on small ring8 studies: shards (--shard K/N) and runs of
other seeds (--first-seed) merged by `leaky gan merge` equal a one-process
run bit for bit (wall-time fields aside); merges that do not fit are refused
with one line and write nothing; --jobs workers give the same study, show
every worker's progress, and on Ctrl-C stop and still merge what finished;
progress is plain lines (no carriage returns) when stderr is not a terminal
and an updating line when it is.

usage: check_gan_scale.py <leaky binary> <scratch dir>"""
import json
import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_runs import compare  # noqa: E402

leaky, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
STUDY = ["gan", "--preset", "ring8", "--log-every", "10", "--threads", "1", "--samples", "400",
         "--no-speed-check"]
PROGRESS = re.compile(r"^\[(\d+)/(\d+)\] \S+ seed \d+: step (\d+)/(\d+) \(\d+%\)")


def lab(name, *extra, seeds="2", steps="40", acts="relu,lrelu:0.2,prelu", out=scratch, expect=0,
        **popen):
    result = subprocess.run([leaky, *STUDY, "--seeds", seeds, "--steps", steps, "--acts", acts,
                             "--name", name, "--out", out, *extra],
                            capture_output=not popen, text=True, timeout=600, **popen)
    assert result.returncode == expect, (name, extra, result.returncode, result.stderr[-3000:])
    return result


def merge(*args, expect=0):
    result = subprocess.run([leaky, "gan", "merge", *args], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == expect, (args, result.returncode, result.stderr[-2000:])
    return result


def path(*parts):
    return os.path.join(scratch, *parts)


def same(a, b):
    difference = compare(a, b)
    assert difference is None, difference


# One process: the reference; its progress is plain lines at most every
# tenth of a run (stderr is a pipe here).
whole = lab("whole")
assert "\r" not in whole.stderr, "carriage returns in a non-terminal log"
lines = [line for line in whole.stderr.splitlines() if PROGRESS.match(line)]
assert len(lines) >= 6, whole.stderr
per_run = {}
for line in lines:
    run, runs, step, steps = map(int, PROGRESS.match(line).groups())
    per_run.setdefault(run, []).append(step)
assert sorted(per_run) == list(range(1, 7)), per_run
for run, steps in per_run.items():
    assert len(steps) <= 10 and steps[-1] == 40 and steps == sorted(steps), (run, steps)

# Shards 1..4 of 4, merged, are the one-process run.
for k in range(1, 5):
    lab(f"s{k}", "--shard", f"{k}/4", out=path("parts"))
shards = [path("parts", f"s{k}") for k in range(1, 5)]
with open(path("parts", "s1", "results.json")) as f:
    s1 = json.load(f)
assert s1["shard"] == {"index": 1, "count": 4}
# Runs 1 and 5 of the 6 (relu, lrelu:0.2, prelu x seeds 0, 1).
got = [(v["name"], v["seeds_run"]) for v in s1["variants"]]
assert got == [("relu", [0]), ("prelu", [0])], got
merge(*shards, "--out", path("merged", "whole"))
same(path("whole"), path("merged", "whole"))

# Runs of separate invocations (--first-seed) merge the same way.
lab("seed0", seeds="1", out=path("parts"))
lab("seed1", "--first-seed", "1", seeds="1", out=path("parts"))
merge(path("parts", "seed1"), path("parts", "seed0"), "--out", path("by-seed", "whole"))
same(path("whole"), path("by-seed", "whole"))


def refused(*args, why):
    """A merge that must be refused: exit 2, one line naming `why`, and the
    output folder left as it was."""
    out = path("refused")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        f.write("earlier")
    result = merge(*args, "--out", out, expect=2)
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1 and why in message, (args, message)
    assert os.listdir(out) == ["results.json"], os.listdir(out)
    with open(os.path.join(out, "results.json")) as f:
        assert f.read() == "earlier"
    return message


print(refused(*shards[:3], why="run(s) missing"))
assert "shard(s) 4/4 not given" in refused(*shards[:3], why="--allow-partial")
refused(*shards, shards[1], why="is in both")
refused(*shards, path("parts", "seed0"), why="is in both")
lab("steps30", "--shard", "4/4", steps="30", out=path("parts"))
refused(*shards[:3], path("parts", "steps30"), why="differ in steps")
lab("acts", "--shard", "4/4", acts="relu,lrelu:0.2,elu", out=path("parts"))
refused(*shards[:3], path("parts", "acts"), why="differ in their variants")
os.makedirs(path("parts", "empty"), exist_ok=True)
refused(*shards, path("parts", "empty"), why="has no results.json")
os.makedirs(path("parts", "other"), exist_ok=True)
with open(path("parts", "other", "results.json"), "w") as f:
    json.dump({"something": "else"}, f)
refused(*shards, path("parts", "other"), why="is not a lab results.json")
shutil.copytree(shards[3], path("parts", "old"))
with open(path("parts", "old", "results.json")) as f:
    old = json.load(f)
old["lab_version"] = 1
with open(path("parts", "old", "results.json"), "w") as f:
    json.dump(old, f)
refused(*shards[:3], path("parts", "old"), why="lab version 1")

# --allow-partial merges what is there and says what is missing.
merge(*shards[:3], "--allow-partial", "--out", path("partial"))
with open(path("partial", "results.json")) as f:
    partial = json.load(f)
assert partial["partial"]["missing_shards"] == ["4/4"], partial["partial"]
assert partial["partial"]["missing_runs"] == ["lrelu:0.2 seed 1"], partial["partial"]
with open(path("partial", "report.html")) as f:
    assert "Partial study" in f.read()

# Malformed --shard: one line, exit 2, no output folder.
for bad in ("0/3", "4/3", "1/0", "x", "1/", "/3", "2", "1/2/3", "-1/2"):
    result = lab("badshard", "--shard", bad, expect=2)
    assert len(result.stderr.strip().splitlines()) == 1 and "--shard" in result.stderr, result.stderr
    assert not os.path.exists(path("badshard")), bad

# --jobs 2: the same study, every worker's progress shown.
jobs = lab("jobs", "--jobs", "2", out=path("local"))
same(path("whole"), path("local", "jobs"))
for k in (1, 2):
    assert re.search(rf"^worker {k}/2: \[\d+/3\] ", jobs.stderr, re.M), jobs.stderr
assert "\r" not in jobs.stderr

# On a terminal the progress is one line updated in place.
leader, follower = pty.openpty()
lab("tty", seeds="1", stderr=follower, stdout=subprocess.PIPE)
os.close(follower)
seen = b""
while True:
    try:
        chunk = os.read(leader, 65536)
    except OSError:
        break
    if not chunk:
        break
    seen += chunk
os.close(leader)
assert seen.count(b"\r[") >= 3 and b"steps/s" in seen, seen[:300]

# Ctrl-C stops every worker; what finished is merged (exit 130).
proc = subprocess.Popen([leaky, *STUDY, "--steps", "300", "--seeds", "6", "--acts", "relu,lrelu:0.2",
                         "--jobs", "2", "--name", "stopped", "--out", path("local")],
                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
deadline = time.time() + 240
csvs = []
while time.time() < deadline and len(csvs) < 2:
    time.sleep(0.2)
    csvs = [os.path.join(d, f) for d, _, files in os.walk(path("local", "stopped", "shards"))
            for f in files if f.endswith(".csv")]
assert len(csvs) >= 2, "no worker finished a run in 240 s"
proc.send_signal(signal.SIGINT)
out, err = proc.communicate(timeout=120)
assert proc.returncode == 130, (proc.returncode, err[-2000:])
with open(path("local", "stopped", "results.json")) as f:
    stopped = json.load(f)
assert stopped["stopped_early"] is True and stopped["partial"]["missing_runs"], stopped.keys()
finished = sum(v["seeds_completed"] for v in stopped["variants"])
assert 2 <= finished < 12, finished
leftover = subprocess.run(["pgrep", "-f", path("local", "stopped")], capture_output=True, text=True)
assert leftover.stdout == "", "workers still running: " + leftover.stdout
print("gan at scale: ok")

"""The GAN lab loses nothing (issue 41): a study killed mid-run finishes,
when the same command runs again, with the bits of an uninterrupted run.

- one process, killed by SIGKILL twice (after the first checkpoint of a run,
  then after a later run's), then run to the end: compare_runs.py finds it
  equal to an uninterrupted run (wall times aside), RReLU's stream offsets,
  PReLU's slopes, batch norm's statistics and Adam's moments included;
- --jobs 2 with one worker killed by SIGKILL: the command fails naming the
  worker; run again, it resumes the shards and equals the reference;
- SIGINT: exit 130, one line saying which runs stopped early, no results of
  zero runs; the same command finishes it;
- a run folder is never replaced silently: the same --name with another
  configuration is refused in one line (--force replaces it), an empty name
  and names leaving --out are refused, and a refused command writes nothing;
- a damaged classifier cache is named in one line with its fix.

Every process started here is stopped by its pid when a check fails.

usage: check_gan_resume.py <leaky binary> <scratch dir> <checkout>"""
import glob
import os
import shutil
import signal
import subprocess
import sys
import time

leaky, scratch, checkout = (os.path.abspath(a) for a in sys.argv[1:4])
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import compare_runs  # noqa: E402

shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
fetch = subprocess.run(["bash", os.path.join(checkout, "scripts", "fetch_mnist.sh")],
                       capture_output=True, text=True, timeout=600)
assert fetch.returncode == 0, fetch.stderr
data = os.path.join(checkout, "data", "mnist")
# Six runs with every kind of state: RReLU's offsets, PReLU's slopes, batch
# norm's running statistics; checkpoints every 10 of 40 steps.
study = [leaky, "gan", "--data", "mnist", "--steps", "40", "--log-every", "10",
         "--acts", "relu,rrelu,prelu", "--d-norm", "both", "--samples", "100",
         "--checkpoint-every", "10", "--threads", "1", "--no-speed-check",
         "--data-dir", data, "--out", scratch]
started = []


def start(args):
    """Starts `args` with its stderr in a file (a pipe nobody reads while
    the test waits could fill and stall it); finish() waits and reads it."""
    log = open(os.path.join(scratch, "stderr-%d.txt" % len(started)), "w+")
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=log, text=True)
    p.log = log
    started.append(p)
    return p


def finish(p, timeout=900):
    p.wait(timeout=timeout)
    p.log.seek(0)
    return p.log.read()


def stop_all():
    for p in started:
        if p.poll() is None:
            p.kill()
            p.wait()


def wait_for(pattern, process, timeout=300):
    """Waits until a file matching `pattern` exists (the process still running)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if glob.glob(pattern):
            return
        assert process.poll() is None, "ended before %s appeared" % pattern
        time.sleep(0.05)
    raise AssertionError("no %s within %d s" % (pattern, timeout))


def same(a, b):
    difference = compare_runs.compare(os.path.join(scratch, a), os.path.join(scratch, b))
    assert difference is None, difference


def one_line_refusal(args, words):
    before = sorted(os.listdir(scratch))
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert r.stderr.count("\n") == 1 and words in r.stderr, (words, r.stderr)
    assert sorted(os.listdir(scratch)) == before, "a refused command wrote files"


try:
    reference = subprocess.run(study + ["--name", "reference"], capture_output=True, text=True,
                               timeout=900)
    assert reference.returncode == 0, reference.stderr[-3000:]

    # Killed twice, then finished.
    killed = os.path.join(scratch, "killed")
    for pattern in (killed + "/relu/seed0.checkpoint.pt", killed + "/rrelu/seed0.checkpoint.pt"):
        p = start(study + ["--name", "killed"])
        wait_for(pattern, p)
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert not os.path.exists(os.path.join(killed, "results.json"))
    assert os.path.exists(os.path.join(killed, "relu", "seed0.run.json")), os.listdir(killed)
    done = subprocess.run(study + ["--name", "killed"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    same("reference", "killed")
    assert not glob.glob(killed + "/*/*.checkpoint.pt"), "checkpoints left after the runs finished"

    # --jobs 2, one worker killed.
    jobs = study + ["--name", "jobs", "--jobs", "2"]
    p = start(jobs)
    wait_for(os.path.join(scratch, "jobs", "shards", "shard-2-of-2", "*", "seed0.checkpoint.pt"), p)
    with open("/proc/%d/task/%d/children" % (p.pid, p.pid)) as f:
        workers = [int(w) for w in f.read().split()]
    assert len(workers) == 2, workers
    os.kill(workers[1], signal.SIGKILL)
    err = finish(p)
    assert p.returncode == 1 and "worker" in err and "failed" in err, (p.returncode, err[-2000:])
    again = subprocess.run(jobs, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0, again.stderr[-3000:]
    same("reference", "jobs")

    # SIGINT: what finished is kept, the stopped run is named, the same
    # command finishes the study.
    p = start(study + ["--name", "interrupted"])
    wait_for(os.path.join(scratch, "interrupted", "relu", "seed0.run.json"), p)
    wait_for(os.path.join(scratch, "interrupted", "rrelu", "seed0.checkpoint.pt"), p)
    p.send_signal(signal.SIGINT)
    err = finish(p, timeout=300)
    assert p.returncode == 130, (p.returncode, err[-2000:])
    assert "stopped early" in err and "the same command resumes them" in err, err[-2000:]
    assert "not finished: rrelu seed 0 (checkpointed), prelu seed 0 (not started)" in err, err[-2000:]
    finished = subprocess.run(study + ["--name", "interrupted"], capture_output=True, text=True,
                              timeout=900)
    assert finished.returncode == 0, finished.stderr[-3000:]
    same("reference", "interrupted")

    # Never replaced silently.
    other = list(study)
    other[other.index("--steps") + 1] = "20"
    one_line_refusal(other + ["--name", "reference"], "holds another study (steps 40, not 20)")
    one_line_refusal(study + ["--name", ""], "--name must not be empty")
    one_line_refusal(study + ["--name", "../escape"], "must be a folder name inside --out")
    one_line_refusal(study + ["--name", ".."], "must be a folder name inside --out")
    assert not os.path.exists(os.path.join(os.path.dirname(scratch), "escape"))
    forced = subprocess.run(other + ["--name", "reference", "--force"], capture_output=True,
                            text=True, timeout=900)
    assert forced.returncode == 0, forced.stderr[-3000:]
    with open(os.path.join(scratch, "reference", "results.json")) as f:
        assert '"steps": 20' in f.read()
    # The same study again: nothing is trained twice, the results are the same.
    again = subprocess.run(other + ["--name", "reference"], capture_output=True, text=True,
                           timeout=900)
    assert again.returncode == 0 and "step 10/20" not in again.stderr, again.stderr[-2000:]

    # A damaged classifier cache: one line naming the file and the fix
    # (LibTorch's own message was a 3.4 KB stack dump).
    digits = os.path.join(scratch, "digits")
    os.makedirs(digits)
    shutil.copy(os.path.join(data, "mnist.bin"), digits)
    with open(os.path.join(digits, "classifier-v4-train4000.pt"), "wb") as f:
        f.write(b"PK\x03\x04 not a classifier")
    cache = [a if a != data else digits for a in study]
    one_line_refusal(cache + ["--name", "cache"],
                     digits + "/classifier-v4-train4000.pt is not a classifier this lab can read")
    assert not os.path.exists(os.path.join(scratch, "cache")), "a lab that could not start left a folder"
finally:
    stop_all()
print("gan resume: killed, killed under --jobs and interrupted studies equal the uninterrupted one")

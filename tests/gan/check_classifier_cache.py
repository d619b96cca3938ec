"""The lab's classifier cache as a reader of damaged files: the real cache
(data/mnist/classifier-v4-train4000.pt, written by an earlier test or a
study) truncated at several lengths, with bytes flipped at fixed pseudo-random
places, emptied, and with its archive header broken. (Garbage appended
still loads: the archive's directory is found from the end.)
The property, for every mutant: either the lab runs (a flip inside the
weights still loads; its accuracy is then recorded in results.json), or it
refuses in one line naming the file and how to rebuild it, exit 2, and
writes no run folder. Never a crash, a LibTorch stack dump or a second line.

usage: check_classifier_cache.py <leaky binary> <scratch dir> <checkout>"""
import os
import random
import shutil
import subprocess
import sys

leaky, scratch, checkout = (os.path.abspath(a) for a in sys.argv[1:4])
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
data = os.path.join(checkout, "data", "mnist")
name = "classifier-v4-train4000.pt"
source = os.path.join(data, name)
if not os.path.exists(source):
    # No cache yet (this test ran first): the lab trains one (about 3 min).
    warm = subprocess.run([leaky, "gan", "--steps", "1", "--samples", "100", "--no-speed-check",
                           "--data-dir", data, "--out", scratch, "--name", "warm", "--acts", "relu"],
                          capture_output=True, text=True, timeout=900)
    assert warm.returncode == 0, warm.stderr[-2000:]
original = open(source, "rb").read()
rng = random.Random(42)
mutants = {"empty": b"", "header-broken": b"XXXX" + original[4:]}
for length in (1, 10, 100, 1000, len(original) // 2, len(original) - 1):
    mutants["truncated-%d" % length] = original[:length]
for i in range(2):  # each that loads runs the lab (seconds): two
    at = rng.randrange(len(original))
    mutants["flipped-%d" % at] = original[:at] + bytes([original[at] ^ 0xFF]) + original[at + 1:]

refused = ran = 0
for label, content in mutants.items():
    folder = os.path.join(scratch, "data-" + label)
    os.makedirs(folder)
    shutil.copy(os.path.join(data, "mnist.bin"), folder)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(content)
    out = os.path.join(scratch, "out-" + label)
    r = subprocess.run([leaky, "gan", "--steps", "2", "--log-every", "1", "--samples", "100",
                        "--acts", "relu", "--threads", "1", "--no-speed-check", "--data-dir", folder,
                        "--out", out, "--name", "run"], capture_output=True, text=True, timeout=600)
    if r.returncode == 0:
        ran += 1
        continue
    refused += 1
    assert r.returncode == 2, (label, r.returncode, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1, (label, r.stderr[-2000:])
    assert os.path.join(folder, name) + " is not a classifier this lab can read" in r.stderr, (
        label, r.stderr)
    assert "delete it" in r.stderr, (label, r.stderr)
    assert not os.path.exists(os.path.join(out, "run")), (label, "a refused run left a folder")
# Every cut, the empty file and the broken header must be refused; only
# flips may load.
assert refused >= 8, (refused, ran)
print("classifier cache: %d mutants refused in one line, %d still loaded and ran" % (refused, ran))

"""`leaky gan` on MNIST, short: the quality measure's floor and the
dead-unit probes in results.json (issue 23), at width 2 with PReLU.

- the digits split three ways (lab version 4): the classifier trains on
  4,000, its accuracy on the other 6,000 is at least 98%; 2,000 reference
  digits; the GAN's 4,000;
- the real-vs-real FCD floor is recorded, positive and below every
  variant's FCD after 40 steps of training, with its spread and KID's over
  10 halvings; every quality point has a KID;
- the provenance (commit, binary hash, command line, times) and every
  seed's f16 counts are recorded;
- every run carries dead-unit probes (every --probe-every steps and the
  last) with per-layer fractions in [0, 1];
- --samples above 1,000 is refused in one line (two real sets of that size
  must fit in the 2,000 held-out digits).

usage: check_gan_mnist.py <leaky binary> <scratch dir> <checkout>"""
import json
import os
import re
import shutil
import subprocess
import sys

leaky, scratch, checkout = (os.path.abspath(a) for a in sys.argv[1:4])
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(scratch)
fetch = subprocess.run(["bash", os.path.join(checkout, "scripts", "fetch_mnist.sh")],
                       capture_output=True, text=True, timeout=600)
assert fetch.returncode == 0, fetch.stderr
data = os.path.join(checkout, "data", "mnist")
base = [leaky, "gan", "--data", "mnist", "--steps", "40", "--log-every", "10", "--seeds", "1",
        "--acts", "relu,prelu", "--width", "2", "--threads", "1",
        "--no-speed-check", "--data-dir", data, "--out", scratch]
result = subprocess.run(base + ["--name", "mnist", "--samples", "300"], capture_output=True, text=True, timeout=600)
assert result.returncode == 0, result.stderr[-3000:] + result.stdout
with open(os.path.join(scratch, "mnist", "results.json")) as f:
    r = json.load(f)
assert r["width"] == 2 and r["init"] == "dcgan" and r["lab_version"] == 4, r.keys()
assert r["loss"] == "non-saturating" and r["spectral_norm"] is False, r.keys()
c = r["classifier"]
assert c["train_digits"] == 4000 and c["held_out_digits"] == 6000, c
assert c["gan_images"] == 4000 and c["reference_images"] == 2000, c
assert 0.98 <= c["held_out_accuracy"] <= 1.0, c
assert 0 < c["real_fcd_floor"], c
assert c["fcd_floor"]["n"] == 10 and c["fcd_floor"]["mean"] > 0 and c["fcd_floor"]["std"] > 0, c
assert c["kid_floor"]["n"] == 10 and c["kid_floor"]["std"] > 0, c
p = r["provenance"]
assert len(p["commit"]) == 40 and len(p["binary_sha256"]) == 64, p
assert "--acts relu,prelu" in p["command_line"] and p["started"] <= p["finished"], p
assert p["library_version"].count(".") == 2 and "cores" in p["machine"], p
assert "real-vs-real FCD (the floor)" in result.stdout, result.stdout
for v in r["variants"]:
    assert v["final"]["fcd"] > c["real_fcd_floor"], (v["name"], v["final"]["fcd"], c)
    probes = v["probe_history"][0]
    assert [p["step"] for p in probes] == [40], probes
    for key in ("dead_channels", "zero_real", "nonpos_real", "zero_fake", "nonpos_fake"):
        assert len(probes[0][key]) == 4 and all(0 <= x <= 1 for x in probes[0][key]), (key, probes)
    assert v["final"]["probe_dead_channels"] == probes[-1]["dead_channels"]
    assert all("kid" in q for q in v["quality_history"][0]), v["quality_history"][0]
    # The f16 counts of this seed at its probe step (the last, 40).
    points = v["precision_history"][0]
    assert [q["step"] for q in points] == [40] and points[0]["rows"][0]["negatives"] > 0, points
# PReLU's slopes at the start (its init, 0.25) and the end, per layer.
slopes = r["variants"][1]["prelu_slopes"][0]
assert [l["module"] for l in slopes["start"]] == ["act2", "act4"], slopes
assert all(s == 0.25 for s in slopes["start"][0]["slopes"]), slopes
assert slopes["end"][0]["slopes"] != slopes["start"][0]["slopes"], slopes
assert "prelu_slopes" not in r["variants"][0], r["variants"][0].keys()  # ReLU: none
# PReLU's outputs are never exactly zero on these inputs; ReLU's layer 2 is.
relu, prelu = (v["probe_history"][0][0] for v in r["variants"])
assert relu["zero_real"][1] > 0.05 and prelu["zero_real"][1] == 0.0, (relu, prelu)
html = open(os.path.join(scratch, "mnist", "report.html")).read()
assert "Real-vs-real FCD (the floor)" in html and "held out" in html
# It leads with what it found, in words: the better variant by final FCD and,
# with one seed, that this cannot tell.
headline = re.search(r'<p class="headline">(.*?)</p>', html)
assert headline and html.index('class="headline"') < html.index("<h2>Summary"), "no headline first"
assert "By final FCD (lower is better)" in headline.group(1), headline.group(1)
assert "cannot tell" in headline.group(1) and "--seeds 5" in headline.group(1), headline.group(1)

bad = subprocess.run(base + ["--name", "bad", "--samples", "1001"], capture_output=True, text=True,
                     timeout=60)
assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "--samples 1001" in bad.stderr, bad.stderr
assert not os.path.exists(os.path.join(scratch, "bad"))
# From another working directory, without --data-dir: the checkout's digits
# are found (the default), or LEAKY_DATA_DIR's; a folder without digits is
# named in one line with the option and the command that fills it.
env = {k: v for k, v in os.environ.items() if k != "LEAKY_DATA_DIR"}
anywhere = [a for a in base if a != data and a != "--data-dir"]
ok = subprocess.run(anywhere + ["--name", "anywhere", "--samples", "100"],
                    capture_output=True, text=True, timeout=600, cwd=scratch, env=env)
assert ok.returncode == 0, ok.stderr[-2000:]
empty = os.path.join(scratch, "no-digits")
os.makedirs(empty)
missing = subprocess.run(anywhere + ["--name", "missing"], capture_output=True, text=True,
                         timeout=60, cwd=scratch, env=dict(env, LEAKY_DATA_DIR=empty))
assert missing.returncode != 0 and missing.stderr.count("\n") == 1, missing.stderr
assert empty in missing.stderr and "--data-dir" in missing.stderr, missing.stderr
assert "fetch_mnist.sh " + empty in missing.stderr, missing.stderr
# Workers on a fresh data folder (make demo runs --jobs 2 on a new machine)
# each build the digits' cache from the JSON at the same time; the
# classifier is copied in, so only the digits' cache is built. Eight workers
# made a shared temporary name fail a rename in 3 of 3 tries; two did in a
# bare chroot. Every worker must finish, and no half-written file may stay
# behind. Eight runs (2 variants x 4 seeds): no more workers start than
# there are runs.
fresh = os.path.join(scratch, "fresh-data")
os.makedirs(fresh)
os.symlink(os.path.join(data, "package"), os.path.join(fresh, "package"))
shutil.copy(os.path.join(data, "classifier-v4-train4000.pt"), fresh)


def tiny_workers(name, seeds, acts, jobs, data_dir):
    """A 2-step study of `seeds` x `acts` on `jobs` workers; its stderr."""
    run = subprocess.run([leaky, "gan", "--data", "mnist", "--steps", "2", "--log-every", "1",
                          "--seeds", str(seeds), "--acts", acts, "--width", "2", "--no-speed-check",
                          "--samples", "100", "--jobs", str(jobs), "--data-dir", data_dir,
                          "--out", scratch, "--name", name], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stderr


jobs = tiny_workers("jobs", 4, "relu,prelu", 8, fresh)
assert "gan: 8 worker(s)" in jobs, jobs[-3000:]
# More workers asked for than runs: one per run, and said so.
capped = tiny_workers("capped", 1, "relu", 3, data)
assert "--jobs 3, but the study has 1 run(s): 1 worker(s)" in capped, capped[-3000:]
assert "gan: 1 worker(s)" in capped, capped[-3000:]
assert sorted(os.listdir(fresh)) == ["classifier-v4-train4000.pt", "mnist.bin", "package"], os.listdir(fresh)
print("gan mnist: classifier %.4f held out, floor %.2f, FCD %s" % (
    c["held_out_accuracy"], c["real_fcd_floor"], [round(v["final"]["fcd"], 1) for v in r["variants"]]))

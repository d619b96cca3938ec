"""leaky's PyTorch operators against PyTorch's own, in one process, timed
as leaky-bench times (docs/design.md, "Performance targets"): the two
contenders of a comparison in interleaved rounds, each sample after a pause
until every other thread of the process sleeps (PyTorch's OpenMP workers
spin after a parallel region, ours run on them) and one untimed call; per
contender the median time with its quartiles, and the speed ratio taken per
round, as median [quartiles]. Warns when the machine was busy.

    PYTHONPATH=python /usr/bin/python3 bench/torch_bench.py [--out runs/torch-bench.json]
"""
import argparse
import json
import os
import resource
import statistics
import threading
import time

import torch
import torch.nn.functional as F

import leaky

ops = torch.ops.leaky

# The pause's bounds, as leaky-bench's (bench/leaky_bench.cc says why).
PAUSE_FLOOR_S, PAUSE_POLL_S, PAUSE_CAP_S = 1e-3, 2e-4, 0.5

# The rows with a target: the leaky/torch speed ratio's quartiles must reach it
# (leaky bench's targets, docs/design.md, cover its own peers; these cover
# PyTorch's). PyTorch's quantized LeakyReLU rounds in float and runs on the
# engine torch.backends.quantized.engine picks; leaky's is a byte table.
# The targets are on the in-place rows: out of place, a fresh 64 MiB output
# (glibc maps every block above 32 MiB anew) costs both sides its page
# faults, 241 ms against 2.6 ms for the same fill warm on a busy 2-core VM,
# which measures the kernel of neither.
TARGETS = {"qu8 leaky_relu 64 Mi in place vs qnnpack": 1.5,
           "qu8 leaky_relu 64 Mi in place vs onednn": 1.5}


def targets_table():
    """TARGETS as docs/design.md shows them (the test torch_bench_targets
    keeps that copy the same)."""
    lines = ["| row | threads | leaky/torch speed at least |", "|---|---|---|"]
    lines += [f"| {name} | 1 and 2 | {target:.2f} |" for name, target in TARGETS.items()]
    return "\n".join(lines) + "\n"


def other_threads_asleep():
    """True when no other thread of this process is running or runnable
    ('R' in /proc: a spinning worker; one waiting on a futex is 'S')."""
    me = threading.get_native_id()
    for tid in os.listdir("/proc/self/task"):
        if int(tid) == me:
            continue
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                text = f.read()
        except OSError:  # the thread has ended
            continue
        if text[text.rindex(b")") + 2:][:1] == b"R":
            return False
    return True


def pause():
    """Waits until every other thread sleeps; True when the cap ended it."""
    start = time.perf_counter()
    time.sleep(PAUSE_FLOOR_S)
    while not other_threads_asleep():
        if time.perf_counter() - start > PAUSE_CAP_S:
            return True
        time.sleep(PAUSE_POLL_S)
    return False


def quartiles(values):
    """(first quartile, median, third quartile), linear interpolation."""
    if len(values) < 2:
        return values[0], values[0], values[0]
    return tuple(statistics.quantiles(values, n=4, method="inclusive"))


# Fewer rounds than this give no verdict (leaky bench's kMinRoundsForVerdict).
MIN_ROUNDS_FOR_VERDICT = 5


def verdict(speed, target, rounds):
    """leaky bench's rule: PASS when the ratio's first quartile reaches the
    target, MISS when its third quartile stays below, else unclear."""
    if rounds < MIN_ROUNDS_FOR_VERDICT:
        return "unclear"
    if speed[0] >= target:
        return "PASS"
    return "MISS" if speed[2] < target else "unclear"


class Method:
    def __init__(self, rounds, passes, min_time):
        self.rounds, self.passes = rounds, min(passes, rounds)
        self.per_sample, self.capped = min_time / rounds, 0

    def batch_size(self, fn, x):
        """Calls per timed sample, from calls taken as a sample is."""
        fn(x)  # first call: allocations, first dispatch
        pause()
        fn(x)
        calls, start = 0, time.perf_counter()
        while True:
            fn(x)
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= self.per_sample or calls >= 10**6:
                return max(1, round(self.per_sample / (elapsed / calls)))

    def sample(self, fn, x, reps):
        self.capped += pause()
        fn(x)  # untimed: wakes the threads, warms the data
        start = time.perf_counter()
        for _ in range(reps):
            fn(x)
        return (time.perf_counter() - start) / reps

    def measure(self, contenders, x, first, end, samples):
        """contenders: name -> fn; appends to samples[name] the seconds per
        call of rounds [first, end), the contenders interleaved, starting
        one further on each round."""
        names = list(contenders)
        reps = {name: self.batch_size(contenders[name], x) for name in names}
        for r in range(first, end):
            for i in range(len(names)):
                name = names[(i + r) % len(names)]
                samples[name].append(self.sample(contenders[name], x, reps[name]))

    def run(self, comparisons):
        """Every comparison's rounds, shared out over passes through all of
        them (as leaky-bench's), so each one's samples span the whole run."""
        samples = [{"leaky": [], "torch": []} for _ in comparisons]
        for p in range(self.passes):
            first, end = self.rounds * p // self.passes, self.rounds * (p + 1) // self.passes
            for c, s in zip(comparisons, samples):
                c.setup()
                torch.set_num_threads(c.threads)
                self.measure({"leaky": c.ours_fn, "torch": c.theirs_fn}, c.x, first, end, s)
        return samples


class Comparison:
    """One row: leaky's op and PyTorch's on x at a thread count. In place,
    neither side allocates: the kernels alone. Out of place, both sides get
    their output from PyTorch's allocator (glibc malloc maps fresh pages
    above 32 MiB, so at 64 Mi both pay the same page faults)."""

    def __init__(self, name, ours_fn, theirs_fn, x, threads, bytes_moved=None, setup=lambda: None):
        self.name, self.ours_fn, self.theirs_fn, self.x = name, ours_fn, theirs_fn, x
        self.threads, self.bytes_moved, self.setup = threads, bytes_moved, setup


def row_of(c, s):
    ours, theirs = quartiles(s["leaky"]), quartiles(s["torch"])
    speed = quartiles([t / o for t, o in zip(s["torch"], s["leaky"])])  # paired by round
    rounds = len(s["leaky"])
    row = {"case": c.name, "threads": c.threads, "elements": c.x.numel(), "dtype": str(c.x.dtype),
           "rounds": rounds,
           "leaky_us": ours[1] * 1e6, "leaky_us_iqr": [ours[0] * 1e6, ours[2] * 1e6],
           "torch_us": theirs[1] * 1e6, "torch_us_iqr": [theirs[0] * 1e6, theirs[2] * 1e6],
           "speedup": speed[1], "speedup_iqr": [speed[0], speed[2]]}
    if c.bytes_moved:
        row["leaky_gbps"] = c.bytes_moved / ours[1] / 1e9
        row["torch_gbps"] = c.bytes_moved / theirs[1] / 1e9
    target = TARGETS.get(c.name)
    if target is not None:
        row["target"], row["verdict"] = target, verdict(speed, target, rounds)
    print(f"{c.name:<30} threads={c.threads}  leaky {ours[1] * 1e6:10.1f} us "
          f"({100 * (ours[2] - ours[0]) / ours[1]:3.0f}%)  torch {theirs[1] * 1e6:10.1f} us "
          f"({100 * (theirs[2] - theirs[0]) / theirs[1]:3.0f}%)  leaky/torch speed "
          f"{speed[1]:.2f} [{speed[0]:.2f}, {speed[2]:.2f}]" +
          ("" if target is None else f"  target {target:.2f}: {row['verdict']}"))
    return row


def cpu_times():
    """(total, busy by others, stolen) clock ticks of all CPUs so far."""
    with open("/proc/stat") as f:
        v = [float(x) for x in f.readline().split()[1:9]]
    own = resource.getrusage(resource.RUSAGE_SELF)
    own_ticks = (own.ru_utime + own.ru_stime) * os.sysconf("SC_CLK_TCK")
    return sum(v), sum(v) - v[3] - v[4] - v[7] - own_ticks, v[7]


def runnable_others(seconds):
    """Threads besides this one runnable, averaged over `seconds`: /proc/loadavg's
    fourth field counts them at the moment it is read (leaky-bench's RunnableOthers;
    the 1-minute load average still counts a run that has ended)."""
    end, reads = time.monotonic() + seconds, []
    while True:
        with open("/proc/loadavg") as f:
            reads.append(max(0, int(f.read().split()[3].split("/")[0]) - 1))
        time.sleep(0.02)
        if time.monotonic() >= end:
            return sum(reads) / len(reads)


def shares(a, b):
    total = b[0] - a[0]
    if total <= 0:
        return {"others_busy_pct": None, "steal_pct": None}
    return {"others_busy_pct": max(0.0, 100 * (b[1] - a[1]) / total),
            "steal_pct": 100 * (b[2] - a[2]) / total}


def warnings(machine):
    """leaky bench's thresholds (docs/design.md)."""
    found = []
    runnable = machine.get("runnable_others_start")
    if runnable is not None and runnable >= 0.5:
        found.append(f"busy machine: {runnable:.1f} other threads runnable on average "
                     "in the half second before the run")
    for when, during in (("start", "in the half second before the run"), ("run", "during the run")):
        others, steal = machine[when]["others_busy_pct"], machine[when]["steal_pct"]
        if others is not None and others >= 5:
            found.append(f"busy machine: other processes used {others:.0f}% of the CPUs' time {during}")
        if steal is not None and steal >= 2:
            found.append(f"busy host: the hypervisor stole {steal:.1f}% of the CPUs' time {during}")
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="runs/torch-bench.json")
    parser.add_argument("--rounds", type=int, default=15, help="samples per contender (default 15)")
    parser.add_argument("--passes", type=int, default=3,
                        help="runs over all rows that share the rounds out (default 3)")
    parser.add_argument("--min-time", type=float, default=0.1,
                        help="timed seconds per contender, over all its rounds (default 0.1)")
    parser.add_argument("--quick", action="store_true", help="64 Ki, 1 Mi and 64 Mi f32 forward only")
    parser.add_argument("--only-quantized", action="store_true",
                        help="the qu8 LeakyReLU rows only (against each PyTorch quantized engine)")
    parser.add_argument("--targets", action="store_true",
                        help="print the targets as docs/design.md's table and exit")
    args = parser.parse_args()
    if args.targets:
        print(targets_table(), end="")
        return 0
    if args.rounds < 1 or args.passes < 1 or not args.min_time >= 0:
        parser.error("--rounds and --passes must be at least 1 and --min-time a number of seconds >= 0")
    method = Method(args.rounds, args.passes, args.min_time)
    start_state = {"load_1min_start": os.getloadavg()[0]}
    idle_start = cpu_times()
    start_state["runnable_others_start"] = runnable_others(0.5)
    run_start = cpu_times()
    comparisons = []

    def both(name, ours_fn, theirs_fn, x, bytes_moved=None, setup=lambda: None):
        for threads in (1, 2):
            comparisons.append(Comparison(name, ours_fn, theirs_fn, x, threads, bytes_moved, setup))

    def measured():
        engine_before = torch.backends.quantized.engine
        samples = method.run(comparisons)
        torch.backends.quantized.engine = engine_before
        return [row_of(c, s) for c, s in zip(comparisons, samples)]

    if args.only_quantized:
        quantized_rows(both)
        return finish(args, method, start_state, idle_start, run_start, measured())
    sizes = ((64 << 10, "64 Ki"), (1 << 20, "1 Mi")) if args.quick else \
        ((64 << 10, "64 Ki"), (256 << 10, "256 Ki"), (1 << 20, "1 Mi"))
    for size, label in sizes:
        x = torch.randn(size)
        both(f"f32 forward {label}", lambda t: ops.leaky_relu(t, 0.2),
             lambda t: F.leaky_relu(t, 0.2), x, 8 * size)
        if not args.quick:  # in place on a copy: the out-of-place rows keep their data
            both(f"f32 forward {label} in place", lambda t: ops.leaky_relu_(t, 0.2),
                 lambda t: F.leaky_relu_(t, 0.2), x.clone(), 8 * size)
    big = torch.randn(64 << 20)
    both("f32 forward 64 Mi", lambda t: ops.leaky_relu(t, 0.2), lambda t: F.leaky_relu(t, 0.2),
         big, 8 * big.numel())
    if not args.quick:
        both("f32 forward 64 Mi in place", lambda t: ops.leaky_relu_(t, 0.2),
             lambda t: F.leaky_relu_(t, 0.2), big.clone(), 8 * big.numel())
        big_bf16 = big.to(torch.bfloat16)
        both("bf16 forward 64 Mi", lambda t: ops.leaky_relu(t, 0.2), lambda t: F.leaky_relu(t, 0.2),
             big_bf16, 4 * big.numel())
        small = torch.randn(4096)
        both("f32 forward 4 Ki (per call)", lambda t: ops.leaky_relu(t, 0.2),
             lambda t: F.leaky_relu(t, 0.2), small, 8 * 4096)
        # The same 4 Ki call with both ops entered through torch.ops (the
        # Python OpOverloadPacket path that every torch.ops user pays), to
        # separate that layer's cost from the operator's.
        comparisons.append(Comparison("f32 4 Ki, both via torch.ops", lambda t: ops.leaky_relu(t, 0.2),
                                      lambda t: torch.ops.aten.leaky_relu(t, 0.2), small, 1))
        # Fused bias + LeakyReLU + gain (+ dropout) against PyTorch's unfused
        # sequence, NCHW [64, 64, 128, 128] = 64 Mi f32 elements.
        x4 = big.view(64, 64, 128, 128)
        b = torch.randn(64)
        gain = 2 ** 0.5
        both("bias_act 64 Mi vs unfused", lambda t: ops.bias_act(t, b, 1, "lrelu", 0.2, gain),
             lambda t: F.leaky_relu(t + b.view(1, -1, 1, 1), 0.2) * gain, x4)
        both("bias_act+dropout 64 Mi",
             lambda t: ops.bias_act(t, b, 1, "lrelu", 0.2, gain, None, 0.1, 1, 0),
             lambda t: F.dropout(F.leaky_relu(t + b.view(1, -1, 1, 1), 0.2) * gain, 0.1), x4)
        both("elu 64 Mi", lambda t: ops.elu(t, 1.0), lambda t: F.elu(t, 1.0), big)
        w = torch.full((64,), 0.25)
        both("prelu 64 Mi (64 channels)", lambda t: ops.prelu(t, w), lambda t: F.prelu(t, w), x4)
        both("rrelu 64 Mi training", lambda t: ops.rrelu(t, 0.125, 1 / 3, True, 1, 0),
             lambda t: F.rrelu(t, 0.125, 1 / 3, training=True), big)
        quantized_rows(both)
    return finish(args, method, start_state, idle_start, run_start, measured())


def quantized_rows(both):
    """8-bit LeakyReLU, qu8 at 64 Mi: PyTorch's quantized leaky_relu on each
    quantized engine against torch.ops.leaky.quantized_leaky_relu (one byte
    in, one out per element); each row sets its engine before it runs."""
    size = 64 << 20
    qx = torch.quantize_per_tensor(torch.randn(size), 0.05, 128, torch.quint8)
    for engine in ("qnnpack", "onednn"):
        if engine not in torch.backends.quantized.supported_engines:
            print(f"qu8 leaky_relu: PyTorch has no {engine} engine here "
                  f"(supported: {', '.join(torch.backends.quantized.supported_engines)}); skipped")
            continue

        def use(engine=engine):
            torch.backends.quantized.engine = engine

        both(f"qu8 leaky_relu 64 Mi vs {engine}", lambda t: ops.quantized_leaky_relu(t, 0.2),
             lambda t: F.leaky_relu(t, 0.2), qx, 2 * size, use)
        both(f"qu8 leaky_relu 64 Mi in place vs {engine}",
             lambda t: ops.quantized_leaky_relu_(t, 0.2), lambda t: F.leaky_relu_(t, 0.2), qx,
             2 * size, use)


def finish(args, method, start_state, idle_start, run_start, rows):
    machine = {**start_state, "start": shares(idle_start, run_start),
               "run": shares(run_start, cpu_times()), "load_1min_end": os.getloadavg()[0]}
    found = warnings(machine)
    if method.capped:
        found.append(f"threads still running after the longest pause before {method.capped} samples")
    verdicts = [f"{r['verdict']} {r['case']} threads={r['threads']}: {r['speedup']:.2f} "
                f"[{r['speedup_iqr'][0]:.2f}, {r['speedup_iqr'][1]:.2f}] (needs >= {r['target']:.2f})"
                for r in rows if "verdict" in r]
    missed = [v for v in verdicts if v.startswith("MISS")]
    print(f"machine: {json.dumps(machine)}")
    for v in verdicts:
        print(f"TARGET {v}")
    for w in found:
        print(f"WARNING: {w}")
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "simd_target": leaky.numpy.simd_target(),
                   "method": {"rounds": args.rounds, "passes": method.passes,
                              "min_time": args.min_time,
                              "pause": "until every other thread of the process sleeps, then one "
                                       "untimed call", "ratio": "torch time / leaky time per round",
                              "verdict": "PASS if the ratio's first quartile reaches the target, "
                                         "MISS if its third quartile does not, else unclear"},
                   "machine": machine, "warnings": found, "targets": TARGETS,
                   "targets_missed": missed, "rows": rows}, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

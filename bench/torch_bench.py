"""leaky's PyTorch operator against PyTorch's own LeakyReLU, same process,
interleaved repetitions; prints same-run ratios and writes JSON.

    PYTHONPATH=python /usr/bin/python3 bench/torch_bench.py [--out runs/torch-bench.json]
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

import leaky

ops = torch.ops.leaky


def time_call(fn, x, repeats):
    """Median seconds per call over `repeats` timed batches."""
    fn(x)  # warm-up: allocations, first dispatch
    batch = max(1, int(2e-3 / max(1e-9, _once(fn, x))))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(batch):
            fn(x)
        samples.append((time.perf_counter() - start) / batch)
    return statistics.median(samples)


def _once(fn, x):
    start = time.perf_counter()
    fn(x)
    return time.perf_counter() - start


def compare(name, x, threads, repeats, in_place=False):
    """In place, neither side allocates: the kernels alone. Out of place, both
    sides get their output from PyTorch's allocator (glibc malloc maps fresh
    pages above 32 MiB, so at 64 Mi both pay the same page faults)."""
    torch.set_num_threads(threads)
    if in_place:
        ours_fn = lambda t: ops.leaky_relu_(t, 0.2)
        theirs_fn = lambda t: F.leaky_relu_(t, 0.2)
    else:
        ours_fn = lambda t: ops.leaky_relu(t, 0.2)
        theirs_fn = lambda t: F.leaky_relu(t, 0.2)
    ours, theirs = [], []
    for _ in range(3):  # interleave so drift hits both alike
        ours.append(time_call(ours_fn, x, repeats))
        theirs.append(time_call(theirs_fn, x, repeats))
    ours_s, theirs_s = min(ours), min(theirs)
    bytes_moved = 2 * x.numel() * x.element_size()
    row = {"case": name, "threads": threads, "elements": x.numel(), "dtype": str(x.dtype),
           "leaky_us": ours_s * 1e6, "torch_us": theirs_s * 1e6,
           "leaky_gbps": bytes_moved / ours_s / 1e9, "torch_gbps": bytes_moved / theirs_s / 1e9,
           "speedup": theirs_s / ours_s}
    print(f"{name:<30} threads={threads}  leaky {row['leaky_us']:10.1f} us  "
          f"torch {row['torch_us']:10.1f} us  leaky/torch speed {row['speedup']:.2f}x")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="runs/torch-bench.json")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rows = []
    for size, label in ((64 << 10, "64 Ki"), (256 << 10, "256 Ki"), (1 << 20, "1 Mi")):
        x = torch.randn(size)
        for threads in (1, 2):
            rows.append(compare(f"f32 forward {label}", x, threads, args.repeats))
            rows.append(compare(f"f32 forward {label} in place", x, threads, args.repeats, True))
    big = torch.randn(64 << 20)
    for threads in (1, 2):
        rows.append(compare("f32 forward 64 Mi", big, threads, args.repeats))
    for threads in (1, 2):
        rows.append(compare("f32 forward 64 Mi in place", big, threads, args.repeats, True))
    big_bf16 = big.to(torch.bfloat16)
    for threads in (1, 2):
        rows.append(compare("bf16 forward 64 Mi", big_bf16, threads, args.repeats))
    small = torch.randn(4096)
    for threads in (1, 2):
        rows.append(compare("f32 forward 4 Ki (per call)", small, threads, 50))
    # The same 4 Ki call with both ops entered through torch.ops (the Python
    # OpOverloadPacket path that every torch.ops user pays), to separate that
    # layer's cost from the operator's.
    torch.set_num_threads(1)
    aten = min(time_call(lambda t: torch.ops.aten.leaky_relu(t, 0.2), small, 50) for _ in range(3))
    ours = min(time_call(lambda t: ops.leaky_relu(t, 0.2), small, 50) for _ in range(3))
    rows.append({"case": "f32 4 Ki, both via torch.ops", "threads": 1, "leaky_us": ours * 1e6,
                 "torch_us": aten * 1e6, "speedup": aten / ours})
    print(f"{'f32 4 Ki, both via torch.ops':<30} threads=1  leaky {ours*1e6:10.1f} us  "
          f"torch {aten*1e6:10.1f} us  leaky/torch speed {aten/ours:.2f}x")
    def pair(case, ours_fn, theirs_fn, x):
        for threads in (1, 2):
            torch.set_num_threads(threads)
            ours = min(time_call(ours_fn, x, args.repeats) for _ in range(2))
            theirs = min(time_call(theirs_fn, x, args.repeats) for _ in range(2))
            rows.append({"case": case, "threads": threads, "leaky_us": ours * 1e6,
                         "torch_us": theirs * 1e6, "speedup": theirs / ours})
            print(f"{case:<30} threads={threads}  leaky {ours*1e6:10.1f} us  "
                  f"torch {theirs*1e6:10.1f} us  leaky/torch speed {theirs/ours:.2f}x")

    # Fused bias + LeakyReLU + gain (+ dropout) against PyTorch's unfused
    # sequence, NCHW [64, 64, 128, 128] = 64 Mi f32 elements.
    x4 = big.view(64, 64, 128, 128)
    b = torch.randn(64)
    gain = 2 ** 0.5
    pair("bias_act 64 Mi vs unfused", lambda t: ops.bias_act(t, b, 1, "lrelu", 0.2, gain),
         lambda t: F.leaky_relu(t + b.view(1, -1, 1, 1), 0.2) * gain, x4)
    pair("bias_act+dropout 64 Mi", lambda t: ops.bias_act(t, b, 1, "lrelu", 0.2, gain, None,
                                                           0.1, 1, 0),
         lambda t: F.dropout(F.leaky_relu(t + b.view(1, -1, 1, 1), 0.2) * gain, 0.1), x4)
    pair("elu 64 Mi", lambda t: ops.elu(t, 1.0), lambda t: F.elu(t, 1.0), big)
    w = torch.full((64,), 0.25)
    pair("prelu 64 Mi (64 channels)", lambda t: ops.prelu(t, w), lambda t: F.prelu(t, w), x4)
    pair("rrelu 64 Mi training", lambda t: ops.rrelu(t, 0.125, 1 / 3, True, 1, 0),
         lambda t: F.rrelu(t, 0.125, 1 / 3, training=True), big)
    import os
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"torch": torch.__version__, "simd_target": leaky.numpy.simd_target(),
                   "rows": rows}, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The pool under a noisy neighbour: LeakyReLU f32 forward at 1 and 2
threads, interleaved call by call (order alternating), alone and with a busy
process on the machine; medians and quartiles of the call times, and the
pool's counters (LEAKY_POOL_STATS=1, where the library has them).

    /usr/bin/python3 bench/pool_noise.py LIBLEAKY.so [--rounds N] [--sizes N,...]

Timing only: nothing here is asserted (the machine is shared)."""
import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import time


def measure(lib_path, sizes, rounds):
    lib = ctypes.CDLL(lib_path)
    lib.leaky_relu_forward.argtypes = [ctypes.c_int, ctypes.c_size_t, ctypes.c_void_p,
                                       ctypes.c_void_p, ctypes.c_double, ctypes.c_void_p]

    class Options(ctypes.Structure):
        _fields_ = [("num_threads", ctypes.c_int), ("stream_stores", ctypes.c_int),
                    ("executor", ctypes.c_void_p)]
    rows = []
    for n in sizes:
        x = (ctypes.c_float * n)()
        y = (ctypes.c_float * n)()
        times = {1: [], 2: []}
        for r in range(rounds):
            for threads in ((1, 2) if r % 2 == 0 else (2, 1)):
                options = Options(threads, -1, None)
                start = time.perf_counter()
                status = lib.leaky_relu_forward(0, n, x, y, ctypes.c_double(0.2), ctypes.byref(options))
                times[threads].append(time.perf_counter() - start)
                if status != 0:
                    sys.exit("leaky_relu_forward failed")
        rows.append((n, times))
    return rows


def quartiles(v):
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], statistics.median(v), q[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lib")
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--sizes", default="1048576,67108864")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.child:
        for n, times in measure(args.lib, sizes, args.rounds):
            q1, q2 = quartiles(times[1]), quartiles(times[2])
            print("%10d  1 thread %8.3f ms [%.3f, %.3f]  2 threads %8.3f ms [%.3f, %.3f]  "
                  "1/2 = %.2f" % (n, q1[1] * 1e3, q1[0] * 1e3, q1[2] * 1e3, q2[1] * 1e3,
                                  q2[0] * 1e3, q2[2] * 1e3, q1[1] / q2[1]), flush=True)
        return
    env = dict(os.environ, LEAKY_POOL_STATS="1")
    for label, neighbour in (("alone", False), ("busy neighbour", True)):
        print("--", label)
        busy = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if neighbour else None
        try:
            subprocess.run([sys.executable, __file__, args.lib, "--child", "--rounds",
                            str(args.rounds), "--sizes", args.sizes], env=env, check=True)
        finally:
            if busy is not None:
                busy.kill()
                busy.wait()


if __name__ == "__main__":
    main()

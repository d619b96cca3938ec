"""Runs the diagnosis corpus: faulty (and a few correct) LeakyReLU kernels,
each with the finding an expert would want first, through
leaky.testing.check_op.

    PYTHONPATH=python LEAKY_LIB_DIR=build/python \\
        /usr/bin/python3 tests/check_corpus/run_corpus.py [--case NAME ...] [--list]

One line per case: its name, the kinds accepted for the first finding, the
kind check_op gave first (with its message, shortened) and OK or MISS; then
"N of M diagnosed as expected". Exit 0 only if every case run is as
expected. --kernels-only checks the kernels instead of the diagnosis: every
planted fault must make the output differ from the golden (check_op does not
pass) and every correct kernel must pass - what keeps the corpus honest
whatever the diagnosis says. --both checks both from one run of each case
(what the test suite runs: the two checks read the same check_op result).

Cases are in cases.json beside this file: OpenCL kernels under opencl/ run
in the library's place through opencl_leaky_relu(source=...), NumPy ones
are functions of numpy_cases.py. OpenCL runs on one PoCL thread
(POCL_MAX_PTHREAD_COUNT=1) so that the order of work-groups, and with it what
a faulty kernel leaves in local memory, is the same from run to run; and
each OpenCL case runs in a process of its own, because a kernel that reads
local memory it never filled (no_first_prefetch, out_slot_wrong, ...) reads
what the kernels launched before it in the process left there: alone or
among all the cases, a case then sees the same bytes. The process is a fork
of this one, made before this one opens the OpenCL platform (it never does):
a fresh interpreter spent 1.5 of its 2 s per case importing leaky (and with
it PyTorch) again.
"""
import argparse
import json
import os
import subprocess
import sys

# Before the OpenCL platform is first opened (leaky.testing opens it lazily).
os.environ.setdefault("POCL_MAX_PTHREAD_COUNT", "1")
# Before NumPy loads OpenBLAS: no BLAS threads, whose state a forked child
# (in_child) would inherit without the threads themselves.
os.environ["OPENBLAS_NUM_THREADS"] = "1"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# The folder holding cases.json and the kernels it names: this one, or
# another corpus in the same format (--corpus, e.g. a sealed test set).
CORPUS = HERE

PLAN_KEYS = ("split", "cores", "tile_elems", "buffers")
MESSAGE_WIDTH = 120


def load_cases():
    cases = []
    # cases.json (LeakyReLU: OpenCL and NumPy kernels) and family_cases.json
    # (the other ops of leaky/family.h, kernels in family_cases.py).
    for name in ("cases.json", "family_cases.json"):
        path = os.path.join(CORPUS, name)
        if os.path.exists(path):
            with open(path) as f:
                cases += json.load(f)
    # "pass" and every finding kind of the diagnosis's one list.
    import leaky.testing
    kinds = {"pass"} | set(leaky.testing.FINDING_KINDS)
    names = set()
    for case in cases:  # a malformed case is the corpus's bug: say which, stop
        name = case.get("name")
        problems = []
        if name in names:
            problems.append("the name is used twice")
        names.add(name)
        if case.get("kind") not in ("opencl", "numpy", "numpy_family"):
            problems.append("kind must be opencl, numpy or numpy_family")
        if not case.get("expect") or not set(case["expect"]) <= kinds:
            problems.append("expect must list kinds of the vocabulary: %s" % case.get("expect"))
        if case.get("expect") == ["pass"] and case.get("max_findings") != 0:
            problems.append("a correct kernel allows no finding (max_findings 0)")
        if sorted(case.get("plan", {})) != sorted(PLAN_KEYS):
            problems.append("plan needs %s" % ", ".join(PLAN_KEYS))
        if problems:
            sys.exit("cases.json: case %s: %s" % (name, "; ".join(problems)))
    return cases


def shorten(text, width=MESSAGE_WIDTH):
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[:width - 3] + "..."


class OpenCL:
    """The device kernels' callables, or why there are none."""

    def __init__(self, lt, device, apart=False):
        """Runs the library's own kernel once, here or (apart) in a child:
        then this process never opens the platform (check_apart)."""
        self.lt, self.device = lt, device
        self.missing = in_child(lambda: OpenCL(lt, device).missing) if apart else self.probe()

    def probe(self):
        try:
            import numpy as np
            self.lt.opencl_leaky_relu(device=self.device)(np.zeros(1, np.float32), 0.2)
        except RuntimeError as e:
            return shorten(e)
        return None

    def callable(self, case):
        with open(os.path.join(CORPUS, case["file"])) as f:
            source = f.read()
        return self.lt.opencl_leaky_relu(device=self.device, source=source,
                                         build_options=case.get("build_options"), op=case["op"],
                                         **case["plan"])


def numpy_callable(case):
    import importlib
    module = importlib.import_module("family_cases" if case["kind"] == "numpy_family" else
                                     "numpy_cases")
    fn = getattr(module, case["function"])
    modelled = getattr(fn, "plan", {})
    differs = {k: (v, case["plan"].get(k)) for k, v in modelled.items() if case["plan"].get(k) != v}
    if differs:
        sys.exit("cases.json: case %s: %s models %s, the case's plan says otherwise (%s)" % (
            case["name"], case["function"], modelled, differs))
    return fn


def check_here(lt, case, opencl):
    """The case's result in this process: {"passed", "mismatches",
    "findings": [{"kind", "message"}]}, or {"skip": why}."""
    if case["kind"] == "opencl":
        if opencl.missing:
            return {"skip": "no OpenCL: %s" % opencl.missing}
        fn = opencl.callable(case)
    else:
        fn = numpy_callable(case)
    try:
        if case["kind"] == "numpy_family":
            import numpy as np
            with np.errstate(all="ignore"):  # the kernels' own overflows are the op's
                d = lt.check_op(fn, op=case["op"], direction=case["direction"],
                                dtype=case["dtype"], elems=case["elems"], dist=case.get("dist"),
                                params=case.get("params"), channels=case.get("channels", 4),
                                **case["plan"])
        else:
            d = lt.check_op(fn, dtype=case["dtype"], elems=case["elems"],
                            slope=case.get("slope", 0.2), dist=case["dist"], op=case["op"],
                            strict_zero_sign=case.get("strict_zero_sign", False), **case["plan"])
    except (RuntimeError, ValueError) as e:
        if "cl_khr_fp64" in str(e):  # f64 on a device without it
            return {"skip": "the device has no cl_khr_fp64"}
        raise
    return {"passed": bool(d.passed), "mismatches": d.mismatches,
            "findings": [{"kind": f.kind, "message": f.message} for f in d.findings]}


_PLAN_FLAGS = {"split": "--split", "cores": "--cores", "tile_elems": "--tile-elems",
               "buffers": "--buffers", "preset": "--preset", "buffer_bytes": "--buffer-bytes",
               "align": "--align"}


def check_cli(cli, case):
    """A family case through the CLI, as an engineer runs it: `leaky golden
    --op ... --plan` writes the inputs, the kernel reads them and writes its
    outputs, `leaky check --side ... --json` diagnoses them."""
    import numpy as np
    import tempfile
    fn = numpy_callable(case)
    plan = dict({"preset": "npu"}, **case["plan"])  # check_op's default preset
    with tempfile.TemporaryDirectory() as tmp:
        golden = os.path.join(tmp, "golden")
        command = [cli, "golden", "--op", case["op"], "--direction", case["direction"],
                   "--dtype", case["dtype"], "--elems", str(case["elems"]), "--out", golden,
                   "--plan"]
        for key, value in plan.items():
            command += [_PLAN_FLAGS[key], str(value)]
        if "channels" in case:
            command += ["--channels", str(case["channels"])]
        if case.get("dist"):
            command += ["--dist", case["dist"]]
        for key, value in (case.get("params") or {}).items():
            command += ["--param", "%s=%s" % (key, value if isinstance(value, str) else
                                              json.dumps(value))]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            return {"error": shorten(done.stderr.strip())}
        with open(os.path.join(golden, "golden.json")) as f:
            described = json.load(f)
        dtype = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[described["dtype"]]
        shape = tuple(described["shape"]) if described["shape"][1] > 1 or case["op"] in (
            "prelu", "bias_act", "bias_act_dropout") else (described["elements"],)

        def load(name, file):
            data = np.fromfile(os.path.join(golden, file),
                               np.uint8 if name == "mask" else dtype)
            return data.reshape(shape) if name in ("x", "dy", "saved") else data
        inputs = [load(name, file) for name, file in described["inputs"].items()]
        try:
            with np.errstate(all="ignore"):
                result = fn(*inputs, **described["scalars"])
        except Exception as e:  # the kernel's own failure: a refused case
            return {"error": "the kernel raised %s: %s" % (type(e).__name__, shorten(e))}
        results = list(result) if isinstance(result, (tuple, list)) else [result]
        names = list(described["outputs"])
        files = []
        for name, array in zip(names, results):
            path = os.path.join(tmp, "out_%s.bin" % name)
            np.ascontiguousarray(array).tofile(path)
            files.append((name, path))
        command = [cli, "check", files[0][1], "--golden", golden, "--json"]
        for name, path in files[1:]:
            command += ["--side", "%s=%s" % (name, path)]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode not in (0, 1):
            return {"error": shorten(done.stderr.strip())}
        verdict = json.loads(done.stdout)
    return {"passed": bool(verdict["pass"]), "mismatches": verdict["mismatches"],
            "findings": [{"kind": f["kind"], "message": f["message"]} for f in verdict["findings"]]}


def in_child(work):
    """work()'s result (JSON-able) computed in a forked child; a child that
    raised or died is a RuntimeError naming what it said."""
    read, write = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:  # the child: reports through the pipe, never returns
        os.close(read)
        try:
            reply = {"result": work()}
        except BaseException as e:  # noqa: B902 - whatever it was, said to the parent
            reply = {"failed": "%s: %s" % (type(e).__name__, shorten(e))}
        with os.fdopen(write, "w") as f:
            json.dump(reply, f)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as f:
        text = f.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not text:
        raise RuntimeError("the child process ended with status %d and no result" % status)
    reply = json.loads(text)
    if "failed" in reply:
        raise RuntimeError(reply["failed"])
    return reply["result"]


def check_apart(lt, case, device):
    """check_here in a child that opens the OpenCL platform afresh (see the
    module's docstring), runs the library's kernel (OpenCL's probe) and then
    the case's, as a fresh interpreter would."""
    try:
        return in_child(lambda: check_here(lt, case, OpenCL(lt, device)))
    except RuntimeError as e:
        raise RuntimeError("case %s: %s" % (case["name"], e)) from None


def describe(case):
    plan = case["plan"]
    if case["kind"] == "numpy_family":
        return "%-40s family_cases.%s %s %s %s %d, %s %d cores, %d-element tiles\n    %s\n    expect %s" % (
            case["name"], case["function"], case["op"], case["direction"], case["dtype"],
            case["elems"], plan["split"], plan["cores"], plan["tile_elems"], case["bug"],
            "|".join(case["expect"]))
    extras = ["slope %g" % case["slope"]] if "slope" in case else []
    extras += ["strict zero sign"] if case.get("strict_zero_sign") else []
    extras += [case["build_options"]] if case.get("build_options") else []
    extras += ["timing-dependent"] if case.get("timing_dependent") else []
    where = case["file"] if case["kind"] == "opencl" else "numpy_cases." + case["function"]
    return "%-40s %s %s %s %s %d, %s %d cores, %d-element tiles, %d buffer(s)%s\n    %s\n    expect %s" % (
        case["name"], where, case["op"], case["dtype"], case["dist"], case["elems"], plan["split"],
        plan["cores"], plan["tile_elems"], plan["buffers"],
        "".join(", " + e for e in extras), case["bug"], "|".join(case["expect"]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", metavar="NAME", help="run this case (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the cases and stop")
    parser.add_argument("--kernels-only", action="store_true",
                        help="check that each planted fault is real (the output differs from the "
                             "golden) and each correct kernel passes, not what the diagnosis says")
    parser.add_argument("--both", action="store_true",
                        help="check the kernels and the diagnosis, each case run once")
    parser.add_argument("--device", type=int, default=None, help="OpenCL device index (default: any)")
    parser.add_argument("--corpus", metavar="DIR", default=HERE,
                        help="the folder with cases.json and its kernels (default: this one)")
    parser.add_argument("--full", action="store_true",
                        help="print every finding's whole message under its case")
    parser.add_argument("--cli", metavar="LEAKY",
                        help="run the family cases through this `leaky` program (golden, the "
                             "kernel on its files, check) rather than leaky.testing.check_op")
    args = parser.parse_args(argv)
    global CORPUS
    CORPUS = os.path.abspath(args.corpus)
    sys.path.insert(0, CORPUS)  # its numpy_cases.py, if it has one

    cases = load_cases()
    if args.case:
        unknown = sorted(set(args.case) - {c["name"] for c in cases})
        if unknown:
            print("run_corpus: no case named %s (--list shows them)" % ", ".join(unknown), file=sys.stderr)
            return 2
        cases = [c for c in cases if c["name"] in args.case]
    if args.list:
        for case in cases:
            print(describe(case))
        return 0

    try:
        import leaky.testing as lt
    except ImportError as e:
        print("run_corpus: cannot import leaky.testing (%s): set PYTHONPATH to the repository's "
              "python/ and LEAKY_LIB_DIR to the built NumPy module's directory" % e, file=sys.stderr)
        return 2
    opencl = OpenCL(lt, args.device, apart=True)
    if opencl.missing:
        print("OpenCL cases skipped: %s" % opencl.missing)

    good = ran = known_misses = stale = planted = refused = 0
    for case in cases:
        expect = case["expect"]
        if args.cli and case["kind"] != "numpy_family":
            continue  # the CLI route is the family's
        if args.cli:
            result = check_cli(args.cli, case)
        elif case["kind"] == "opencl" and not opencl.missing:
            result = check_apart(lt, case, args.device)
        else:
            try:
                result = check_here(lt, case, opencl)
            except (RuntimeError, ValueError) as e:  # a case check_op refuses: a miss, said so
                result = {"error": "%s: %s" % (type(e).__name__, shorten(e))}
        if "error" in result:
            ran += 1
            refused += 1
            known = case.get("known_miss") and not args.kernels_only
            known_misses += bool(known)
            print("%-40s ERROR (check_op refused the case: %s)  %s" % (
                case["name"], result["error"],
                "KNOWN MISS (%s)" % case["known_miss"] if known else "MISS"))
            continue
        if "skip" in result:
            print("%-40s SKIP (%s)" % (case["name"], result["skip"]))
            continue
        ran += 1
        findings = result["findings"]
        first = findings[0] if findings else None
        got = "pass" if result["passed"] and not first else first["kind"] if first else "(fail, no finding)"
        kernel_ok = result["passed"] == (expect == ["pass"])
        golden = "golden %s" % (
            "equal" if result["passed"] else "differs (%d elements)" % result["mismatches"])
        if args.kernels_only:
            ok = kernel_ok
            verdict = golden
        else:
            ok = got in expect and len(findings) <= case["max_findings"]
            more = " (+%d more)" % (len(findings) - 1) if len(findings) > 1 else ""
            verdict = "got %s%s%s" % (got, more, ": " + shorten(first["message"]) if first else "")
        # A miss the corpus states with its reason ("known_miss") is shown and
        # counted as a miss, but does not fail the run; a known miss that
        # starts passing fails it, so the list stays true.
        known = case.get("known_miss") and not args.kernels_only
        mark = "OK" if ok else "MISS"
        if known:
            mark = "KNOWN MISS (%s)" % case["known_miss"] if not ok else "OK, BUT LISTED AS A KNOWN MISS"
            known_misses += not ok
            stale += ok
        if args.both:
            mark += "; %s %s" % (golden, "OK" if kernel_ok else "NOT AS PLANTED")
        print("%-40s expect %-36s %s  %s" % (case["name"], "|".join(expect), verdict, mark))
        if args.full:
            for finding in findings:
                print("    [%s] %s" % (finding["kind"], " ".join(str(finding["message"]).split())))
        good += ok
        planted += kernel_ok
    what = "kernels as planted" if args.kernels_only else "diagnosed as expected"
    print("%d of %d %s%s" % (good, ran, what,
                             " (%d known miss(es) listed in cases.json)" % known_misses if known_misses else ""))
    if args.both:
        print("%d of %d kernels as planted%s" % (planted, ran - refused, " (%d case(s) refused)" %
                                                 refused if refused else ""))
    kernels_fine = planted == ran - refused or not args.both
    return 0 if good + known_misses == ran and stale == 0 and kernels_fine else 1


if __name__ == "__main__":
    sys.exit(main())

"""Every row of leaky/family.h in every layer: leaky.numpy, torch.ops.leaky,
leaky.functional (forward; autograd gives the backward), the toolkit
(leaky.testing's golden by the row's names), the CLI (`leaky golden --op`,
whose files `leaky check` reads), the OpenCL device (leaky.testing.opencl_<op>
passing check_op) and the benchmark (leaky-bench's rows). A layer that lacks a row fails, and so does a
row still listed below as missing that the layer now has: the list of
gaps only shrinks. (The C and C++ entry points: tests/family_test.cc.)"""
import json
import os
import subprocess
import tempfile

import pytest
import torch

import leaky  # noqa: F401  (loads torch.ops.leaky)
import leaky.functional
import leaky.numpy as lnp
import leaky.testing

ROWS = lnp.family()
OPS = sorted({row["op"] for row in ROWS})

# Not there yet: (layer, op, direction). Empty since the device runs the
# whole family (leaky_cl_*, leaky.testing.opencl_<op>); a layer that loses
# a row fails.
MISSING = set()


def python_name(row):
    return row["op"] if row["direction"] == "forward" else row["op"] + "_backward"


def torch_op(name):
    try:
        return getattr(torch.ops.leaky, name)
    except (AttributeError, RuntimeError):
        return None


def has(layer, row):
    name = python_name(row)
    if layer == "numpy":
        return callable(getattr(lnp, name, None))
    if layer == "torch.ops":
        return torch_op(name) is not None
    if layer == "functional":  # forward functions; their backward is autograd's
        return row["direction"] == "backward" or callable(getattr(leaky.functional, name, None))
    if layer == "toolkit":  # the golden data, by the row's names
        return toolkit_writes(row)
    if layer == "cli":
        return cli_writes(row)
    if layer == "device":  # the device's kernel passes the toolkit's check
        return device_passes(row)
    if layer == "bench":
        return bench_mode(row) in bench_modes()
    raise AssertionError(layer)


def output_names(row):
    return [p.strip().split("[")[0].rstrip("?") for p in row["outputs"].split(",")]


def toolkit_writes(row):
    """leaky.testing's golden for the row (the toolkit's C++ behind it): the
    row's outputs, by name. (leaky.testing.OPS is the list itself.)"""
    try:
        _, outputs, _ = leaky.testing.golden_op(row["op"], row["direction"], dtype="f32",
                                                elems=256, channels=4)
    except (ValueError, RuntimeError):
        return False
    return list(outputs) == output_names(row)


def device_passes(row):
    """The row on the OpenCL device (leaky.testing.opencl_<op>), checked bit
    for bit (ELU within its bound) by check_op on a small problem."""
    make = getattr(leaky.testing, "opencl_" + row["op"], None)
    if make is None:
        return False
    small = dict(cores=2, tile_elems=64)
    try:
        if row["op"] == "leaky_relu":
            fn = make(op=row["direction"], **small)
            d = leaky.testing.check_op(fn, op=row["direction"], dtype="f32", elems=512, **small)
        else:
            fn = make(row["direction"], **small)
            d = leaky.testing.check_op(fn, op=row["op"], direction=row["direction"], dtype="f32",
                                       elems=512, **small)
    except RuntimeError as e:
        if "no OpenCL" in str(e) or "no device" in str(e).lower():
            pytest.skip(str(e))
        return False
    return d.passed


def bench_mode(row):
    """The mode leaky-bench names the row by: LeakyReLU's are fwd and bwd."""
    short = "fwd" if row["direction"] == "forward" else "bwd"
    return short if row["op"] == "leaky_relu" else f"{row['op']}_{short}"


def bench_modes(cache={}):
    """The modes of leaky-bench's f32 rows of this library (`--list`)."""
    bench = os.environ.get("LEAKY_BENCH")
    if not bench:
        pytest.skip("LEAKY_BENCH is not set (ctest sets it to the built leaky-bench)")
    if bench not in cache:
        listed = subprocess.run([bench, "--list"], capture_output=True, text=True, check=True)
        cache[bench] = {line.split("/")[2] for line in listed.stdout.split()
                        if line.startswith("leaky/f32/")}
    return cache[bench]


def cli_writes(row):
    """`leaky golden --op <op> --direction <d>` writes the row's operands."""
    cli = os.environ.get("LEAKY_CLI")
    if not cli:
        pytest.skip("LEAKY_CLI is not set (ctest sets it to the built leaky)")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run([cli, "golden", "--op", row["op"], "--direction", row["direction"],
                               "--elems", "64", "--dtype", "f32", "--out", tmp],
                              capture_output=True, text=True)
        if done.returncode:
            return False
        with open(os.path.join(tmp, "golden.json")) as f:
            described = json.load(f)
    if row["op"] == "leaky_relu":  # LeakyReLU's own format
        return described["op"] == "leaky_relu_" + row["direction"]
    return described["op"] == row["op"] and list(described["outputs"]) == output_names(row)


LAYERS = ["numpy", "torch.ops", "functional", "toolkit", "cli", "device", "bench"]


def test_the_list_is_the_family():
    assert OPS == ["bias_act", "bias_act_dropout", "elu", "leaky_relu", "prelu", "relu", "rrelu"]
    assert len(ROWS) == 2 * len(OPS)
    for row in ROWS:
        assert row["c_name"].startswith("leaky_") and row["c_name"].endswith(row["direction"])
        assert row["inputs"] and row["outputs"]
        assert row["random"] == ("seed" in row["scalars"] and row["direction"] == "forward"
                                 or row["op"] == "rrelu")


@pytest.mark.parametrize("layer", LAYERS)
def test_every_layer_has_every_row(layer):
    lacking = [(row["op"], row["direction"]) for row in ROWS
               if not has(layer, row) and (layer, row["op"], row["direction"]) not in MISSING]
    assert not lacking, f"{layer} lacks {lacking}"
    gained = [(row["op"], row["direction"]) for row in ROWS
              if has(layer, row) and (layer, row["op"], row["direction"]) in MISSING]
    assert not gained, f"{layer} now has {gained}: take them out of MISSING"


def test_the_toolkit_names_the_lists_ops():
    assert sorted(leaky.testing.OPS) == OPS


def test_the_docs_table_is_generated_from_the_list():
    import importlib.util
    import pathlib
    script = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "family_table.py"
    spec = importlib.util.spec_from_file_location("family_table", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    block = module.BLOCK.search(module.DOC.read_text())
    assert block is not None and block.group(2) == module.table(), \
        "docs/semantics.md's family table is stale: run scripts/family_table.py --write"
    assert block.group(2).count("\n") == len(ROWS) + 2

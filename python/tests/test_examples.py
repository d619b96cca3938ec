"""The examples in examples/python run and print what the README says."""
import os
import subprocess
import sys

EXAMPLES = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "examples", "python")


def run(name):
    result = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], capture_output=True,
                            text=True, check=False, env=os.environ.copy())
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_load_and_call():
    assert run("load_and_call.py") == (
        "[-0.4000000059604645, -0.10000000149011612, 0.0, 3.0] "
        "[0.20000000298023224, 0.20000000298023224, 0.20000000298023224, 1.0]\n"
        "[-0.4000000059604645, 3.0]\n")


def test_swap_in_model():
    assert run("swap_in_model.py") == "leaky.LeakyReLU(negative_slope=0.2) (8, 1)\n"


def test_pip_install_gives_a_self_contained_package(tmp_path):
    # `pip install ./python` (offline: the system's setuptools, no isolation)
    # packs the compiled libraries into the package; the installed copy then
    # works without the checkout's build directory.
    python_dir = os.path.join(os.path.dirname(__file__), os.pardir)
    target = tmp_path / "site"
    env = os.environ.copy()
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-deps",
         "--target", str(target), python_dir], capture_output=True, text=True, env=env)
    assert install.returncode == 0, install.stderr
    assert sorted(os.listdir(target / "leaky" / "_lib")) == [
        "_native" + __import__("importlib.machinery").machinery.EXTENSION_SUFFIXES[0],
        "libleaky_torch.so"]
    env.pop("LEAKY_LIB_DIR", None)
    env["PYTHONPATH"] = str(target)
    check = subprocess.run(
        [sys.executable, "-c", "import leaky, torch; "
         "print(leaky.__file__); print(leaky.functional.leaky_relu(torch.tensor([-1.0]), 0.5).item())"],
        capture_output=True, text=True, env=env, cwd=str(tmp_path))
    assert check.returncode == 0, check.stderr
    assert check.stdout.splitlines() == [str(target / "leaky" / "__init__.py"), "-0.5"]

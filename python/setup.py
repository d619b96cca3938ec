"""Packages the compiled parts from the build tree (build/python, or
$LEAKY_LIB_DIR) as leaky/_lib inside the wheel, never into the source tree.
Build first with `make`.

The wheel holds CPython extension modules for this machine's architecture,
so it is a platform wheel (for example cp311-cp311-linux_x86_64), never
py3-none-any."""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPyWithLibraries(build_py):
    def run(self):
        super().run()
        source = os.environ.get("LEAKY_LIB_DIR", os.path.join(HERE, os.pardir, "build", "python"))
        libs = glob.glob(os.path.join(source, "*.so"))
        if not libs:
            raise SystemExit(f"no compiled libraries in {source}: run `make` in the leaky "
                             "checkout first")
        target = os.path.join(self.build_lib, "leaky", "_lib")
        os.makedirs(target, exist_ok=True)
        for lib in libs:
            shutil.copy2(lib, target)


class BinaryDistribution(Distribution):
    """Binaries inside: the wheel is tagged with the interpreter and platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithLibraries}, distclass=BinaryDistribution)

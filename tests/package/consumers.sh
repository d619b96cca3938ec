#!/usr/bin/env bash
# Every consumer route of the README's "Use it" section, run exactly as the
# README writes it: the lines of its ```sh block after the marker
# "<!-- consumer-lines -->" run in a scratch directory that has the checkout's
# examples/, python/ and build/ (HOME points there too, so the install lands
# in the scratch directory). Then: the install is moved and pkg-config still
# answers from the new place; a component that is not installed is refused
# with a CMake error naming it.
# Usage: consumers.sh SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -euo pipefail
src=$1 build=$2 scratch=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$scratch" && mkdir -p "$scratch"
cd "$scratch"
ln -s "$src/examples" examples
ln -s "$src/python" python
ln -s "$build" build

awk '/<!-- consumer-lines -->/ { marked = 1; next }
     marked && /^```sh/ { inside = 1; next }
     inside && /^```/ { exit }
     inside { print }' "$src/README.md" > lines.sh
[ "$(grep -c . lines.sh)" -ge 8 ] || fail "README.md has no consumer-lines block (or a short one)"
echo "--- the README's lines:"; cat lines.sh; echo "---"

export HOME=$scratch
# The pip and pytest tests build in python/ (setuptools' build/ and
# egg-info); ctest runs them under one resource lock.
bash -euxo pipefail lines.sh > out.txt 2>&1 || { cat out.txt; fail "a README line failed"; }
cat out.txt

# What each program prints (the C++ one ends in an expected error message).
grep -q -- "-2 -> -0.4 (grad 0.2)" out.txt || fail "app_c did not print its results"
grep -q "error: leaky_relu_forward: negative_slope = inf is not finite" out.txt \
  || fail "app_cpp did not print its results"
[ "$(grep -c "^leaky::nn::LeakyReLU(negative_slope=0.2) -0.4 0.2$" out.txt)" = 2 ] \
  || fail "app_torch (pkg-config and CMake builds) did not both print their results"
grep -q "^tensor(\[-0.5000\])$" out.txt || fail "the pip-installed package did not run"

# The wheel is a platform wheel of this interpreter, with the header's version.
major=$(sed -n 's/^#define LEAKY_VERSION_MAJOR \([0-9]*\)$/\1/p' "$src/include/leaky/leaky.h")
minor=$(sed -n 's/^#define LEAKY_VERSION_MINOR \([0-9]*\)$/\1/p' "$src/include/leaky/leaky.h")
patch=$(sed -n 's/^#define LEAKY_VERSION_PATCH \([0-9]*\)$/\1/p' "$src/include/leaky/leaky.h")
tag=$(/usr/bin/python3 -c 'import sys, sysconfig
v = "cp%d%d" % sys.version_info[:2]
print(v + "-" + v + "-" + sysconfig.get_platform().replace("-", "_").replace(".", "_"))')
ls dist/leaky-$major.$minor.$patch-$tag.whl > /dev/null || fail "expected dist/leaky-$major.$minor.$patch-$tag.whl, got $(ls dist)"
venv/bin/python -c 'import leaky, os; assert "site-packages" in leaky.__file__, leaky.__file__' \
  || fail "the venv imported leaky from somewhere else than its site-packages"

# Relocatable: move the install; pkg-config and CMake follow it.
prefix=$HOME/.local/leaky
mv "$prefix" "$scratch/moved"
moved_flags=$(PKG_CONFIG_PATH=$scratch/moved/lib/pkgconfig pkg-config --cflags --libs leaky-cxx)
moved_include=$(PKG_CONFIG_PATH=$scratch/moved/lib/pkgconfig pkg-config --variable=includedir leaky)
moved_lib=$(PKG_CONFIG_PATH=$scratch/moved/lib/pkgconfig pkg-config --variable=libdir leaky)
[ "$(realpath "$moved_include")" = "$scratch/moved/include" ] \
  && [ "$(realpath "$moved_lib")" = "$scratch/moved/lib" ] \
  || fail "pkg-config after the move: includedir $moved_include, libdir $moved_lib"
case "$moved_flags" in *"-I$moved_include"*"-L$moved_lib"*) ;; *) fail "flags: $moved_flags" ;; esac
case "$moved_flags" in *-std=c++20*) ;; *) fail "leaky-cxx carries no -std=c++20: $moved_flags" ;; esac
PKG_CONFIG_PATH=$scratch/moved/lib/pkgconfig c++ examples/cpp/readme_example.cpp \
  $(PKG_CONFIG_PATH=$scratch/moved/lib/pkgconfig pkg-config --cflags --libs leaky-cxx) -o app_moved
LD_LIBRARY_PATH=$scratch/moved/lib ./app_moved | grep -q "^2$" || fail "app built against the moved install"

# A component that was not built: the same install without the torch binding.
cp -r "$scratch/moved" "$scratch/no-torch"
rm "$scratch"/no-torch/lib/cmake/leaky/leakyTorchTargets*.cmake
if cmake -S examples/consumer -B build-no-torch -DCMAKE_PREFIX_PATH="$scratch/no-torch" \
    > no-torch.txt 2>&1; then
  fail "find_package(leaky COMPONENTS torch) succeeded without the torch component"
fi
# CMake wraps the message: compare with the lines joined.
tr -s ' \n' '  ' < no-torch.txt \
  | grep -q "leaky: component 'torch' (leaky::torch, the LibTorch binding) is not installed in $scratch/no-torch" \
  || { cat no-torch.txt; fail "the missing component's CMake error does not name it"; }
echo "PASS: every consumer route"

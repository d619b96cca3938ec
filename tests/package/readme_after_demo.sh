#!/usr/bin/env bash
# The README after `make demo`'s build alone (issue 45): the demo's own build
# step (`make demo-build`: its configuration and its one target) into a
# scratch folder, then what the README says that build serves, run as the
# README writes it, in a folder laid out as the checkout (examples/,
# python/ and build/):
# - `build/leaky demo`, and `--help` of every command `leaky --help` lists;
#   the benchmark, which the demo leaves out, says which command builds it;
# - the README's consumer lines for C, C++, LibTorch and the CLI (the
#   install, pkg-config, CMake, the manual page): every line before the
#   Python wheel's, which needs Debian's PyTorch (`make build`);
# - the README's Python example: after the demo's build it stops at
#   `import leaky.numpy` with one line naming `make build`, as the README
#   says (or, on a machine without Debian's PyTorch, at `import torch`).
# Usage: readme_after_demo.sh SOURCE_DIR SCRATCH_DIR DEMO_BUILD_DIR
# DEMO_BUILD_DIR is best beside the full build's folder: with the Makefile's
# ccache base_dir, the files compiled alike there come from the cache.
set -euo pipefail
src=$1 scratch=$2 demo_build=$3
fail() { echo "FAIL: $*" >&2; exit 1; }

rm -rf "$scratch" "$demo_build" && mkdir -p "$scratch"
cd "$scratch"
ln -s "$src/examples" examples
ln -s "$src/python" python
ln -s "$demo_build" build
# With ccache, as make test's other builds (the demo turns it off: on a new
# machine it only stores); the configuration and the targets are the demo's.
# Run under `make test`: not the outer make's job server or flags.
env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
  make -C "$src" demo-build BUILD="$demo_build" DEMO_CACHE=env > demo-build.log 2>&1 \
  || { tail -40 demo-build.log; fail "make demo-build"; }
# The demo's configuration, not the full build's: no tests, no benchmark.
grep -q "^LEAKY_BUILD_TESTS:BOOL=OFF$" build/CMakeCache.txt \
  && grep -q "^LEAKY_BUILD_BENCH:BOOL=OFF$" build/CMakeCache.txt \
  || fail "make demo-build did not configure the demo's build"
[ ! -e build/leaky-bench ] || fail "the demo's build has a benchmark program"

# `build/leaky demo` prints the SIMD target and a throughput table.
build/leaky demo > demo.txt || { cat demo.txt; fail "build/leaky demo"; }
grep -q "SIMD target" demo.txt && grep -q "^forward " demo.txt \
  || { cat demo.txt; fail "build/leaky demo printed no target or table"; }

# Every command the demo's `leaky --help` lists answers its --help; the
# benchmark says which command builds it, in one line.
build/leaky --help > help.txt
commands=$(awk '/^Subcommands:/ { listed = 1; next } listed && /^  [a-z]/ { print $1 }' help.txt)
[ "$(echo "$commands" | grep -c .)" -ge 5 ] || { cat help.txt; fail "leaky --help lists no commands"; }
for command in $commands; do
  build/leaky "$command" --help > /dev/null || fail "leaky $command --help"
done
if build/leaky bench > out.txt 2> err.txt; then fail "leaky bench ran without a benchmark program"; fi
[ "$(wc -l < err.txt)" = 1 ] && grep -q '`make bench` builds it' err.txt \
  || { cat err.txt; fail "leaky bench does not say which command builds it"; }

# The consumer lines, up to the Python wheel's.
awk '/<!-- consumer-lines -->/ { marked = 1; next }
     marked && /^```sh/ { inside = 1; next }
     inside && /^# Python/ { exit }
     inside && /^```/ { exit }
     inside { print }' "$src/README.md" > lines.sh
[ "$(grep -c . lines.sh)" -ge 8 ] || fail "README.md has no consumer-lines block (or a short one)"
export HOME=$scratch
bash -euxo pipefail lines.sh > out.txt 2>&1 || { cat out.txt; fail "a README line failed after make demo"; }
grep -q -- "-2 -> -0.4 (grad 0.2)" out.txt || fail "app_c did not print its results"
grep -q "error: leaky_relu_forward: negative_slope = inf is not finite" out.txt \
  || fail "app_cpp did not print its results"
[ "$(grep -c "^leaky::nn::LeakyReLU(negative_slope=0.2) -0.4 0.2$" out.txt)" = 2 ] \
  || fail "app_torch (pkg-config and CMake builds) did not both print their results"

# The README's Python example, as written, after the demo's build.
awk '/^## Python and PyTorch/ { section = 1 }
     section && /^```python/ { inside = 1; next }
     inside && /^```/ { exit }
     inside { print }' "$src/README.md" > example.py
grep -q "import leaky.numpy" example.py || fail "README.md's Python example is not where expected"
if PYTHONPATH=python /usr/bin/python3 example.py > out.txt 2> err.txt; then
  fail "the README's Python example ran after make demo alone (the README says it needs make build)"
fi
last=$(tail -n 1 err.txt)
if /usr/bin/python3 -c "import torch" 2> /dev/null; then
  grep -q "^\[" out.txt || { cat out.txt err.txt; fail "the PyTorch half of the example did not run"; }
  [[ $last == *'`make build`'* ]] || { cat err.txt; fail "import leaky.numpy does not name make build"; }
else
  [[ $last == *"No module named 'torch'"* ]] || { cat err.txt; fail "the example stopped elsewhere"; }
fi
echo "PASS: the README after make demo's build"

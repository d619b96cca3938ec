#!/usr/bin/env bash
# `make demo`'s LEAKY_SIMD_TARGETS=native, which make test does not build
# otherwise: a build with tests is refused; a build without them compiles
# the kernels for this machine's best target and the baseline (one target
# where they are the same), counted by the kernels' Highway namespaces in
# the library's symbols, and dispatches to the same target as the main
# build, which compiles them all.
# Usage: simd_targets_native.sh SOURCE_DIR MAIN_LIBLEAKY SCRATCH_DIR
set -euo pipefail
src=$1 main_lib=$2 scratch=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch"
common=(-S "$src" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLEAKY_SIMD_TARGETS=native
  -DLEAKY_BUILD_TOOLS=OFF -DLEAKY_BUILD_PYTHON=OFF -DLEAKY_BUILD_BENCH=OFF)

if cmake "${common[@]}" -B "$scratch/with-tests" -DLEAKY_BUILD_TESTS=ON > "$scratch/refused.log" 2>&1; then
  fail "native targets with tests were configured"
fi
grep -q "LEAKY_SIMD_TARGETS=native is for builds without tests" "$scratch/refused.log" \
  || { cat "$scratch/refused.log"; fail "the refusal does not say why"; }

cmake "${common[@]}" -B "$scratch/native" -DLEAKY_BUILD_TESTS=OFF > "$scratch/configure.log" 2>&1 \
  || { cat "$scratch/configure.log"; fail "the native configure failed"; }
grep -q "leaky: SIMD targets: this machine's best and the baseline" "$scratch/configure.log" \
  || { cat "$scratch/configure.log"; fail "the configure did not say which targets"; }
cmake --build "$scratch/native" --target leaky > "$scratch/build.log" 2>&1 \
  || { tail -30 "$scratch/build.log"; fail "the native build failed"; }

# The Highway namespaces (N_AVX2, N_EMU128, ...) of the kernels' symbols.
namespaces() { nm -C "$1" | grep -o 'leaky::N_[A-Z0-9_]*' | sed 's/.*::N_//' | sort -u; }
native_lib=$(ls "$scratch"/native/libleaky.so.*.*.* | head -1)
native=$(namespaces "$native_lib") || fail "no kernel namespaces in $native_lib"
all=$(namespaces "$main_lib") || fail "no kernel namespaces in $main_lib"
count() { grep -c . <<< "$1"; }
echo "main build's targets: $(echo $all); native build's: $(echo $native)"
[ "$(count "$native")" -le 2 ] || fail "the native build has $(count "$native") targets, not 2"
[ "$(count "$all")" -gt "$(count "$native")" ] || fail "the main build has only $(count "$all") targets"
[ -z "$(comm -23 <(echo "$native") <(echo "$all"))" ] || fail "the native build has targets the main build lacks"

printf '#include <stdio.h>\n#include "leaky/leaky.h"\nint main(void) { puts(leaky_simd_target()); return 0; }\n' \
  > "$scratch/target.c"
cc -I"$src/include" "$scratch/target.c" -o "$scratch/target" -L"$(dirname "$native_lib")" -lleaky \
  || fail "cannot compile a program against the native build"
dispatched_native=$(LD_LIBRARY_PATH=$(dirname "$native_lib") "$scratch/target") || fail "the program failed (native)"
dispatched_all=$(LD_LIBRARY_PATH=$(dirname "$main_lib") "$scratch/target") || fail "the program failed (main)"
echo "dispatched: native build $dispatched_native, main build $dispatched_all"
grep -qx "$dispatched_native" <<< "$native" || fail "the native build runs $dispatched_native, not one of its targets"
[ "$dispatched_native" = "$dispatched_all" ] || fail "the native build runs $dispatched_native, the main build $dispatched_all"
echo "PASS"

#!/usr/bin/env bash
# make fuzz: runs each libFuzzer target of a LEAKY_SANITIZE=fuzzer build for
# a bounded time, from its committed corpus (tests/fuzz/corpus/<surface>),
# new inputs kept in <build>/corpus/<surface>. A crash stops the run with the
# input saved as <build>/crash-<surface>-*: fix it, then commit the input
# into tests/fuzz/corpus/<surface>/ as a regression case (make test replays
# it). FUZZ_MERGE=1 merges the inputs that add coverage into the committed
# corpus afterwards.
#   tests/fuzz/run_fuzz.sh BUILD_DIR SECONDS_PER_TARGET [TARGET ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$1 seconds=$2
shift 2
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(c_abi q8_bias_act golden_io results_json vega_scripts image_files)
for surface in "${targets[@]}"; do
  fuzzer=$build/tests/fuzz/${surface}_fuzz
  [ -x "$fuzzer" ] || { echo "run_fuzz: $fuzzer is not built (make fuzz builds it)" >&2; exit 2; }
  mkdir -p "$build/corpus/$surface"
  echo "== $surface: ${seconds} s"
  "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=60 -print_final_stats=1 \
    -artifact_prefix="$build/crash-$surface-" "$build/corpus/$surface" "$here/corpus/$surface" \
    2>&1 | grep -E '^(#[0-9]+[[:space:]]+(INITED|DONE)|stat::|==[0-9]+==ERROR|SUMMARY|c_abi_fuzz:|.*Test unit written)' || true
  # Findings: crash-, leak-, timeout- and oom- inputs (a slow-unit- input,
  # slower than 10 s on a loaded machine, is not one).
  found=$(ls "$build"/crash-"$surface"-{crash,leak,timeout,oom}-* 2>/dev/null || true)
  if [ -n "$found" ]; then
    echo "run_fuzz: $surface found: $found" >&2
    exit 1
  fi
  if [ "${FUZZ_MERGE:-0}" = 1 ]; then
    "$fuzzer" -merge=1 "$here/corpus/$surface" "$build/corpus/$surface" > /dev/null 2>&1
  fi
done

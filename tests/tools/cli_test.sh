#!/usr/bin/env bash
# The toolkit end to end: plan -> golden -> a "kernel" -> check, and the exit
# status contract: 0 pass, 1 mismatch, 2 unusable input.
set -uo pipefail
leaky=$1 work=$2 readme=${3:-}
rm -rf "$work" && mkdir -p "$work"
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"

expect_status 0 "plan table" "$leaky" plan --elems 1000003 --dtype f16 --preset npu
grep -q "every element covered exactly once:  yes" "$work/out.txt" || fail "plan checks missing"
expect_status 0 "plan json" "$leaky" plan --shape 64,3,37 --preset cpu --cores 4 --json
grep -q '"covered_exactly_once": true' "$work/out.txt" || fail "plan json checks missing"
expect_status 2 "plan without size" "$leaky" plan
# 8-bit data is planned as golden and check plan it: one-byte elements.
expect_status 0 "plan qu8" "$leaky" plan --elems 10007 --dtype qu8 --preset npu --cores 8 --split even \
  --json
grep -q '"dtype": "qu8"' "$work/out.txt" && grep -q '"tile_length": 49152' "$work/out.txt" \
  || fail "plan --dtype qu8: not planned as one-byte elements (npu: 4 x f32's 12288 per tile)"

expect_status 2 "golden with a negative size" "$leaky" golden --elems -5 --out "$work/neg"
grep -q -- "-5" "$work/err.txt" || fail "golden --elems -5: the error does not name the value"
[ ! -e "$work/neg" ] || fail "golden --elems -5 wrote $work/neg"
expect_status 2 "golden with a zero extent" "$leaky" golden --shape 4,0 --out "$work/neg"
expect_status 0 "golden" "$leaky" golden --dtype f16 --dist hard --elems 4099 --out "$work/g"
for f in input.bin golden.bin golden.json; do [ -f "$work/g/$f" ] || fail "golden wrote no $f"; done
[ "$(stat -c %s "$work/g/golden.bin")" = 8198 ] || fail "golden.bin has the wrong size"
expect_status 0 "golden backward" "$leaky" golden --dtype bf16 --op backward --dist uniform:-2,2 \
  --shape 7,11 --out "$work/gb"
for f in dy.bin golden_dx.bin; do [ -f "$work/gb/$f" ] || fail "backward golden wrote no $f"; done

# A correct kernel's output is the golden itself.
expect_status 0 "check pass" "$leaky" check "$work/g/golden.bin" --golden "$work/g"
grep -q "^PASS" "$work/out.txt" || fail "no PASS line"
expect_status 0 "check pass backward" "$leaky" check "$work/gb/golden_dx.bin" --golden "$work/gb"
# A kernel that never ran writes nothing: the output is still the input.
expect_status 1 "check mismatch" "$leaky" check "$work/g/input.bin" --golden "$work/g" --json
grep -q '"pass": false' "$work/out.txt" || fail "no JSON verdict"
# Unusable inputs: truncated, oversized, wrong dtype, unreadable path, bad JSON.
head -c 100 "$work/g/golden.bin" > "$work/truncated.bin"
expect_status 2 "truncated" "$leaky" check "$work/truncated.bin" --golden "$work/g"
grep -q "truncated" "$work/err.txt" || fail "truncation not named"
cat "$work/g/golden.bin" "$work/g/golden.bin" > "$work/oversized.bin"
expect_status 2 "oversized" "$leaky" check "$work/oversized.bin" --golden "$work/g"
expect_status 2 "dtype mismatch" "$leaky" check "$work/gb/golden.bin" --golden "$work/g"
expect_status 2 "missing file" "$leaky" check "$work/nope.bin" --golden "$work/g"
expect_status 2 "missing golden dir" "$leaky" check "$work/g/golden.bin" --golden "$work/none"
echo '{"format": "leaky-golden-1", "op": 3}' > "$work/g/golden.json"
expect_status 2 "bad json" "$leaky" check "$work/g/golden.bin" --golden "$work/g"
# Split policies and the timeline.
expect_status 0 "plan even split" "$leaky" plan --elems 10007 --dtype f16 --preset npu --cores 8 \
  --split even --tile-elems 4096 --buffers 2 --timeline
grep -q "even split" "$work/out.txt" || fail "plan does not name the split"
grep -q "every DMA chunk aligned:             NO" "$work/out.txt" || fail "even split's unaligned copies not shown"
grep -q "speed-up of 2 over 1" "$work/out.txt" || fail "no timeline"
expect_status 0 "plan one tile per core" "$leaky" plan --elems 1000003 --dtype f16 --preset npu --cores 48 \
  --buffers 2 --timeline
grep -q "fewer tiles than the 2 buffers" "$work/out.txt" || fail "no warning for single-tile cores"
for bad in "--cores 0" "--tile-elems 0" "--split diagonal" "--buffers 0"; do
  # shellcheck disable=SC2086
  expect_status 2 "plan $bad" "$leaky" plan --elems 100 --preset npu $bad
done
expect_status 2 "plan overflow" "$leaky" plan --elems 4611686018427387904 --dtype f64 --preset npu
grep -q "overflows" "$work/err.txt" || fail "overflow not named"
expect_status 2 "golden bad plan" "$leaky" golden --elems 100 --out "$work/badplan" --plan --split even \
  --preset npu --cores 8 --buffer-bytes 16
[ ! -e "$work/badplan" ] || fail "golden with a bad plan wrote $work/badplan"
# A recorded plan maps the check's findings without repeating the flags.
expect_status 0 "golden with plan" "$leaky" golden --dtype f16 --dist normal --elems 10007 \
  --out "$work/gp" --plan --preset npu --cores 8 --split even --tile-elems 4096 --buffers 2
grep -q '"split": "even"' "$work/gp/golden.json" || fail "golden.json does not record the plan"
grep -q "^plan recorded: 8 cores used, even split, tiles of 4096 elements, 2 buffers" "$work/out.txt" \
  || { cat "$work/out.txt"; fail "golden --plan does not state the plan"; }
# check takes the recorded plan: a flag may repeat it, never contradict it.
expect_status 0 "check repeats the plan" "$leaky" check "$work/gp/golden.bin" --golden "$work/gp" --cores 8
expect_status 2 "check contradicts the plan" "$leaky" check "$work/gp/golden.bin" --golden "$work/gp" --cores 4
grep -q "cores 4 contradicts the plan golden.json recorded (--cores 8)" "$work/err.txt" \
  || { cat "$work/err.txt"; fail "contradicting flag not named"; }
# A flag the planner overrode is said, not recorded in silence.
expect_status 0 "golden plan without effect" "$leaky" golden --elems 10007 --out "$work/gq" --plan \
  --cores 8 --tile-elems 256
grep -q "warning: --cores 8 had no effect" "$work/err.txt" || { cat "$work/err.txt"; fail "no warning"; }
/usr/bin/python3 - "$work/gp" <<'PY' || fail "could not plant faults"
import sys, numpy as np
d = sys.argv[1]
x = np.fromfile(d + "/input.bin", np.float16).astype(np.float32)
g = np.fromfile(d + "/golden.bin", np.float16)
(x * np.float32(0.2)).astype(np.float16).tofile(d + "/no_select.bin")
o = g.copy()
for c in range(8):
    s = c * (10007 // 8)
    o[s:s + 16] = g[s + 5:s + 21]
o.tofile(d + "/core_offset.bin")
PY
expect_status 1 "missing select" "$leaky" check "$work/gp/no_select.bin" --golden "$work/gp"
grep -q "^- select_missing" "$work/out.txt" || fail "missing select not named"
expect_status 1 "per-core offset" "$leaky" check "$work/gp/core_offset.bin" --golden "$work/gp"
grep -q "^- misplaced: .* result of index i+5" "$work/out.txt" || { cat "$work/out.txt"; fail "per-core offset not named"; }
cat "$work/gp/golden.bin" "$work/gp/golden.bin" > "$work/gp/big.bin"
expect_status 2 "oversized states the size" "$leaky" check "$work/gp/big.bin" --golden "$work/gp"
grep -q "exactly 20014 bytes" "$work/err.txt" || { cat "$work/err.txt"; fail "size message"; }

# --help shows every default: the fixed ones as =value, the preset's in words;
# no internal rendering of a negated flag (--no-speed-check{false}).
if "$leaky" --help | grep -q "^  gan"; then
  "$leaky" gan --help > "$work/gan-help.txt"
  for want in "--preset TEXT:{default,dcgan-3000,ring8}=default" "--out TEXT=runs" \
      "--checkpoint-every INT:>= 1=200" "(default: 800; dcgan-3000: 3000; ring8: 1000)" \
      "seeds per variant (default: 1; dcgan-3000: 5)"; do
    grep -qF -- "$want" "$work/gan-help.txt" || { cat "$work/gan-help.txt"; fail "gan --help: no '$want'"; }
  done
  ! grep -q "{false}\|{true}" "$work/gan-help.txt" || fail "gan --help renders a flag's negation"
fi

# The walkthrough in docs/toolkit.md, command for command, with a perfect "kernel".
if [ -n "$readme" ]; then
  mkdir -p "$work/readme" && cd "$work/readme"
  run_doc_commands "$leaky" "$readme" '/^## Debugging your own kernel/,/^## [^D]/p' golden/golden.bin out.bin 3
  [ -s timeline.svg ] && grep -q "<svg" timeline.svg || fail "the walkthrough's timeline.svg is missing"
  grep -q "^PASS" out.txt || fail "the walkthrough's check (docs/toolkit.md) did not pass"
  # The family's walkthrough: a PReLU golden, its check with a perfect "kernel".
  mkdir -p "$work/family" && cd "$work/family"
  run_doc_commands "$leaky" "$readme" "/^## The family's ops from the shell/,/^## 8-bit/p" \
    prelu_golden/golden_y.bin y.bin 2
  grep -q "^PASS: 0 of 4096 elements of y outside 0 ulp (f32, prelu forward)" out.txt \
    || { cat out.txt; fail "the family walkthrough's check (docs/toolkit.md) did not pass"; }
fi
echo "toolkit CLI: all checks passed"

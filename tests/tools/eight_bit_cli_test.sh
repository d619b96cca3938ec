#!/usr/bin/env bash
# The toolkit on 8-bit data end to end: `leaky golden --dtype qu8|qs8|fp8_*`
# -> a NumPy kernel reading input.bin and writing its bytes, written the way
# its bug is written -> `leaky check`, byte-exact, naming the bug; a correct
# kernel passes.
# Then the 8-bit walkthrough of docs/toolkit.md, command for command.
#   eight_bit_cli_test.sh LEAKY WORK PYTHON (with NumPy) [DOCS_PAGE]
set -uo pipefail
leaky=$1 work=$2 python=$3 page=${4:-}
rm -rf "$work" && mkdir -p "$work"
# shellcheck source=cli_lib.sh
source "$(dirname "$0")/cli_lib.sh"
# kernel DIR RULE OUT: a qu8/qs8 LeakyReLU over DIR/input.bin with the
# parameters of DIR/golden.json, rounding with RULE (a NumPy expression in t).
kernel() {
  "$python" - "$1" "$2" "$3" <<'PY'
import json, sys
import numpy as np
folder, rule, out = sys.argv[1:]
d = json.load(open(folder + "/golden.json"))
q, slope = d["quantization"], d["negative_slope"]
code = np.int8 if d["dtype"] == "qs8" else np.uint8
x = np.fromfile(folder + "/input.bin", dtype=code).astype(np.float64)
v = q["input"]["scale"] * (x - q["input"]["zero_point"])
t = np.where(v > 0, v, v * slope) / q["output"]["scale"]
r = eval(rule, {"np": np, "t": t}) + q["output"]["zero_point"]
np.clip(r, q["output_min"], q["output_max"]).astype(code).tofile(out)
PY
}

plan=(--plan --preset npu --cores 8 --split even --tile-elems 256)
expect_status 0 "golden qu8" "$leaky" golden --dtype qu8 --elems 4099 --slope 0.25 --out "$work/q" "${plan[@]}"
grep -q "every byte value, shuffled; input scale 0.09375 zero point 128, output scale 0.0625 zero point 40" \
  "$work/out.txt" || { cat "$work/out.txt"; fail "golden does not say its parameters"; }
[ "$(stat -c %s "$work/q/input.bin")" = 4099 ] && [ "$(stat -c %s "$work/q/golden.bin")" = 4099 ] \
  || fail "qu8 files are not one byte per element"
grep -q '"dtype": "qu8"' "$work/q/golden.json" && grep -q '"zero_point": 40' "$work/q/golden.json" \
  || fail "golden.json lacks the dtype or the quantization"

# Correct (slope 0.25: every double step is exact), truncating, half away.
kernel "$work/q" "np.rint(t)" "$work/q/right.bin" || fail "kernel"
expect_status 0 "a correct qu8 kernel" "$leaky" check "$work/q/right.bin" --golden "$work/q"
grep -q "^PASS: 0 of 4099 bytes differ from the golden (qu8, leaky_relu_forward, byte-exact)" "$work/out.txt" \
  || { cat "$work/out.txt"; fail "no byte-exact PASS line"; }
kernel "$work/q" "np.trunc(t)" "$work/q/trunc.bin" || fail "kernel"
expect_status 1 "an (int) cast" "$leaky" check "$work/q/trunc.bin" --golden "$work/q"
grep -q "^- rounding_rule: .* truncated toward zero (an (int) cast" "$work/out.txt" \
  || { cat "$work/out.txt"; fail "truncation not named"; }
grep -q "^max error: 1 steps" "$work/out.txt" || { cat "$work/out.txt"; fail "no max error in steps"; }
kernel "$work/q" "np.sign(t) * np.floor(np.abs(t) + 0.5)" "$work/q/away.bin" || fail "kernel"
expect_status 1 "round half away" "$leaky" check "$work/q/away.bin" --golden "$work/q" --json
"$python" - "$work/out.txt" <<'PY' || fail "the JSON verdict of round-half-away"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["dtype"] == "qu8" and j["pass"] is False, j
f = j["findings"][0]
assert f["kind"] == "rounding_rule" and f["details"]["rounding"] == "ties_away_from_zero", f
e = f["details"]["examples"][0]
assert {"index", "input", "expected", "expected_value", "output", "output_value"} <= set(e), e
PY
# A tile never written (zeros), in the plan golden.json recorded.
"$python" -c "
import numpy as np, sys
y = np.fromfile('$work/q/golden.bin', dtype=np.uint8); y[512:768] = 0; y.tofile('$work/q/hole.bin')"
expect_status 1 "a tile never written" "$leaky" check "$work/q/hole.bin" --golden "$work/q"
grep -q "^- not_written: " "$work/out.txt" || { cat "$work/out.txt"; fail "the unwritten tile not named"; }
grep -q "tile" "$work/out.txt" || { cat "$work/out.txt"; fail "not said in tiles"; }
# One byte has no ulp to tolerate.
expect_status 2 "--max-ulp on qu8" "$leaky" check "$work/q/trunc.bin" --golden "$work/q" --max-ulp 1
grep -q "does not apply to qu8 data" "$work/err.txt" || fail "--max-ulp on qu8 not refused in words"

# qs8 with a clamp, and the default slope: the exact golden's near-ties.
expect_status 0 "golden qs8" "$leaky" golden --dtype qs8 --elems 2000 --output-min -100 --output-max 60 --out "$work/s"
kernel "$work/s" "np.rint(t)" "$work/s/double.bin" || fail "kernel"
expect_status 1 "double arithmetic" "$leaky" check "$work/s/double.bin" --golden "$work/s"
grep -q "^- float_arithmetic: .* requantized in floating point" "$work/out.txt" \
  || { cat "$work/out.txt"; fail "floating-point requantization not named"; }

# fp8: backward, and the golden passes as its own output.
expect_status 0 "golden fp8 backward" "$leaky" golden --dtype fp8_e5m2 --op backward --saturate 0 --elems 700 --out "$work/f"
for f in input.bin dy.bin golden.bin golden_dx.bin; do
  [ "$(stat -c %s "$work/f/$f")" = 700 ] || fail "fp8 $f is not 700 bytes"
done
grep -q '"saturate": false' "$work/f/golden.json" || fail "golden.json lacks saturate"
expect_status 0 "fp8 backward passes" "$leaky" check "$work/f/golden_dx.bin" --golden "$work/f"
expect_status 1 "fp8 dx as dy" "$leaky" check "$work/f/dy.bin" --golden "$work/f"

# The walkthrough in docs/toolkit.md, with a correct "kernel" (the golden).
if [ -n "$page" ]; then
  mkdir -p "$work/docs" && cd "$work/docs"
  run_doc_commands "$leaky" "$page" '/^## 8-bit data/,/^## [^8]/p' golden8/golden.bin out8.bin 2
  grep -q "^PASS: 0 of 10007 bytes" out.txt || { cat out.txt; fail "the 8-bit walkthrough's check did not pass"; }
fi
echo "8-bit toolkit CLI: all checks passed"

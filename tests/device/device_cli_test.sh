#!/usr/bin/env bash
# The device backend end to end from the shell: leaky golden --plan ->
# leaky device run -> leaky check, clean (PASS) and with each planted fault
# (FAIL naming the finding); bad arguments exit 2 with one line.
set -uo pipefail
leaky=$1 work=$2
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
"$leaky" golden --dtype f16 --dist hard --elems 10007 --out "$work/g" --plan --preset npu --cores 8 \
  --split even --tile-elems 256 --buffers 2 > /dev/null || fail "golden"
# The same data with a 1-buffer plan, for the fault that runs with 1 buffer
# (check takes the recorded plan and refuses flags that contradict it).
"$leaky" golden --dtype f16 --dist hard --elems 10007 --out "$work/g1" --plan --preset npu --cores 8 \
  --split even --tile-elems 256 --buffers 1 > /dev/null || fail "golden, 1 buffer"
if ! "$leaky" device run --golden "$work/g" --out "$work/out.bin" > "$work/run.txt" 2>&1; then
  if grep -q "no platform\|no device" "$work/run.txt"; then
    echo "SKIPPED: no OpenCL device: $(cat "$work/run.txt")"; exit 77
  fi
  cat "$work/run.txt"; fail "device run"
fi
"$leaky" check "$work/out.bin" --golden "$work/g" > "$work/check.txt" || { cat "$work/check.txt"; fail "clean kernel"; }
grep -q "^PASS" "$work/check.txt" || fail "no PASS"
# Every op of the family on the device, forward and backward: the first
# output to --out, the others beside it, and `leaky check` on all of them.
for op in relu elu prelu rrelu bias_act bias_act_dropout; do
  for direction in forward backward; do
    g=$work/fam-$op-$direction
    channels=()
    case $op in prelu|bias_act*) channels=(--channels 4) ;; esac
    "$leaky" golden --op "$op" --direction "$direction" --dtype f32 --elems 8192 "${channels[@]}" \
      --out "$g" --plan --preset npu --cores 4 --split even --tile-elems 512 > /dev/null \
      || fail "golden --op $op --direction $direction"
    "$leaky" device run --golden "$g" --out "$g/out.bin" > "$work/run.txt" 2>&1 \
      || { cat "$work/run.txt"; fail "device run --op $op $direction"; }
    # The run says how to check it: that very command, --side and all.
    command=$(sed -n 's/^check: leaky //p' "$work/run.txt")
    [ -n "$command" ] || { cat "$work/run.txt"; fail "$op $direction: no check line"; }
    # shellcheck disable=SC2086
    "$leaky" $command > "$work/check.txt" || { cat "$work/check.txt"; fail "$op $direction on the device"; }
    grep -q "^PASS" "$work/check.txt" && ! grep -q "not checked" "$work/check.txt" \
      || { cat "$work/check.txt"; fail "$op $direction: not every output checked"; }
  done
done
"$leaky" device run --golden "$work/fam-prelu-forward" --out "$work/x.bin" --fault core-offset \
  > /dev/null 2> "$work/err.txt"
[ $? = 2 ] && grep -q "are LeakyReLU's; prelu forward runs the library's kernel" "$work/err.txt" \
  || { cat "$work/err.txt"; fail "--fault on a family op not refused"; }
[ ! -e "$work/x.bin" ] || fail "a refused run wrote its output"
# fault -> the finding leaky check must name (single-buffer runs with 1 buffer)
while read -r fault finding buffers; do
  g=$work/g
  [ "$buffers" = 2 ] || g=$work/g1
  "$leaky" device run --golden "$g" --out "$work/$fault.bin" --fault "$fault" --buffers "$buffers" \
    > /dev/null 2>&1 || fail "device run --fault $fault"
  "$leaky" check "$work/$fault.bin" --golden "$g" --buffers "$buffers" --split even --cores 8 \
    --tile-elems 256 --preset npu > "$work/check.txt"
  [ $? = 1 ] || { cat "$work/check.txt"; fail "$fault: check did not fail"; }
  grep -q "^- $finding" "$work/check.txt" || { cat "$work/check.txt"; fail "$fault: no $finding"; }
  echo "$fault -> $(grep '^- ' "$work/check.txt" | cut -c1-160 | tr '\n' ' ')"
done <<'FAULTS'
compute-before-wait compute_before_copy 2
remainder-dropped not_written 2
slope-layout slope_mismatch 2
half-flush f16_underflow 2
single-buffer overwritten_tile 1
select-missing select_missing 2
core-offset misplaced 2
FAULTS
"$leaky" device run --golden "$work/nope" --out "$work/x.bin" > /dev/null 2> "$work/err.txt"
[ $? = 2 ] || fail "missing golden: not exit 2"
[ "$(wc -l < "$work/err.txt")" = 1 ] || fail "missing golden: not one line"
"$leaky" device run --golden "$work/g" --out "$work/x.bin" --tile-elems 16000000 > /dev/null 2> "$work/err.txt"
[ $? = 2 ] && grep -q "local memory" "$work/err.txt" || { cat "$work/err.txt"; fail "oversized tile not refused"; }
[ ! -e "$work/x.bin" ] || fail "a refused run wrote its output"
# --kernel: the library's own kernel text as a caller's kernel gives the
# built-in kernel's bytes; a missing file, a directory, or a kernel that
# does not build: exit 2, nothing written (the file cases in one line).
kernel_cl=$(dirname "$0")/../../src/device/opencl/leaky_relu.cl
"$leaky" device run --golden "$work/g" --out "$work/own.bin" --kernel "$kernel_cl" > /dev/null \
  || fail "device run --kernel"
cmp -s "$work/out.bin" "$work/own.bin" || fail "--kernel with the library's source: other bytes"
"$leaky" device run --golden "$work/g" --out "$work/own.bin" --kernel "$kernel_cl" \
  --build-options=-cl-denorms-are-zero > /dev/null || fail "device run --build-options"
for kernel in "$work/nope.cl" "$work"; do
  "$leaky" device run --golden "$work/g" --out "$work/x.bin" --kernel "$kernel" > /dev/null 2> "$work/err.txt"
  [ $? = 2 ] || fail "--kernel $kernel: not exit 2"
  [ "$(wc -l < "$work/err.txt")" = 1 ] || { cat "$work/err.txt"; fail "--kernel $kernel: not one line"; }
  grep -q -- "--kernel $kernel" "$work/err.txt" || fail "--kernel $kernel: the line does not name it"
done
echo "__kernel void leaky_relu_tiles(__global float* dst) { dst[0] = undeclared_name; }" > "$work/bad.cl"
"$leaky" device run --golden "$work/g" --out "$work/x.bin" --kernel "$work/bad.cl" > /dev/null 2> "$work/err.txt"
[ $? = 2 ] && grep -q "did not build.*undeclared_name" "$work/err.txt" \
  || { cat "$work/err.txt"; fail "a kernel that does not build: no exit 2 with the build log"; }
[ ! -e "$work/x.bin" ] || fail "a refused run wrote its output"
echo "device CLI: all checks passed"

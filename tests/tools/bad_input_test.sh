#!/usr/bin/env bash
# Bad input never reaches a user as an internal error: every refused command
# line of the CLI and of `python3 -m leaky.testing` exits non-zero (2 for
# unusable arguments) with exactly one line on stderr in plain words, writes
# nothing (the work folder is compared before and after), and with --json
# still prints a JSON object holding the error; leaky.testing.check_op
# raises one one-line ValueError before it calls the kernel.
#   bad_input_test.sh LEAKY WORK [PYTHON [LEAKY_BENCH [gan]]]
# PYTHON (with PYTHONPATH and LEAKY_LIB_DIR set for leaky.testing) is
# optional: without it, or as "-", the Python cases are skipped. LEAKY_BENCH
# "-" uses the script's stand-in. "gan" says that LEAKY has the GAN lab's
# commands (the build knows; `leaky gan --help` exits 0 on a CLI without
# them too, as CLI11 prints the main help).
set -uo pipefail
export PYTHONDONTWRITEBYTECODE=1  # an import must not look like a file written
leaky=$1 work=$2 python=${3:-} bench=${4:-} with_gan=${5:-}
[ "$python" != - ] || python=
[ "$bench" != - ] || bench=
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
json_python=${python:-/usr/bin/python3}

# Every file and folder under $work with its checksum, but the captures.
snapshot() {
  find "$work" -mindepth 1 ! -name stdout.txt ! -name stderr.txt -printf '%y %p\n' | sort
  find "$work" -type f ! -name stdout.txt ! -name stderr.txt -exec md5sum {} + | sort
}

# refused STATUS WORDS COMMAND...: COMMAND exits STATUS with one line on
# stderr that holds WORDS, nothing on stdout (unless it asked for --json),
# no internal text, and the work folder unchanged.
refused() {
  local want=$1 words=$2; shift 2
  local before after
  before=$(snapshot)
  "$@" > "$work/stdout.txt" 2> "$work/stderr.txt"; local got=$?
  after=$(snapshot)
  local what="$*"
  [ "$got" = "$want" ] || { cat "$work/stderr.txt"; fail "$what: exit $got, wanted $want"; }
  [ -s "$work/stderr.txt" ] && [ "$(wc -l < "$work/stderr.txt")" = 1 ] \
    || { head -c 2000 "$work/stderr.txt"; fail "$what: stderr is not exactly one line"; }
  grep -qF -- "$words" "$work/stderr.txt" || { cat "$work/stderr.txt"; fail "$what: no '$words'"; }
  # ... and no C function's name (leaky_plan_tiling: ...), which the user never called.
  if grep -qiE 'json\.exception|incompatible function arguments|not in range|overflows 64 bits|Traceback|Run with --help|usage:|leaky_[a-z0-9_]+: ' \
      "$work/stderr.txt"; then
    cat "$work/stderr.txt"; fail "$what: an internal message reached the user"
  fi
  [[ " $* " == *" --json "* ]] || [ ! -s "$work/stdout.txt" ] \
    || { cat "$work/stdout.txt"; fail "$what: printed on stdout"; }
  [ "$before" = "$after" ] || { diff <(echo "$before") <(echo "$after"); fail "$what: wrote files"; }
}

# with --json: stdout is one JSON object whose "error" is stderr's message.
json_error() {
  "$json_python" - "$work/stdout.txt" "$work/stderr.txt" <<'PY' || fail "no JSON error object on stdout"
import json, sys
out, err = open(sys.argv[1]).read(), open(sys.argv[2]).read().strip()
j = json.loads(out)
assert isinstance(j, dict) and isinstance(j.get("error"), str), out
assert j["error"] and err.endswith(": " + j["error"]), (j["error"], err)
PY
}

"$leaky" golden --dtype f16 --elems 4099 --out "$work/g" > /dev/null || fail "golden"
echo "not a directory" > "$work/file.txt"

# 2. Sizes below 1, in words (CLI11 said "Value 0 not in range 0.000000 to 1797...").
refused 2 "--elems must be at least 1, not 0" "$leaky" golden --elems 0 --out "$work/new"
refused 2 "--elems must be at least 1, not -5" "$leaky" golden --elems -5 --out "$work/new"
refused 2 "--shape must be at least 1, not 0" "$leaky" golden --shape 4,0 --out "$work/new"
refused 2 "--seed must be at least 0, not -1" "$leaky" golden --seed -1 --out "$work/new"
refused 2 "--slope must be a finite number" "$leaky" golden --slope nan --out "$work/new"
refused 2 "--cores must be at least 1, not 0" "$leaky" plan --elems 100 --cores 0
refused 2 "--cores must be at most 65536" "$leaky" plan --elems 100 --cores 70000
refused 2 "--tile-elems must be at least 1, not 0" "$leaky" plan --elems 100 --tile-elems 0
refused 2 "--align must be a power of two, not 48" "$leaky" plan --elems 100 --align 48
refused 2 "--buffers must be a whole number, not 'two'" "$leaky" plan --elems 100 --buffers two
refused 2 "--max-ulp must be at least 0, not -1" "$leaky" check "$work/g/golden.bin" --golden "$work/g" \
  --max-ulp -1
refused 2 "--elements must be at least 1, not 0" "$leaky" demo --elements 0
# Unknown commands and misspelt options are named, with the nearest one
# (CLI11 said "A subcommand is required" and "not expected: 10 --stpes").
refused 2 "unknown command 'foo'; the commands: demo" "$leaky" foo
refused 2 "unknown command 'plna' (did you mean plan?)" "$leaky" plna
refused 2 "a command is required: one of demo" "$leaky"
refused 2 "unknown option --elmes (did you mean --elems?)" "$leaky" plan --elmes 100
refused 2 "unexpected argument 'extra'" "$leaky" plan --elems 100 extra
# The planner's refusal without its C function's name; a missing positional
# argument by its description, not its internal name ("dirs is required").
refused 2 "leaky plan: the 1-byte buffer holds no 64-byte granule" "$leaky" plan --elems 100 --buffer-bytes 1
refused 2 "leaky check: give the kernel's output file" "$leaky" check --golden "$work"
# A plan of 1e14 one-element tiles is checked, not walked tile by tile (it
# ran for hours).
timeout 60 "$leaky" plan --elems 100000000000000 --tile-elems 1 > /dev/null \
  || fail "plan --elems 1e14 --tile-elems 1 did not finish in 60 s"
# A command this build lacks says which command builds it.
mkdir -p "$work/alone" && cp "$leaky" "$work/alone/leaky"
refused 2 "this build has no benchmark program" "$work/alone/leaky" bench
# The GAN lab's commands run leaky-gan, beside leaky: missing, said so.
if "$leaky" --help | grep -q "^  gan "; then
  refused 2 "cannot run the GAN lab's program $work/alone/leaky-gan" "$work/alone/leaky" gan --steps 1
fi
rm -r "$work/alone"
if "$leaky" --help | grep -q "^  device"; then
  refused 2 "unknown command 'list'; the commands: run" "$leaky" device list
fi
# 3. A negative size is a size below 1, not an overflow.
refused 2 "--elems must be at least 1, not -5" "$leaky" plan --elems -5
refused 2 "--shape must be at least 1, not -3" "$leaky" plan --shape 4,-3
# 4. A directory where a file is expected, and the other way round.
refused 2 "$work/g is a directory, not a golden file" "$leaky" check "$work/g" --golden "$work/g"
refused 2 "--golden $work/file.txt is a file" "$leaky" check "$work/g/golden.bin" --golden "$work/file.txt"
refused 2 "--out $work/file.txt is a file, not a directory" "$leaky" golden --out "$work/file.txt"
refused 2 "$work/g is a directory, not an SVG file" "$leaky" plan --elems 100 --timeline --svg "$work/g"
refused 2 "cannot write $work/none/t.svg" "$leaky" plan --elems 100 --timeline --svg "$work/none/t.svg"
mkdir -p "$work/broken/golden.json" && cp "$work/g/"*.bin "$work/broken/"
refused 2 "$work/broken/golden.json is a directory, not a golden file" "$leaky" check "$work/g/golden.bin" \
  --golden "$work/broken"
# ... and a golden.json that is not JSON, or not the format: no parser text.
rmdir "$work/broken/golden.json" && echo "{oops" > "$work/broken/golden.json"
refused 2 "golden.json is not valid JSON" "$leaky" check "$work/g/golden.bin" --golden "$work/broken"
echo '{"format": "leaky-golden-1", "op": 3}' > "$work/broken/golden.json"
refused 2 "golden.json: \"op\" must be a string" "$leaky" check "$work/g/golden.bin" --golden "$work/broken"
# A family op's golden (leaky/family.h besides LeakyReLU): its flags and
# scalars refused before a file is written, its other outputs named.
"$leaky" golden --op prelu --direction backward --elems 256 --channels 4 --out "$work/fam" > /dev/null \
  || fail "family golden"
refused 2 "--dtype qu8 is LeakyReLU's only; --op prelu takes f32, f64, f16 or bf16" \
  "$leaky" golden --op prelu --dtype qu8 --out "$work/new"
refused 2 "prelu forward takes no scalars, not alpha" "$leaky" golden --op prelu --param alpha=2 --out "$work/new"
refused 2 "dropout_p must be in [0, 1), not 1" "$leaky" golden --op bias_act_dropout --param dropout_p=1 \
  --out "$work/new"
refused 2 "--param alpha: expected NAME=VALUE" "$leaky" golden --op elu --param alpha --out "$work/new"
refused 2 "upper must be at least lower" "$leaky" golden --op rrelu --param lower=1 --param upper=0.5 \
  --out "$work/new"
refused 2 "elems must be at least 2 * channels (600) for prelu" "$leaky" golden --op prelu --channels 300 \
  --elems 100 --out "$work/new"
# An option that would do nothing for the op is refused, not ignored.
refused 2 "--param is for the family's other ops" "$leaky" golden --op forward --param alpha=2 \
  --out "$work/new"
refused 2 "--channels is for the family's other ops" "$leaky" golden --op backward --channels 8 \
  --out "$work/new"
refused 2 "--direction goes with a family op (--op leaky_relu --direction backward)" \
  "$leaky" golden --op forward --direction backward --out "$work/new"
refused 2 "--slope is LeakyReLU's; --op elu takes its scalars as --param NAME=VALUE" \
  "$leaky" golden --op elu --slope 0.1 --out "$work/new"
refused 2 "--input-scale is for LeakyReLU's 8-bit data; --op relu takes f32, f64, f16 or bf16" \
  "$leaky" golden --op relu --input-scale 0.5 --out "$work/new"
refused 2 "--channels is PReLU's and bias_act's; --op rrelu is elementwise" \
  "$leaky" golden --op rrelu --channels 8 --out "$work/new"
refused 2 "--side bogus=x: prelu backward's other outputs are dweight" \
  "$leaky" check "$work/fam/golden_dx.bin" --golden "$work/fam" --side bogus=x
refused 2 "the output $work/fam/weight.bin holds 4 elements; prelu backward's dx has 256" \
  "$leaky" check "$work/fam/weight.bin" --golden "$work/fam"
refused 2 "--side is for the family's other outputs; this golden is LeakyReLU's" \
  "$leaky" check "$work/g/golden.bin" --golden "$work/g" --side dweight=x
# A family golden whose recorded plan is malformed: golden.json named.
mkdir -p "$work/famplan" && cp "$work/fam/"*.bin "$work/famplan/"
sed 's/"scalars"/"plan": {"cores": "many"}, "scalars"/' "$work/fam/golden.json" > "$work/famplan/golden.json"
refused 2 "golden.json: malformed plan:" "$leaky" check "$work/fam/golden_dx.bin" --golden "$work/famplan"
# 4b. 8-bit data: each quantization flag checked against the --dtype and its
# range, before a file is written; golden.json's 8-bit fields too.
g8=(golden --out "$work/new")
refused 2 "--input-scale must be a finite number above 0, not 0" "$leaky" "${g8[@]}" --dtype qu8 --input-scale 0
refused 2 "--output-scale must be a finite number" "$leaky" "${g8[@]}" --dtype qu8 --output-scale nan
refused 2 "--input-zero-point must be within qu8's range 0..255, not 256" "$leaky" "${g8[@]}" --dtype qu8 \
  --input-zero-point 256
refused 2 "--output-zero-point must be within qs8's range -128..127, not 128" "$leaky" "${g8[@]}" --dtype qs8 \
  --output-zero-point 128
refused 2 "--output-max must be within qu8's range 0..255, not 300" "$leaky" "${g8[@]}" --dtype qu8 --output-max 300
refused 2 "--output-min 10 is above --output-max 5 (an empty clamp)" "$leaky" "${g8[@]}" --dtype qu8 \
  --output-min 10 --output-max 5
refused 2 "--input-zero-point must be at most 2147483647, not 99999999999" "$leaky" "${g8[@]}" --dtype qu8 \
  --input-zero-point 99999999999
refused 2 "--saturate applies to fp8 data, not qu8" "$leaky" "${g8[@]}" --dtype qu8 --saturate 0
refused 2 "--saturate must be at most 1, not 2" "$leaky" "${g8[@]}" --dtype fp8_e5m2 --saturate 2
refused 2 "--input-scale applies to qu8/qs8 data, not fp8_e4m3" "$leaky" "${g8[@]}" --dtype fp8_e4m3 --input-scale 1
refused 2 "--output-zero-point applies to qu8/qs8 data, not f16" "$leaky" "${g8[@]}" --dtype f16 \
  --output-zero-point 3
refused 2 "qs8 data has no backward" "$leaky" "${g8[@]}" --dtype qs8 --op backward
refused 2 "--dist does not apply to qu8 data" "$leaky" "${g8[@]}" --dtype qu8 --dist normal
refused 2 "--dtype: q8 not in {f32,f64,f16,bf16,qu8,qs8,fp8_e4m3,fp8_e5m2}" "$leaky" "${g8[@]}" --dtype q8
"$leaky" golden --dtype qu8 --elems 300 --out "$work/g8" > /dev/null || fail "golden qu8"
refused 2 "--max-ulp does not apply to qu8 data" "$leaky" check "$work/g8/golden.bin" --golden "$work/g8" --max-ulp 1
refused 2 "--allow-rounding does not apply to qu8 data" "$leaky" check "$work/g8/golden.bin" --golden "$work/g8" \
  --allow-rounding
refused 2 "golden.bin holds 8198 bytes; 300 qu8 elements are exactly 300 bytes" "$leaky" check "$work/g/golden.bin" \
  --golden "$work/g8"
mkdir -p "$work/broken8" && cp "$work/g8/"*.bin "$work/broken8/"
sed 's/"zero_point": 128/"zero_point": 300/' "$work/g8/golden.json" > "$work/broken8/golden.json"
refused 2 "golden.json: \"quantization\": input zero point must be within qu8's range 0..255, not 300" "$leaky" \
  check "$work/g8/golden.bin" --golden "$work/broken8"
sed 's/"scale": 0.0625/"scale": -1/' "$work/g8/golden.json" > "$work/broken8/golden.json"
refused 2 "golden.json: output scale must be a finite number above 0, not -1" "$leaky" \
  check "$work/g8/golden.bin" --golden "$work/broken8"
# 5. A --filter that selects no benchmark, before anything runs or is written.
if [ ! -x "$bench" ]; then  # not given, or not built
  # leaky-bench's interface, minimal: --list prints the names --filter=
  # matches; asked to run, write an empty result file (the real one writes
  # no benchmarks, which used to end in a JSON parser error).
  bench=$work/fake-bench
  cat > "$bench" <<'SH'
#!/bin/sh
filter=. out=
for a in "$@"; do
  case $a in --filter=*) filter=${a#*=} ;; --out=*) out=${a#*=} ;; esac
done
case " $* " in *" --list "*)
  # As leaky-bench: exit 2 when the filter is not a regular expression.
  printf 'leaky/f32/fwd/4096/1\nonednn/f32/fwd/4096/1\n' | grep -E -- "$filter"
  [ $? = 2 ] && exit 2; exit 0 ;;
esac
[ -n "$out" ] && : > "$out"
exit 0
SH
  chmod +x "$bench"
fi
refused 2 "no benchmark matches --filter 'no-such-benchmark'" "$leaky" bench --bench-binary "$bench" \
  --filter no-such-benchmark --out "$work/bench"
refused 2 "--filter '[' is not a regular expression" "$leaky" bench \
  --bench-binary "$bench" --filter '[' --out "$work/bench"
refused 2 "--min-time must be a finite number" "$leaky" bench --bench-binary "$bench" --min-time nan \
  --out "$work/bench"
# 7. --svg (and the timeline's rates) without --timeline.
refused 2 "--svg needs --timeline" "$leaky" plan --elems 100 --svg "$work/x.svg"
refused 2 "--copy-gbps needs --timeline" "$leaky" plan --elems 100 --copy-gbps 5
# 8. Rates that are not finite positive numbers.
for rate in nan inf -inf 0 -1 x; do
  refused 2 "--copy-gbps must be a finite number from 1e-06 to 1e+09, not '$rate'" \
    "$leaky" plan --elems 100 --timeline --copy-gbps "$rate"
done
refused 2 "--vector-gelems must be a finite number" "$leaky" plan --elems 100 --timeline --vector-gelems nan
# 9. A negative device index (when the build has the OpenCL backend).
if "$leaky" --help | grep -q "^  device"; then
  refused 2 "--device must be at least 0, not -1" "$leaky" device run --golden "$work/g" \
    --out "$work/d.bin" --device -1
  refused 2 "--golden $work/none does not exist" "$leaky" device run --golden "$work/none" --out "$work/d.bin"
  # Without its arguments, in words (CLI11 said "A subcommand is required").
  refused 2 "leaky device run: --golden is required" "$leaky" device run
  refused 2 "leaky device: a command is required: one of run, bench" "$leaky" device
else
  echo "skipped: this leaky has no device command"
fi
# 10. check --json: a JSON object on stdout whenever it exits 2.
refused 2 "--golden $work/none does not exist" "$leaky" check "$work/g/golden.bin" --golden "$work/none" --json
json_error
refused 2 "--max-ulp must be at least 0, not -2" "$leaky" check "$work/g/golden.bin" --golden "$work/g" \
  --json --max-ulp -2
json_error
head -c 100 "$work/g/golden.bin" > "$work/truncated.bin"
refused 2 "truncated" "$leaky" check "$work/truncated.bin" --golden "$work/g" --json
json_error
refused 2 "--elems must be at least 1" "$leaky" plan --json --elems 0
json_error
# 11. --dist: the message and the help spell the form alike.
refused 2 "expected normal[:MEAN,STD]" "$leaky" golden --dist normal:0 --out "$work/new"
"$leaky" golden --help | grep -qF "normal[:MEAN,STD]" || fail "golden --help does not say normal[:MEAN,STD]"
refused 2 "expected uniform[:A,B]" "$leaky" golden --dist uniform:x,1 --out "$work/new"
"$leaky" golden --help | grep -qF "uniform[:A,B]" || fail "golden --help does not say uniform[:A,B]"
refused 2 "unknown distribution 'lognormal'" "$leaky" golden --dist lognormal --out "$work/new"
# A distribution of one value (all inputs equal) tests nothing.
refused 2 "STD must be positive" "$leaky" golden --dist normal:0,0 --out "$work/new"
refused 2 "A must be below B" "$leaky" golden --dist uniform:1,1 --out "$work/new"
# CLI11's own errors: one line too.
refused 2 "--bogus" "$leaky" plan --elems 100 --bogus
refused 2 "--golden is required" "$leaky" check "$work/g/golden.bin"

# 1. leaky.testing, from the shell and from Python.
if [ -n "$python" ]; then
  mkdir -p "$work/py"
  cat > "$work/py/kernels.py" <<'PY'
import os
import numpy as np
def good(x, s):
    open(os.environ["CALLED"], "w").close()  # the kernel must not run on bad arguments
    w = x.astype(np.float32)
    return np.where(w > 0, w, w * np.float32(s)).astype(x.dtype)
PY
  export CALLED=$work/called PYTHONPATH=$work/py${PYTHONPATH:+:$PYTHONPATH}
  t=("$python" -m leaky.testing kernels:good)
  refused 2 "argument --max-ulp: must be at least 0, not -1" "${t[@]}" --max-ulp -1
  refused 2 "argument --elems: must be at least 1, not -5" "${t[@]}" --elems -5
  refused 2 "argument --seed: must be at least 0, not -1" "${t[@]}" --seed -1
  refused 2 "argument --elems: must be a whole number, not 'x'" "${t[@]}" --elems x
  refused 2 "argument --slope: must be a finite number, not nan" "${t[@]}" --slope nan
  refused 2 "unrecognized arguments: --bogus" "${t[@]}" --bogus
  refused 2 "expected normal[:MEAN,STD]" "${t[@]}" --dist normal:0
  refused 2 "argument --elems: must be at least 1, not 0" "${t[@]}" --json --elems 0
  json_error
  [ ! -e "$CALLED" ] || fail "leaky.testing called the kernel with bad arguments"
  "${t[@]}" --elems 1000 > "$work/stdout.txt" 2> "$work/stderr.txt" \
    && grep -q "^PASS" "$work/stdout.txt" && [ -e "$CALLED" ] || { cat "$work/stderr.txt"; fail "a good call"; }
  rm -f "$CALLED"
  "$python" - <<'PY' || fail "check_op with bad arguments"
import os
import leaky.testing as lt
from kernels import good
cases = [(dict(elems=-5), "elems must be at least 1, not -5"),
         (dict(seed=-1), "seed must be at least 0, not -1"),
         (dict(max_ulp=-1), "max_ulp must be at least 0, not -1"),
         (dict(elems=2.5), "elems must be a whole number, not 2.5"),
         (dict(slope=float("inf")), "slope must be a finite number, not inf"),
         (dict(cores=0), "cores must be at least 1, not 0"),
         (dict(buffers=1 << 70), "buffers must be at most 8"),
         (dict(dtype=["f16"]), "dtype must be one of"),
         (dict(strict_zero_sign="yes"), "strict_zero_sign must be True or False"),
         (dict(dist="normal:0"), "expected normal[:MEAN,STD]"),
         (dict(tile_elems=1 << 62, dtype="f64"), "overflows")]


def refused(call, kwargs, words):
    """call(**kwargs) raises one one-line ValueError holding `words`, and
    the kernel never ran."""
    try:
        call(**kwargs)
    except ValueError as e:
        message = str(e)
        assert words in message and "\n" not in message, (call.__name__, kwargs, message[:300])
    else:
        raise AssertionError("%s: no ValueError for %r" % (call.__name__, kwargs))
    assert not os.path.exists(os.environ["CALLED"]), ("the kernel ran", kwargs)


def check_op(**kwargs):
    return lt.check_op(good, **kwargs)


for kwargs, words in cases:
    refused(check_op, kwargs, words)
refused(lt.golden, dict(elems=0), "elems must be at least 1, not 0")
refused(lt.golden, dict(seed=-1), "seed must be at least 0, not -1")
refused(lt.opencl_leaky_relu, dict(device=-1), "device must be at least 0, not -1")
refused(lt.opencl_leaky_relu, dict(tile_elems=0), "tile_elems must be at least 1, not 0")
PY
else
  echo "skipped: no Python interpreter given for leaky.testing"
fi
# The GAN lab's commands (builds with LibTorch only).
if [ "$with_gan" = gan ]; then
  gan=("$leaky" gan --out "$work/runs" --data-dir "$work/no-digits" --no-speed-check)
  refused 2 "--steps must be at least 1, not 0" "${gan[@]}" --steps 0
  refused 2 "--seeds must be at least 1, not -1" "${gan[@]}" --seeds -1
  refused 2 "--width must be at most 2, not 3" "${gan[@]}" --width 3
  refused 2 "--samples 1: the quality metrics need at least 10" "${gan[@]}" --samples 1
  refused 2 "relu is given twice" "${gan[@]}" --acts relu,relu
  refused 2 "--samples 1001: at most 1000 on image data" "${gan[@]}" --samples 1001
  head -c 64 /dev/zero > "$work/pre.f32"
  refused 2 "cannot write --json /proc/x.json" "$leaky" precision "$work/pre.f32" --json /proc/x.json
  refused 2 "is a directory, not a raw f32 file" "$leaky" precision "$work"
  # A text file (the issue's `leaky precision README.md` printed a table of zeros).
  printf 'not floats\n' > "$work/notes.txt"
  refused 2 "notes.txt: not a raw f32 file (11 bytes)" "$leaky" precision "$work/notes.txt"
  refused 2 "is a directory, not a JSON file" "$leaky" precision "$work/pre.f32" --json "$work"
  refused 2 "--slope must be a finite number" "$leaky" precision "$work/pre.f32" --slope nan
  refused 2 "unknown option --stpes (did you mean --steps?)" "${gan[@]}" --stpes 10
  refused 2 "--out /proc/x: cannot create the run folder" "$leaky" gan --out /proc/x --steps 1
  refused 2 "$work/none has no results.json" "$leaky" gan report "$work/none"
  refused 2 "leaky gan merge: $work/none has no results.json" "$leaky" gan merge "$work/none" --out "$work/m"
  refused 2 "leaky gan merge: give the run folders" "$leaky" gan merge --out "$work/m"
  refused 2 "is a directory, not an HTML file" "$leaky" gan report "$work/none" --out "$work"
else
  echo "skipped: this leaky has no gan command"
fi
echo "bad input: all checks passed"

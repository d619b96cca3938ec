#!/usr/bin/env bash
# Builds the golden-file reader fuzz target with clang's libFuzzer + ASan +
# UBSan and runs it for a bounded time from a seed corpus.
set -euo pipefail
source_dir=$1 build_dir=$2 seconds=${3:-20}
mkdir -p "$build_dir/corpus"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -I"$source_dir/include" -I"$source_dir/toolkit" \
  "$source_dir/tests/fuzz/golden_io_fuzz.cc" "$source_dir/toolkit/golden_io.cc" \
  "$source_dir/toolkit/eight_bit_format.cc" \
  -o "$build_dir/golden_io_fuzz"
cat > "$build_dir/corpus/valid.json" <<'JSON'
{"format": "leaky-golden-1", "op": "leaky_relu_backward", "dtype": "bf16", "shape": [3, 5],
 "elements": 15, "negative_slope": 0.2, "distribution": "hard", "seed": 1}
JSON
cat > "$build_dir/corpus/valid_qs8.json" <<'JSON'
{"format": "leaky-golden-1", "op": "leaky_relu_forward", "dtype": "qs8", "shape": [256],
 "elements": 256, "negative_slope": 0.2, "distribution": "all_bytes", "seed": 1,
 "quantization": {"input": {"scale": 0.09375, "zero_point": 0},
                  "output": {"scale": 0.0625, "zero_point": -88}, "output_min": -128, "output_max": 127}}
JSON
printf '\x00\x3c\x01\x80\xff\x7f\x00\x00' > "$build_dir/corpus/array.bin"
"$build_dir/golden_io_fuzz" -max_total_time="$seconds" -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$build_dir/" \
  "$build_dir/corpus"

#!/bin/sh
# A stand-in for leaky-bench (`leaky bench --bench-binary`): lists the
# benchmarks of the raw file $LEAKY_REPLAY_RAW and "runs" them by copying
# that file to --out, so `leaky bench` analyses samples chosen in advance.
set -eu
out=
for arg in "$@"; do
  case "$arg" in
    --list) sed -n 's/^ *"name": "\(.*\)",\{0,1\}$/\1/p' "$LEAKY_REPLAY_RAW"; exit 0 ;;
    --out=*) out="${arg#--out=}" ;;
  esac
done
cp "$LEAKY_REPLAY_RAW" "$out"

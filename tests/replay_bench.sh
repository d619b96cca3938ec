#!/bin/sh
# A stand-in for leaky-bench (`leaky bench --bench-binary`): lists the
# benchmarks of the raw file $LEAKY_REPLAY_RAW and "runs" them by copying
# that file to --out, so `leaky bench` analyses samples chosen in advance.
# Run with --filter and $LEAKY_REPLAY_RERUN set (the rerun of the checks
# that are not firm), it copies that file instead and writes the filter
# it was given beside it (OUT.filter).
set -eu
out= filter=
for arg in "$@"; do
  case "$arg" in
    --list) sed -n 's/^ *"name": "\(.*\)",\{0,1\}$/\1/p' "$LEAKY_REPLAY_RAW"; exit 0 ;;
    --out=*) out="${arg#--out=}" ;;
    --filter=*) filter="${arg#--filter=}" ;;
  esac
done
if [ -n "$filter" ] && [ -n "${LEAKY_REPLAY_RERUN:-}" ]; then
  printf '%s\n' "$filter" > "$out.filter"
  cp "$LEAKY_REPLAY_RERUN" "$out"
else
  cp "$LEAKY_REPLAY_RAW" "$out"
fi

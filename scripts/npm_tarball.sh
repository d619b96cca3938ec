#!/usr/bin/env bash
# Downloads one npm package's tarball into DIR and checks its SHA-256:
# with curl from the npm registry (npm_config_registry, or
# https://registry.npmjs.org), the URL `npm pack` itself fetches, so a
# machine needs no Node.js for the lab's data and the reports' scripts;
# with `npm pack` where curl is missing. Prints the tarball's path.
#
# usage: bash scripts/npm_tarball.sh NAME@VERSION SHA256 DIR
set -euo pipefail
spec=$1 expected=$2 dir=$3
name=${spec%@*} version=${spec#*@}
tarball="$dir/$name-$version.tgz"
if command -v curl >/dev/null; then
  registry=${npm_config_registry:-https://registry.npmjs.org}
  curl -fsL --retry 3 -o "$tarball" "${registry%/}/$name/-/$name-$version.tgz" || {
    echo "npm_tarball: cannot download $spec from ${registry%/}" >&2; exit 1; }
elif command -v npm >/dev/null; then
  (cd "$dir" && npm pack --silent "$spec" >/dev/null)
else
  echo "npm_tarball: neither curl nor npm is installed (scripts/bootstrap.sh installs curl)" >&2
  exit 1
fi
actual=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ "$actual" != "$expected" ]; then
  echo "npm_tarball: $name-$version.tgz has SHA-256 $actual, expected $expected" >&2
  exit 1
fi
echo "$tarball"

#!/usr/bin/env bash
# Fetches the charting scripts the reports inline (the GAN lab's
# report.html, `leaky bench`'s bench.html): the npm packages vega@5.33.1,
# vega-lite@5.23.0 and vega-embed@6.29.0 (BSD-3-Clause; scripts/npm_tarball.sh),
# each checked against its SHA-256, their minified builds copied into DIR (default: the
# checkout's data/vega, where the reports look unless LEAKY_VEGA_DIR says
# otherwise). Idempotent: does nothing when the scripts are already there.
#
# usage: bash scripts/fetch_vega.sh [DIR]
set -euo pipefail
dir=$(realpath -m "${1:-$(dirname "$0")/../data/vega}")
# package@version, its tarball's SHA-256, the file the reports inline
packages=(
  "vega@5.33.1 1b8504b6731c5311be3269c4d84ca996a5cc293bc772283293ede20c490e16c3 vega.min.js"
  "vega-lite@5.23.0 e4cbfdd8f6f1abe381c59cd558fd6a559c12b1496bfdf2e0c3295263a40fe4da vega-lite.min.js"
  "vega-embed@6.29.0 ecf1ee709c2bac9e0a4ead6908114b05b62c71493e10a8a4308109bb070f8eb1 vega-embed.min.js"
)
missing=0
for entry in "${packages[@]}"; do
  read -r _ _ file <<<"$entry"
  [ -f "$dir/$file" ] || missing=1
done
[ "$missing" = 0 ] && exit 0
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for entry in "${packages[@]}"; do
  read -r spec expected file <<<"$entry"
  name=${spec%@*}
  tarball=$(bash "$(dirname "$0")/npm_tarball.sh" "$spec" "$expected" "$tmp")
  mkdir -p "$tmp/$name"
  tar -xzf "$tarball" -C "$tmp/$name" package/package.json "package/build/$file"
  # Renamed into place: a test running beside this one (ctest -j) that
  # finds the file reads it whole.
  cp "$tmp/$name/package/package.json" "$dir/$name.package.json.$$" && mv -f "$dir/$name.package.json.$$" "$dir/$name.package.json"
  cp "$tmp/$name/package/build/$file" "$dir/$file.$$" && mv -f "$dir/$file.$$" "$dir/$file"
done
echo "fetch_vega: copied vega@5.33.1, vega-lite@5.23.0 and vega-embed@6.29.0 into $dir"

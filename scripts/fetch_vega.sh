#!/usr/bin/env bash
# Fetches the charting scripts the reports inline (the GAN lab's
# report.html, `leaky bench`'s bench.html): the npm packages vega@5.33.1,
# vega-lite@5.23.0 and vega-embed@6.29.0 (BSD-3-Clause; scripts/npm_tarball.sh),
# each checked against its SHA-256, their minified builds copied into DIR (default: the
# checkout's data/vega, where the reports look unless LEAKY_VEGA_DIR says
# otherwise) and checked against theirs. Idempotent: does nothing when the
# scripts are already there with their SHA-256; a missing, truncated or
# damaged one (which the reports refuse) is fetched again.
#
# usage: bash scripts/fetch_vega.sh [DIR]
set -euo pipefail
dir=$(realpath -m "${1:-$(dirname "$0")/../data/vega}")
# package@version, its tarball's SHA-256, the file the reports inline and
# that file's SHA-256 (toolkit/vega.cc's kScripts checks the same digests:
# change both together)
packages=(
  "vega@5.33.1 1b8504b6731c5311be3269c4d84ca996a5cc293bc772283293ede20c490e16c3 vega.min.js 463f3db6a40b20e9747b4ed38f37ed0add508838f9141b1cf8366784b07b30c8"
  "vega-lite@5.23.0 e4cbfdd8f6f1abe381c59cd558fd6a559c12b1496bfdf2e0c3295263a40fe4da vega-lite.min.js 58c27358e26f2d319cf62f45bc17a4c8362f08645001df2ec8d341eee4097c7f"
  "vega-embed@6.29.0 ecf1ee709c2bac9e0a4ead6908114b05b62c71493e10a8a4308109bb070f8eb1 vega-embed.min.js 12d02acfbe3ec59ef9a37dd4822a2e04e2961b5bbb671bbe661d2221715b99da"
)
sha256() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }
wanted=()
for entry in "${packages[@]}"; do
  read -r _ _ file digest <<<"$entry"
  if [ ! -f "$dir/$file" ] || [ "$(sha256 "$dir/$file")" != "$digest" ]; then
    wanted+=("$entry")
  fi
done
[ ${#wanted[@]} -eq 0 ] && exit 0
mkdir -p "$dir"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copied=()
for entry in "${wanted[@]}"; do
  read -r spec expected file digest <<<"$entry"
  name=${spec%@*}
  tarball=$(bash "$(dirname "$0")/npm_tarball.sh" "$spec" "$expected" "$tmp")
  mkdir -p "$tmp/$name"
  tar -xzf "$tarball" -C "$tmp/$name" package/package.json "package/build/$file"
  # Renamed into place: a test running beside this one (ctest -j) that
  # finds the file reads it whole. The copy is checked before it is.
  cp "$tmp/$name/package/package.json" "$dir/$name.package.json.$$" && mv -fT "$dir/$name.package.json.$$" "$dir/$name.package.json"
  cp "$tmp/$name/package/build/$file" "$dir/$file.$$"
  actual=$(sha256 "$dir/$file.$$")
  if [ "$actual" != "$digest" ]; then
    rm -f "$dir/$file.$$"
    echo "fetch_vega: $spec's build/$file copied into $dir has SHA-256 ${actual:-(unreadable)}, expected $digest (toolkit/vega.cc checks the same)" >&2
    exit 1
  fi
  mv -fT "$dir/$file.$$" "$dir/$file"
  copied+=("$spec")
done
echo "fetch_vega: copied ${copied[*]} into $dir"

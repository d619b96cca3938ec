#!/usr/bin/env bash
# The arm64 libraries the cross build links against, unpacked into a
# project-local sysroot. Never installed into the host's package set: dpkg
# multiarch would replace amd64 packages the rest of the project needs
# (installing libpthreadpool-dev:arm64 removes libtorch-dev). apt runs with
# a private state and cache and arm64 as its only architecture; the .debs
# are unpacked with dpkg -x. Idempotent: the sysroot is kept while the
# package list (and so its checksum) is unchanged.
# Usage: scripts/arm64_sysroot.sh [DIR]   (default build-arm64/sysroot)
set -euo pipefail
root=$(realpath -m "${1:-build-arm64/sysroot}")
packages=(
  libhwy-dev libhwy1 libpthreadpool-dev libpthreadpool0
  libgtest-dev libgmock-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libfmt9
  libboost1.74-dev  # the 8-bit tests' exact reference (Boost.Multiprecision headers)
  libssl-dev libssl3  # libcrypto: the charting scripts' SHA-256 (toolkit/vega.cc)
  zlib1g-dev zlib1g  # the report's sample grids (gan/results/grid_ink.cc) in the results replay
)
stamp="$root/.packages.sha256"
sum=$(printf '%s\n' "${packages[@]}" | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
  exit 0
fi
apt_dir="$root.apt"
rm -rf "$root" "$apt_dir"
mkdir -p "$apt_dir/state/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs" "$root"
touch "$apt_dir/status"
apt_opts=(
  -o "Dir::State=$apt_dir/state" -o "Dir::State::status=$apt_dir/status"
  -o "Dir::Cache=$apt_dir/cache" -o "APT::Architecture=arm64" -o "APT::Architectures::=arm64"
  -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root" -qq
)
echo "arm64 sysroot: fetching ${packages[*]}"
apt-get "${apt_opts[@]}" update
for package in "${packages[@]}"; do
  if ! (cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "$package:arm64" 2> "$apt_dir/error.txt"); then
    echo "arm64 sysroot: could not fetch $package:arm64 ($(tail -n 1 "$apt_dir/error.txt"))" >&2
    exit 1
  fi
done
for deb in "$apt_dir"/debs/*.deb; do dpkg -x "$deb" "$root"; done
# Absolute symlinks inside the packages point at the host's /usr: make them
# relative to the sysroot.
find "$root" -type l -lname '/*' | while read -r link; do
  ln -sfn "$root$(readlink "$link")" "$link"
done
rm -rf "$apt_dir"
echo "$sum" > "$stamp"

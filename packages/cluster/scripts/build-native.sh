#!/usr/bin/env bash
# Builds fencekit's two native helpers (needs gcc, from build-essential) into packages/cluster/native/build/, or into
# the folder given as $1 (an installed package builds into a cache folder of the user's, never into node_modules):
#   libfencekit-clockshim.so  the LD_PRELOAD clock shim (clock faults)
#   fencekit-pdeathsig        a launcher that makes the kernel kill a server when its parent dies
#   platform                  "<process.platform>-<process.arch>" they were built for (the package ships what
#                             `prepack` built; another platform builds its own at first use)
# Idempotent: each is rebuilt only when its source is newer.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/native/build}"
mkdir -p "$out"

build() { # build <source> <output> <gcc flags...>
  local src="$1" dest="$2"
  shift 2
  if [[ -f "$dest" && "$dest" -nt "$src" ]]; then
    echo "up to date: $dest"
    return
  fi
  echo "building: gcc $* $src -o $dest"
  gcc "$@" -O2 -Wall -Wextra -o "$dest.tmp" "$src"
  mv "$dest.tmp" "$dest"
}

build "$here/native/clockshim.c" "$out/libfencekit-clockshim.so" -shared -fPIC -ldl
build "$here/native/pdeathsig.c" "$out/fencekit-pdeathsig"
node -p 'process.platform + "-" + process.arch' > "$out/platform.tmp"
mv "$out/platform.tmp" "$out/platform"

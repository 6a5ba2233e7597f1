#!/usr/bin/env bash
# Builds fencekit's two native helpers into packages/cluster/native/build/ (needs gcc, from build-essential):
#   libfencekit-clockshim.so  the LD_PRELOAD clock shim (clock faults)
#   fencekit-pdeathsig        a launcher that makes the kernel kill a server when its parent dies
# Idempotent: each is rebuilt only when its source is newer.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$here/native/build"

build() { # build <source> <output> <gcc flags...>
  local src="$1" out="$2"
  shift 2
  if [[ -f "$out" && "$out" -nt "$src" ]]; then
    echo "up to date: $out"
    return
  fi
  echo "building: gcc $* $src -o $out"
  gcc "$@" -O2 -Wall -Wextra -o "$out.tmp" "$src"
  mv "$out.tmp" "$out"
}

build "$here/native/clockshim.c" "$here/native/build/libfencekit-clockshim.so" -shared -fPIC -ldl
build "$here/native/pdeathsig.c" "$here/native/build/fencekit-pdeathsig"

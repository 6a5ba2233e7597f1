#!/usr/bin/env bash
# Builds the LD_PRELOAD clock shim into packages/cluster/native/build/. Idempotent: rebuilds only when the source
# is newer than the library. Needs gcc (build-essential).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="$here/native/clockshim.c"
out="$here/native/build/libfencekit-clockshim.so"
mkdir -p "$here/native/build"
if [[ -f "$out" && "$out" -nt "$src" ]]; then
  echo "clock shim up to date: $out"
  exit 0
fi
echo "building clock shim: gcc -shared -fPIC -O2 $src -o $out"
gcc -shared -fPIC -O2 -Wall -Wextra -o "$out.tmp" "$src" -ldl
mv "$out.tmp" "$out"
echo "built $out"

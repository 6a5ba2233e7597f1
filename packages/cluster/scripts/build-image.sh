#!/usr/bin/env bash
# Builds the servers image fencekit's docker provider runs: fencekit/servers:<hash of images/servers/Dockerfile>
# (inside this package, so it works from an installed @fencekit/cluster as from the repository).
# Idempotent and verbose: it says what it finds and what it does. It starts nothing itself: dockerd must answer.
#   1. the base debian:bookworm-slim: present → kept; else `docker pull`; else debootstrap --variant=minbase
#      bookworm into a temp dir and `docker import` it under that name (about 2 minutes);
#   2. `docker build --network host -t fencekit/servers:<hash>` unless that tag exists already.
# Prints the final tag on the last line.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
context="$here/images/servers"
base="debian:bookworm-slim"

if ! docker info >/dev/null 2>&1; then
  echo "build-image: no Docker engine answers (start dockerd first)" >&2
  exit 1
fi

hash="$(sha256sum "$context/Dockerfile" | cut -c1-12)"
tag="fencekit/servers:$hash"

if docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-image: $tag already built"
  echo "$tag"
  exit 0
fi

if docker image inspect "$base" >/dev/null 2>&1; then
  echo "build-image: base $base present"
else
  echo "build-image: base $base missing; trying docker pull"
  if timeout 120 docker pull "$base"; then
    echo "build-image: pulled $base"
  else
    echo "build-image: pull failed; building $base with debootstrap --variant=minbase bookworm"
    rootfs="$(mktemp -d /tmp/fencekit-rootfs.XXXXXX)"
    trap 'rm -rf "$rootfs"' EXIT
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian
    echo "build-image: importing $rootfs as $base"
    tar -C "$rootfs" -c . | docker import - "$base"
  fi
fi

echo "build-image: docker build --network host -t $tag $context"
docker build --network host -t "$tag" "$context"
echo "$tag"

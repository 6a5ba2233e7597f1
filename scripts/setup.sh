#!/usr/bin/env bash
# Idempotent machine setup for fencekit: installs what is missing, says what it does, skips what is there.
# Used by scripts/test.sh and scripts/main.sh; safe to run again at any time.
#   FENCEKIT_DOCKER=0   skip starting dockerd and building the server image (local provider only)
set -euo pipefail
# Turborepo would otherwise phone home; this machine may only talk to loopback.
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
cd "$(dirname "$0")/.."
say() { printf '[setup] %s\n' "$*"; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    say "need root for: $*  (run as root or install sudo)"; return 1; fi
}

# --- Node ----------------------------------------------------------------------------------------
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  say "Node.js 20 or newer is required (found: $(node --version 2>/dev/null || echo none))"; exit 1
fi
say "Node.js $(node --version), npm $(npm --version)"

# --- Debian packages -----------------------------------------------------------------------------
packages=(redis-server etcd-server etcd-client zookeeper default-jre-headless faketime iptables iproute2 openssl
  docker.io debootstrap build-essential chromium procps)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  say "Debian packages present: ${packages[*]}"
fi
# Debian starts these as services on install; fencekit runs its own instances on free ports instead.
for svc in redis-server etcd zookeeper; do
  if command -v systemctl >/dev/null && systemctl is-active --quiet "$svc" 2>/dev/null; then
    say "stopping the distribution's $svc service (fencekit starts its own servers)"; as_root systemctl stop "$svc" || true
  fi
done

# --- npm dependencies ----------------------------------------------------------------------------
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
else
  say "npm dependencies up to date"
fi
# The packaging test installs fencekit's tarballs into an empty project with --offline: fill npm's cache with
# what that project needs (a no-op once cached).
say "filling npm's cache for the packaging test (scripts/warm-packaging-cache.mjs)"
node scripts/warm-packaging-cache.mjs

# --- native helpers (the clock-skew LD_PRELOAD shim) -----------------------------------------------
if [ -x packages/cluster/scripts/build-native.sh ] || [ -f packages/cluster/scripts/build-native.sh ]; then
  bash packages/cluster/scripts/build-native.sh
fi

# --- Docker engine and the server image ----------------------------------------------------------
if [ "${FENCEKIT_DOCKER:-1}" != "0" ]; then
  if ! docker info >/dev/null 2>&1; then
    if command -v dockerd >/dev/null; then
      say "starting dockerd (log: /tmp/fencekit-dockerd.log)"
      # The daemon outlives this script: it must not inherit our open files (a caller's flock(1) lock
      # would stay held for as long as dockerd runs), so every descriptor above 2 is closed first.
      as_root bash -c 'for fd in /proc/$$/fd/*; do n=${fd##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done
        nohup setsid dockerd </dev/null >/tmp/fencekit-dockerd.log 2>&1 &'
      for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    fi
  fi
  if docker info >/dev/null 2>&1; then
    say "Docker engine answers ($(docker version --format '{{.Server.Version}}' 2>/dev/null))"
    if [ -f packages/cluster/scripts/build-image.sh ]; then bash packages/cluster/scripts/build-image.sh; fi
  else
    say "no Docker engine answers: the docker provider is unavailable, the local provider will be used"
  fi
else
  say "FENCEKIT_DOCKER=0: skipping Docker"
fi

# --- build ---------------------------------------------------------------------------------------
say "building all packages (turbo, cached)"
npx turbo run build --output-logs=errors-only >/dev/null
say "ready"

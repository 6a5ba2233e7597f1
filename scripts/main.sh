#!/usr/bin/env bash
# The main job: installs what is missing, runs the short consistency suite (real Redis, Redlock,
# ZooKeeper and etcd under faults), checks every history and writes the report site to reports/.
# Extra arguments go to `fencekit suite` (e.g. --provider docker, --seed 7, --out DIR).
set -euo pipefail
# Turborepo would otherwise phone home; this machine may only talk to loopback.
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
cd "$(dirname "$0")/.."
bash scripts/setup.sh
printf '[main] running the short suite: fencekit suite --short %s\n' "$*"
exec node apps/harness/dist/cli.js suite --short "$@"

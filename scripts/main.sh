#!/usr/bin/env bash
# The main job: installs what is missing, runs the short consistency suite (real Redis, Redlock,
# ZooKeeper and etcd under faults), checks every history and writes the report site to reports/,
# then runs the slow tests (the seeded fault matrices, apps/harness/test/*.matrix.test.ts, and *.slow.test.ts).
# Extra arguments go to `fencekit suite` (e.g. --provider docker, --seed 7, --out DIR).
set -euo pipefail
# Turborepo would otherwise phone home; this machine may only talk to loopback.
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
cd "$(dirname "$0")/.."
bash scripts/setup.sh
printf '[main] running the short suite: fencekit suite --short %s\n' "$*"
node apps/harness/dist/cli.js suite --short "$@"
# The seeded fault matrices (whole runs over several seeds: Redis convicted in >= 95 % of unfenced runs,
# Redlock under the clock jump, ZooKeeper and etcd clean under pauses, kills and partitions) and the other
# slow tests (a second Docker engine) take minutes, so they run here rather than in every `npm test`.
printf '[main] running the slow tests: npm run test:slow\n'
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
npm run --silent test:slow

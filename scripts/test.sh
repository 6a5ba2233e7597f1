#!/usr/bin/env bash
# The whole test suite on real servers: installs what is missing, then typecheck, lint and every test.
# Ends with one line "vitest: N passed, N failed, N skipped"; fails when a test failed or none ran.
set -euo pipefail
# Turborepo would otherwise phone home; this machine may only talk to loopback.
export TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1
cd "$(dirname "$0")/.."
say() { printf '[test] %s\n' "$*"; }

bash scripts/setup.sh
say "typecheck"; npm run --silent typecheck
say "lint"; npm run --silent lint
say "running all tests (unit and integration, real servers)"
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1
results=.vitest-results.json
rm -f "$results"
status=0
npx vitest run --reporter=default --reporter=json --outputFile="$results" || status=$?
node scripts/vitest-summary.mjs "$results" || status=$?
exit "$status"

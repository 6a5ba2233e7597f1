#!/usr/bin/env bash
# Packs @fencekit/core, installs the tarball into an empty folder (offline: it has no dependencies,
# only optional peers) and imports it there the way a user would. Leaves nothing behind.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out" "$work/app"
(cd "$here" && npx tsc -b && npm pack --loglevel=error --pack-destination "$work/out" >/dev/null)
cd "$work/app"
printf '{"name":"pack-check","private":true,"type":"module"}\n' > package.json
npm install "$work"/out/fencekit-core-*.tgz --offline --no-audit --no-fund --loglevel=error
node -e "import('@fencekit/core').then(m=>console.log('typeof withLock:', typeof m.withLock))"
node --input-type=module -e "
import { createMemoryLockClient, withLock } from '@fencekit/core';
const locks = createMemoryLockClient();
const fence = await withLock(locks, 'pack-check', (lease) => lease.fence, { ttlMs: 1000 });
await locks.close();
if (fence !== 1n) throw new Error('unexpected fence ' + fence);
console.log('withLock from the installed tarball: ok (fence ' + fence + ')');
"
node --input-type=module -e "
import { jainIndex, percentile } from '@fencekit/core/bench';
if (percentile([3, 1, 2], 0.5) !== 2 || jainIndex([1, 1]) !== 1) throw new Error('bench helpers misbehave');
console.log('@fencekit/core/bench from the installed tarball: ok');
"

#!/usr/bin/env node
/**
 * Setup step for the packaging test (tests/packaging): installs, into a throw-away folder, every third-party
 * package a user's project would get beside fencekit's tarballs (the public packages' own dependencies, the
 * caller's ioredis and etcd3, @types/node) and resolves the optional-peer combinations the test checks. That
 * leaves their metadata and tarballs in npm's cache, so the test installs with --offline: tests talk to
 * loopback only, the registry is setup's business. Idempotent: a second run is served from the cache.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const PUBLIC = ['core', 'cluster', 'redis', 'redlock', 'zk', 'etcd', 'checker'];
const spec = JSON.parse(readFileSync(join(root, 'tests/packaging/consumer-deps.json'), 'utf8'));
const read = (path) => JSON.parse(readFileSync(join(root, path), 'utf8'));

const dependencies = {
  ioredis: spec.callerIoredis,
  etcd3: spec.etcd3,
  '@types/node': read('node_modules/@types/node/package.json').version,
};
for (const name of PUBLIC) {
  for (const [dep, range] of Object.entries(read(`packages/${name}/package.json`).dependencies ?? {})) {
    if (!dep.startsWith('@fencekit/')) dependencies[dep] = range;
  }
}

// Done already for exactly these inputs (the stamp lives beside the workspace's node_modules, which npm ci renews).
const stamp = join(root, 'node_modules/.cache/fencekit-packaging-cache.json');
const inputs = JSON.stringify({ dependencies, peerCombos: spec.peerCombos });
if (existsSync(stamp) && readFileSync(stamp, 'utf8') === inputs) process.exit(0);

const npm = (cwd, args) =>
  execFileSync('npm', [...args, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    stdio: ['ignore', 'ignore', 'inherit'],
    timeout: 600_000,
  });

const work = mkdtempSync(join(tmpdir(), 'fencekit-warm-cache-'));
try {
  const consumer = join(work, 'consumer');
  mkdirSync(consumer);
  writeFileSync(
    join(consumer, 'package.json'),
    JSON.stringify({ name: 'warm', private: true, dependencies }),
  );
  // A real install (scripts off): the test's install needs the tarballs, not only the metadata.
  npm(consumer, ['install', '--ignore-scripts']);
  for (const [sqlite, vitest] of spec.peerCombos) {
    const dir = join(work, `peers-${sqlite}-${vitest}`.replace(/\^/g, ''));
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'peers', private: true, dependencies: { 'better-sqlite3': sqlite, vitest } }),
    );
    npm(dir, ['install', '--package-lock-only', '--ignore-scripts']);
  }
  mkdirSync(join(root, 'node_modules/.cache'), { recursive: true });
  writeFileSync(stamp, inputs);
} finally {
  rmSync(work, { recursive: true, force: true });
}

// After `tsc -b`: copies the hand-written types of node-zookeeper-client (which ships none) into dist/ and points
// the emitted declarations' `/// <reference path>` at that copy, so dist/ type-checks on its own once installed
// (tsc writes the path relative to the source, `../src/...`). Idempotent.
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
copyFileSync(`${root}src/node-zookeeper-client.d.ts`, `${root}dist/node-zookeeper-client.d.ts`);
for (const file of readdirSync(`${root}dist`)) {
  if (!file.endsWith('.d.ts')) continue;
  const path = `${root}dist/${file}`;
  const text = readFileSync(path, 'utf8');
  const fixed = text.replaceAll(
    'path="../src/node-zookeeper-client.d.ts"',
    'path="./node-zookeeper-client.d.ts"',
  );
  if (fixed !== text) writeFileSync(path, fixed);
}

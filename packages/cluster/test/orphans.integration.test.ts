import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { alive } from './support/leftovers.js';

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

/** A child starts a cluster from the built package and prints its pids; then it is SIGKILLed. */
const childScript = `
const { startCluster } = await import(${JSON.stringify(dist)});
const cluster = await startCluster({ topology: 'redis-independent', nodes: 2 });
process.stdout.write(JSON.stringify(cluster.nodes.map((n) => n.pid)) + '\\n');
setInterval(() => {}, 1000);
`;

it.skipIf(!existsSync(dist))(
  'servers die with a parent killed by SIGKILL (no exit handler runs)',
  async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pids = await new Promise<number[]>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('child did not start its cluster in 30 s')), 30_000);
      child.stdout.setEncoding('utf8');
      child.stdout.once('data', (line: string) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as number[]);
      });
    });
    expect(pids.every(alive)).toBe(true);
    child.kill('SIGKILL');
    let left = pids;
    for (let i = 0; i < 50 && left.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = left.filter(alive);
    }
    expect(left).toEqual([]);
  },
);

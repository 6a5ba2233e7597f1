import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { alive } from './support/leftovers.js';

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

const childScript = `
const { serveClusterToParent, startCluster } = await import(${JSON.stringify(dist)});
const cluster = await startCluster({ topology: 'redis-independent', nodes: 2, provider: 'local' });
await serveClusterToParent(cluster, (c) => ({ endpoints: c.endpoints, pids: c.nodes.map((n) => n.pid) }));
`;

it.skipIf(!existsSync(dist))(
  'a cluster served to a parent reports its endpoints and goes away when the parent closes stdin',
  async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const described = await new Promise<{ endpoints: string[]; pids: number[] }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no description within 30 s')), 30_000);
      child.stdout.setEncoding('utf8');
      child.stdout.once('data', (line: string) => {
        clearTimeout(timer);
        resolve(JSON.parse(line) as { endpoints: string[]; pids: number[] });
      });
    });
    expect(described.endpoints).toHaveLength(2);
    expect(described.pids.every(alive)).toBe(true);
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.stdin.end();
    expect(await exited).toBe(0);
    expect(described.pids.filter(alive)).toEqual([]);
  },
  60_000,
);

import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';

const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));

// A "redis-server" that dies at once, first on PATH for a child process only (PATH is per process).
const fakeBin = mkdtempSync(join(tmpdir(), 'fencekit-fake-redis-'));
afterAll(() => rmSync(fakeBin, { recursive: true, force: true }));

const childScript = `
const { startCluster } = await import(${JSON.stringify(dist)});
const started = performance.now();
try {
  const cluster = await startCluster({ topology: 'redis', provider: 'local', startTimeoutMs: 30000 });
  await cluster.close();
  process.stdout.write(JSON.stringify({ started: true }));
} catch (error) {
  process.stdout.write(JSON.stringify({ code: error.code, reason: error.reason, ms: performance.now() - started }));
}
`;

it.skipIf(!existsSync(dist))(
  'a server process that exits while starting fails the start at once, saying so',
  async () => {
    const script = join(fakeBin, 'redis-server');
    writeFileSync(script, '#!/bin/sh\necho "refusing to start (test double)" >&2\nexit 1\n');
    chmodSync(script, 0o755);
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, PATH: `${fakeBin}:${process.env.PATH ?? ''}` },
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
    });
    const exitCode = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(exitCode).toBe(0);
    const result = JSON.parse(output) as { code?: string; reason?: string; ms?: number };
    expect(result.code).toBe('start-failed');
    expect(result.reason).toBe('the process exited');
    // Well before the 30 s start limit: the dead process is not waited out.
    expect(result.ms).toBeLessThan(10_000);
  },
  60_000,
);

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';
import { sharedHosts } from './support/clients.js';

const example = fileURLToPath(new URL('../examples/shared.mjs', import.meta.url));

it('the README semaphore and read-write lock example runs against a real cluster', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [example], {
    env: { ...process.env, ETCD_ENDPOINTS: sharedHosts().join(',') },
    timeout: 30_000,
  });
  expect(stdout).toMatch(/semaphore: fences \d+ < \d+; a third grant of 2: null/);
  expect(stdout).toContain('two readers at once; a writer now: null');
  expect(stdout).toMatch(/writer fence \d+ > reader fences \d+, \d+/);
  expect(stdout).toContain('upgrade: unsupported');
});

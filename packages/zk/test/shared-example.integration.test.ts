import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { injectCluster } from '@fencekit/cluster/vitest';
import { expect, it } from 'vitest';

const example = fileURLToPath(new URL('../examples/shared.mjs', import.meta.url));

it('the README semaphore and read-write lock example runs against a real ensemble', async () => {
  const { endpoints } = injectCluster('zookeeper');
  const { stdout } = await promisify(execFile)(process.execPath, [example], {
    env: { ...process.env, ZK_SERVERS: endpoints.join(',') },
    timeout: 30_000,
  });
  expect(stdout).toMatch(/semaphore: fences \d+ < \d+; a third grant of 2: null/);
  expect(stdout).toContain('two readers at once; a writer now: null');
  expect(stdout).toMatch(/writer fence \d+ > reader fences \d+, \d+/);
  expect(stdout).toContain('upgrade: unsupported');
});

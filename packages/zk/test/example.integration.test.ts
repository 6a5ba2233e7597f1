import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { injectCluster } from '@fencekit/cluster/vitest';
import { expect, it } from 'vitest';

const example = fileURLToPath(new URL('../examples/quickstart.mjs', import.meta.url));

it('the README example runs against a real ensemble', async () => {
  const { endpoints } = injectCluster('zookeeper');
  const { stdout } = await promisify(execFile)(process.execPath, [example], {
    env: { ...process.env, ZK_SERVERS: endpoints.join(',') },
    timeout: 30_000,
  });
  expect(stdout).toMatch(/holding inventory\/sku-42 with fence \d+/);
  expect(stdout).toContain('stale write refused by ZooKeeper: stale-fence');
  expect(stdout).toMatch(/elected: node-a, term \d+; current: node-a/);
  expect(stdout).toContain('leader is now nobody');
});

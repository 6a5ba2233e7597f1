// #14 HIGH 1 for Redlock: nodes given as URL objects were taken for ioredis options (a URL's fields
// are prototype getters: the spread copied nothing) and locked on localhost:6379 instead.
import { randomUUID } from 'node:crypto';
import { injectCluster } from '@fencekit/cluster/vitest';
import { InvalidArgumentError } from '@fencekit/core';
import { RedlockClient } from '@fencekit/redlock';
import { expect, it } from 'vitest';

const { endpoints } = injectCluster('redlock');

it('nodes given as URL objects or { url } lock on the servers they name', async () => {
  const strings = new RedlockClient({ nodes: endpoints.map((e) => `redis://${e}`) });
  const objects = new RedlockClient({
    nodes: endpoints.map((e, i) => (i % 2 ? new URL(`redis://${e}`) : { url: `redis://${e}` })),
  });
  try {
    const resource = `url-nodes-${randomUUID()}`;
    const lease = await objects.acquire(resource, { ttlMs: 10_000, waitMs: 2_000 });
    expect(await strings.tryAcquire(resource, { ttlMs: 10_000 })).toBeNull();
    await lease.release();
  } finally {
    await Promise.all([strings.close(), objects.close()]);
  }
});

it('refuses a node that names no server', () => {
  expect(() => new RedlockClient({ nodes: [{ password: 'x' }] })).toThrow(InvalidArgumentError);
});

import { injectCluster } from '@fencekit/cluster/vitest';
import { expect, it } from 'vitest';
import { redisClient } from './support/clients.js';

it('a cluster started in globalSetup is injected into test files', async () => {
  const shared = injectCluster('shared');
  expect(shared.topology).toBe('redis');
  const redis = redisClient(shared.endpoints[0]!);
  try {
    expect(await redis.ping()).toBe('PONG');
  } finally {
    redis.disconnect();
  }
});

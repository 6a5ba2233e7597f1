import { injectCluster } from '@fencekit/cluster/vitest';
import { isFencekitError } from '@fencekit/core';
import { ZkLockClient } from '@fencekit/zk';
import { describe, expect, it } from 'vitest';
import { followerLagMs } from './support/ensemble.js';

const servers = injectCluster('zookeeper').endpoints.join(',');

describe('guardedWrite paths', () => {
  it('a path with a lone surrogate is a typed argument error before anything is sent; the lease stays held', async () => {
    const client = new ZkLockClient({ servers, sessionTimeoutMs: 4_000, followerLagMs });
    try {
      const lease = await client.acquire(`hostile-path/${Math.random().toString(36).slice(2)}`, {
        ttlMs: 10_000,
      });
      for (const bad of ['/fencekit-test/high-\uD800', '/fencekit-test/\uDC00-low']) {
        const error = await client.guardedWrite(lease, bad, Buffer.from('x')).catch((e: unknown) => e);
        expect(isFencekitError(error, 'invalid-argument'), String(error)).toBe(true);
        expect((error as { argument?: unknown }).argument).toBe('path');
      }
      expect(lease.held).toBe(true);
      await lease.release();
    } finally {
      await client.close();
    }
  });
});

import { InvalidArgumentError } from '@fencekit/core';
import { guardedPut } from '@fencekit/etcd';
import { describe, expect, it } from 'vitest';
import { newClient, runPrefix } from './support/clients.js';

describe('guardedPut keys', () => {
  it('a key with a lone surrogate is refused, and nothing is written under U+FFFD instead', async () => {
    const client = newClient();
    try {
      const lease = await client.acquire('hostile-key', { ttlMs: 5_000 });
      for (const bad of [`${runPrefix}/data/high-\uD800`, `${runPrefix}/data/\uDC00-low`]) {
        await expect(guardedPut(lease, bad, 'v')).rejects.toBeInstanceOf(InvalidArgumentError);
        const replaced = Buffer.from(bad, 'utf8').toString('utf8');
        expect(await client.etcd.get(replaced).string()).toBeNull();
      }
      const astral = `${runPrefix}/data/lock-\u{1F512}`;
      await guardedPut(lease, astral, 'ok');
      expect(await client.etcd.get(astral).string()).toBe('ok');
      await lease.release();
    } finally {
      await client.close();
    }
  });
});

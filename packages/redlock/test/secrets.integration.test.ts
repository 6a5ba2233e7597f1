import { randomBytes, randomUUID } from 'node:crypto';
import { injectCluster } from '@fencekit/cluster/vitest';
import { isFencekitError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { RedlockClient } from '@fencekit/redlock';
import { describe, expect, it } from 'vitest';

const { endpoints } = injectCluster('redlock');

describe('redlock nodes with a wrong password', () => {
  it('never show the password in the error, its node outcomes or its cause chain', async () => {
    const wrong = `wrong-${randomBytes(12).toString('hex')}`;
    const user = `fencekit-nobody-${randomBytes(4).toString('hex')}`;
    const client = new RedlockClient({
      nodes: [
        ...endpoints.slice(0, 2).map((e) => `redis://${user}:${wrong}@${e}`),
        ...endpoints.slice(2, 4).map((e) => {
          const [host, port] = e.split(':');
          return { host, port: Number(port), username: user, password: wrong };
        }),
      ],
      nodeTimeoutMs: 250,
    });
    try {
      for (const attempt of [
        () => client.tryAcquire(`secret-${randomUUID()}`, { ttlMs: 1_000 }),
        () => client.acquire(`secret-${randomUUID()}`, { ttlMs: 1_000, waitMs: 500 }),
      ]) {
        const error = await attempt().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isFencekitError(error), String(error)).toBe(true);
        assertNoSecret(error, [wrong], 'redlock with a wrong password');
      }
    } finally {
      await client.close();
    }
  });
});

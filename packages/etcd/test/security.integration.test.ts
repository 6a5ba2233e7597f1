import { isFencekitError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { EtcdClient, guardedPut } from '@fencekit/etcd';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { enableAuth, startTlsEtcd, type TlsEtcd } from './support/tls-etcd.js';

let server: TlsEtcd;
const clients: EtcdClient[] = [];
const password = 'fencekit-test-password';

beforeAll(async () => {
  server = await startTlsEtcd();
  await enableAuth(server.endpoint, server.ca, password);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await server?.close();
});

function client(options: ConstructorParameters<typeof EtcdClient>[0]): EtcdClient {
  const c = new EtcdClient({ callTimeoutMs: 2_000, ...options });
  clients.push(c);
  return c;
}

describe('etcd over TLS with user/password', () => {
  it('locks, writes guarded and elects with the CA and credentials', async () => {
    const c = client({
      hosts: [server.endpoint],
      credentials: { rootCertificate: server.ca },
      auth: { username: 'root', password },
    });
    const lease = await c.acquire('secure', { ttlMs: 2_000 });
    await guardedPut(lease, 'fencekit/data/secure', 'ok');
    expect(await c.etcd.get('fencekit/data/secure').string()).toBe('ok');
    await lease.release();
    const leadership = await c.election('secure', { ttlMs: 2_000 }).campaign('me');
    expect(leadership.isLeader).toBe(true);
    await leadership.resign();
  });

  it('a wrong password is a typed error, not a hang, and shows neither password', async () => {
    const wrong = 'fencekit-wrong-password';
    const c = client({
      hosts: [server.endpoint],
      credentials: { rootCertificate: server.ca },
      auth: { username: 'root', password: wrong },
    });
    const error = await c.acquire('secure', { ttlMs: 2_000, waitMs: 5_000 }).catch((e: unknown) => e);
    expect(isFencekitError(error, 'backend-unavailable'), String(error)).toBe(true);
    assertNoSecret(error, [wrong, password], 'a wrong password over TLS');
  });

  it('without credentials the request is refused with a typed error', async () => {
    const c = client({ hosts: [server.endpoint], credentials: { rootCertificate: server.ca } });
    const error = await c.acquire('secure', { ttlMs: 2_000, waitMs: 5_000 }).catch((e: unknown) => e);
    expect(isFencekitError(error, 'backend-unavailable'), String(error)).toBe(true);
  });
});

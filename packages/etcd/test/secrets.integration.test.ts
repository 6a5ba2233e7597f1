import { randomBytes } from 'node:crypto';
import { type Cluster, startCluster } from '@fencekit/cluster';
import { InvalidArgumentError, isFencekitError } from '@fencekit/core';
import { assertNoSecret } from '@fencekit/core/testing';
import { EtcdClient, type EtcdClientOptions } from '@fencekit/etcd';
import { Etcd3 } from 'etcd3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const secret = `secret-${randomBytes(12).toString('hex')}`;

/** The InvalidArgumentError `new EtcdClient(options)` throws (failing the test if it does not). */
function refusal(options: EtcdClientOptions): InvalidArgumentError {
  let client: EtcdClient | undefined;
  try {
    client = new EtcdClient(options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return error as InvalidArgumentError;
  }
  void client.close();
  return expect.fail('the options were accepted');
}

describe('options that carry a password', () => {
  it('refuses user:password@ in host URLs, and the error does not show the password', () => {
    for (const hosts of [
      [`http://root:${secret}@127.0.0.1:2379`],
      `root:${secret}@127.0.0.1:2379`,
      ['127.0.0.1:2379', `https://root:${secret}@127.0.0.1:2380`],
    ]) {
      const error = refusal({ hosts });
      expect(error.argument).toBe('hosts');
      assertNoSecret(error, [secret], `hosts ${JSON.stringify(hosts).replaceAll(secret, '…')}`);
    }
  });

  it('keeps a bad host list redacted in the error', () => {
    const error = refusal({ hosts: ['', `http://root:${secret}@127.0.0.1:2379`] });
    assertNoSecret(error, [secret], 'a bad host list');
  });

  it('refuses auth without TLS unless allowInsecureAuth is true, without showing the password', () => {
    const auth = { username: 'root', password: secret };
    const error = refusal({ hosts: ['127.0.0.1:2379'], auth });
    expect(error.argument).toBe('auth');
    expect(error.message).toContain('allowInsecureAuth');
    assertNoSecret(error, [secret], 'auth over plaintext');
    expect(refusal({ hosts: ['127.0.0.1:2379'], auth, allowInsecureAuth: 'yes' as never }).argument).toBe(
      'allowInsecureAuth',
    );
    expect(refusal({ hosts: ['127.0.0.1:2379'], auth: { username: 'root' } as never }).argument).toBe('auth');
  });
});

describe('plaintext etcd with authentication on, allowInsecureAuth: true', () => {
  const password = `right-${randomBytes(12).toString('hex')}`;
  let cluster: Cluster;
  const clients: EtcdClient[] = [];
  const client = (options: Partial<EtcdClientOptions>): EtcdClient => {
    const c = new EtcdClient({ hosts: [...cluster.endpoints], callTimeoutMs: 2_000, ...options });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    cluster = await startCluster({ topology: 'etcd', nodes: 1 });
    const admin = new Etcd3({ hosts: cluster.endpoints.map((e) => `http://${e}`) });
    try {
      await admin
        .role('root')
        .create()
        .catch(() => undefined);
      await admin.user('root').create(password);
      await admin.user('root').addRole('root');
      await admin.auth.authEnable();
    } finally {
      admin.close();
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.allSettled(clients.splice(0).map((c) => c.close()));
    await cluster?.close();
  });

  it('locks with the right password', async () => {
    const c = client({ auth: { username: 'root', password }, allowInsecureAuth: true });
    const lease = await c.acquire('plaintext-auth', { ttlMs: 2_000, waitMs: 5_000 });
    await lease.release();
  });

  it('a wrong password is a typed error that shows neither password', async () => {
    const c = client({ auth: { username: 'root', password: secret }, allowInsecureAuth: true });
    const error = await c.acquire('plaintext-auth', { ttlMs: 2_000, waitMs: 5_000 }).catch((e: unknown) => e);
    expect(isFencekitError(error, 'backend-unavailable'), String(error)).toBe(true);
    assertNoSecret(error, [secret, password], 'a wrong password over plaintext');
  });
});

import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackendUnavailableError } from '@fencekit/core';
import { RedisLockClient } from '@fencekit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { redisEndpoint } from './support/endpoint.js';
import { untilQueued } from './support/queue.js';
import { type LocalRedis, startRedis } from './support/redis-server.js';

const endpoint = redisEndpoint();

describe('ACL user and password', () => {
  const user = `fencekit-test-${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  let admin: Redis;

  beforeAll(async () => {
    admin = new Redis(`redis://${endpoint}`);
    // The user may touch only fencekit's keys and channels: proof that nothing else is written.
    await admin.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~fencekit:*', '&fencekit:*', '+@all');
  });
  afterAll(async () => {
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });

  it('locks with an ACL user restricted to the fencekit: prefix', async () => {
    const [host, port] = endpoint.split(':');
    const client = new RedisLockClient({
      connection: { host, port: Number(port), username: user, password },
    });
    try {
      const resource = `acl-${randomUUID()}`;
      const lease = await client.acquire(resource, { ttlMs: 5_000 });
      // A waiter goes through the queue and the pub/sub wake-up, which the ACL must allow too.
      const waiting = client.acquire(resource, { ttlMs: 5_000, waitMs: 5_000 });
      await lease.release();
      await (await waiting).release();
    } finally {
      await client.close();
    }
  });

  it('fails with a typed error when the password is wrong', async () => {
    const [host, port] = endpoint.split(':');
    const client = new RedisLockClient({
      connection: { host, port: Number(port), username: user, password: 'wrong', maxRetriesPerRequest: 0 },
    });
    try {
      await expect(client.tryAcquire(`acl-${randomUUID()}`, { ttlMs: 1_000 })).rejects.toBeInstanceOf(
        BackendUnavailableError,
      );
    } finally {
      await client.close();
    }
  });
});

describe('an ioredis instance owned by the caller', () => {
  it('is used as given and left open by close()', async () => {
    const redis = new Redis(`redis://${endpoint}`);
    try {
      const client = new RedisLockClient({ connection: redis });
      const resource = `instance-${randomUUID()}`;
      const lease = await client.acquire(resource, { ttlMs: 5_000 });
      expect(await redis.get(`fencekit:{${resource}}:lock`)).toBe(lease.owner);
      await client.close();
      // close() released the lease it still held and left the caller's connection alone.
      expect(await redis.exists(`fencekit:{${resource}}:lock`)).toBe(0);
      expect(redis.status).toBe('ready');
    } finally {
      await redis.quit();
    }
  });
});

describe('WAIT for replicas after a grant', () => {
  let primary: LocalRedis;
  let replica: LocalRedis;

  beforeAll(async () => {
    primary = await startRedis();
    replica = await startRedis(['--replicaof', '127.0.0.1', String(primary.port)]);
    const probe = new Redis(`redis://${primary.endpoint}`);
    try {
      // Wait (bounded) until the replica has attached, so WAIT has someone to count.
      for (let i = 0; i < 200 && Number(await probe.wait(1, 50)) < 1; i++) {}
    } finally {
      probe.disconnect();
    }
  });
  afterAll(async () => {
    await replica?.stop();
    await primary?.stop();
  });

  it('grants once a replica acknowledged, and gives the grant back when too few did', async () => {
    const acknowledged = new RedisLockClient({
      connection: `redis://${primary.endpoint}`,
      replicas: { count: 1, timeoutMs: 2_000 },
    });
    const tooMany = new RedisLockClient({
      connection: `redis://${primary.endpoint}`,
      replicas: { count: 2, timeoutMs: 100 },
    });
    try {
      const resource = `replicated-${randomUUID()}`;
      const lease = await acknowledged.acquire(resource, { ttlMs: 5_000 });
      await lease.release();
      const failure = await tooMany.acquire(resource, { ttlMs: 5_000 }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(BackendUnavailableError);
      expect((failure as Error).message).toMatch(/1 of 2 replicas/);
      // The unconfirmed grant was given back.
      const next = await acknowledged.tryAcquire(resource, { ttlMs: 1_000 });
      expect(next).not.toBeNull();
      await next?.release();
    } finally {
      await acknowledged.close();
      await tooMany.close();
    }
  });

  it('waits for the replica after a grant a release handed over too', async () => {
    const holder = new RedisLockClient({ connection: `redis://${primary.endpoint}` });
    const waiter = new RedisLockClient({
      connection: `redis://${primary.endpoint}`,
      replicas: { count: 1, timeoutMs: 300 },
      // No heartbeat write during the test: the waiter's last write stays its queue entry.
      waiterTtlMs: 30_000,
    });
    const resource = `handed-${randomUUID()}`;
    try {
      const lease = await holder.acquire(resource, { ttlMs: 5_000 });
      const waiting = waiter.acquire(resource, { ttlMs: 5_000, waitMs: 3_000 }).catch((e: unknown) => e);
      await untilQueued(primary.endpoint, resource, 1);
      // The replica acknowledges once a second: after this, it has acknowledged the queue entry.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // The replica stops acknowledging; the release then grants the lock to the waiter. WAIT on
      // the waiter's own connection would cover only its own writes (its queue entry, long
      // replicated), so it must re-arm the grant itself and wait for that.
      process.kill(replica.pid, 'SIGSTOP');
      try {
        await lease.release();
        const failure = await waiting;
        expect(failure).toBeInstanceOf(BackendUnavailableError);
        expect((failure as Error).message).toMatch(/0 of 1 replicas/);
      } finally {
        process.kill(replica.pid, 'SIGCONT');
      }
    } finally {
      await holder.close();
      await waiter.close();
    }
  });
});

describe('TLS', () => {
  let server: LocalRedis;
  let certDir: string;
  let ca: Buffer;

  beforeAll(async () => {
    // A self-signed certificate for 127.0.0.1, made for this run (no key material in the repo).
    certDir = await mkdtemp(join(tmpdir(), 'fencekit-tls-'));
    const certFile = join(certDir, 'cert.pem');
    const keyFile = join(certDir, 'key.pem');
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    ca = await readFile(certFile);
    server = await startRedis([], { certFile, keyFile });
  });
  afterAll(async () => {
    await server?.stop();
    if (certDir) await rm(certDir, { recursive: true, force: true });
  });

  it('locks, fences and wakes a waiter over TLS', async () => {
    const client = new RedisLockClient({ connection: { host: '127.0.0.1', port: server.port, tls: { ca } } });
    try {
      const resource = `tls-${randomUUID()}`;
      const first = await client.acquire(resource, { ttlMs: 5_000 });
      // The waiter is woken through the pub/sub connection, a duplicate that must speak TLS too.
      const waiting = client.acquire(resource, { ttlMs: 5_000, waitMs: 5_000 });
      await first.release();
      const second = await waiting;
      expect(BigInt(second.fence)).toBeGreaterThan(BigInt(first.fence));
      await second.release();
    } finally {
      await client.close();
    }
  });

  it('fails with a typed error naming the cause when the certificate is not trusted', async () => {
    // No CA given: the self-signed certificate is refused by the client.
    const client = new RedisLockClient({
      connection: { host: '127.0.0.1', port: server.port, tls: {}, maxRetriesPerRequest: 0 },
    });
    try {
      const failure = await client
        .tryAcquire(`tls-${randomUUID()}`, { ttlMs: 1_000 })
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(BackendUnavailableError);
      expect((failure as Error).message).toMatch(/certificate/i);
    } finally {
      await client.close();
    }
  });
});

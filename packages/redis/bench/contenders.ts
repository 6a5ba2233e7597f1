import { randomUUID } from 'node:crypto';
import { RedisLockClient, RedisSharedLockClient } from '@fencekit/redis';
import { RedlockClient } from '@fencekit/redlock';
import { type Lock as SesameLock, Redlock as SesameRedlock } from '@sesamecare-oss/redlock';
import { Redis } from 'ioredis';
import { Mutex, Semaphore } from 'redis-semaphore';
import NodeRedlock from 'redlock';

/** Gives the lock back. */
export type Unlock = () => Promise<void>;

/** One client of one library: its own connections, blocking acquire with the library's own waiting. */
export interface Locker {
  lock(resource: string): Promise<Unlock>;
  close(): Promise<void>;
}

export interface Contender {
  readonly name: string;
  /** False for the raw floor, which has no way to wait for a held lock. */
  readonly blocking: boolean;
  open(endpoints: readonly string[]): Locker;
}

export const TTL_MS = 10_000;
const WAIT_MS = 30_000;

const url = (endpoint: string): string => `redis://${endpoint}`;

export function connect(endpoint: string): Redis {
  const redis = new Redis(url(endpoint));
  redis.on('error', () => undefined);
  return redis;
}

const compareAndDelete = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/** The floor: SET NX PX and a compare-and-delete script by SHA, nothing else. */
const rawFloor: Contender = {
  name: 'raw SET NX PX + Lua release',
  blocking: false,
  open([endpoint]) {
    const redis = connect(endpoint as string);
    redis.defineCommand('benchRelease', { numberOfKeys: 1, lua: compareAndDelete });
    const release = (
      redis as unknown as { benchRelease(key: string, owner: string): Promise<number> }
    ).benchRelease.bind(redis);
    return {
      async lock(resource) {
        const owner = randomUUID();
        const ok = await redis.set(resource, owner, 'PX', TTL_MS, 'NX');
        if (ok !== 'OK') throw new Error(`raw floor: ${resource} is held`);
        return async () => {
          await release(resource, owner);
        };
      },
      async close() {
        await redis.quit();
      },
    };
  },
};

/** Resolves once `count` of `requests` succeeded (a Redlock quorum), or fails once that cannot happen. */
function firstOf(requests: Promise<unknown>[], count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let ok = 0;
    let failed = 0;
    for (const request of requests) {
      request.then(
        () => {
          ok += 1;
          if (ok === count) resolve();
        },
        (error: unknown) => {
          failed += 1;
          if (failed > requests.length - count) reject(error);
        },
      );
    }
  });
}

/**
 * What no Redlock can go below on the same nodes, to bound the "2× node-redlock" target: on every
 * node at once, SET NX PX to acquire and the compare-and-delete script to release, each returning at
 * the quorum's answer (as node-redlock and ours do); no queue, no retry, no validity check, no lease.
 */
function minimalRedlock(nodes: number): Contender {
  return {
    name: `minimal Redlock: SET NX PX + Lua release at quorum (${nodes} nodes)`,
    blocking: false,
    open(endpoints) {
      const clients = endpoints.slice(0, nodes).map(connect);
      for (const c of clients) c.defineCommand('benchRelease', { numberOfKeys: 1, lua: compareAndDelete });
      const quorum = Math.floor(nodes / 2) + 1;
      return {
        async lock(resource) {
          const owner = randomUUID();
          await firstOf(
            clients.map(async (c) => {
              if ((await c.set(resource, owner, 'PX', TTL_MS, 'NX')) !== 'OK') throw new Error('held');
            }),
            quorum,
          );
          return () =>
            firstOf(
              clients.map((c) =>
                (c as unknown as { benchRelease(key: string, owner: string): Promise<number> }).benchRelease(
                  resource,
                  owner,
                ),
              ),
              quorum,
            );
        },
        async close() {
          await Promise.all(clients.map((c) => c.quit()));
        },
      };
    },
  };
}

const fencekitRedis: Contender = {
  name: '@fencekit/redis',
  blocking: true,
  open([endpoint]) {
    const client = new RedisLockClient({ connection: url(endpoint as string) });
    return {
      async lock(resource) {
        const lease = await client.acquire(resource, { ttlMs: TTL_MS, waitMs: WAIT_MS });
        return () => lease.release();
      },
      close: () => client.close(),
    };
  },
};

function fencekitRedlock(nodes: number): Contender {
  return {
    name: `@fencekit/redlock (${nodes} node${nodes > 1 ? 's' : ''})`,
    blocking: true,
    open(endpoints) {
      const client = new RedlockClient({ nodes: endpoints.slice(0, nodes).map(url) });
      return {
        async lock(resource) {
          const lease = await client.acquire(resource, { ttlMs: TTL_MS, waitMs: WAIT_MS });
          return () => lease.release();
        },
        close: () => client.close(),
      };
    },
  };
}

function nodeRedlock(nodes: number): Contender {
  return {
    name: `redlock@5.0.0-beta.2 (${nodes} node${nodes > 1 ? 's' : ''})`,
    blocking: true,
    open(endpoints) {
      const clients = endpoints.slice(0, nodes).map(connect);
      // Library defaults (retryDelay 200 ms, jitter 200 ms) but no retry limit, so waits do not fail.
      const redlock = new NodeRedlock(clients, { retryCount: -1 });
      redlock.on('error', () => undefined);
      return {
        async lock(resource) {
          const lock = await redlock.acquire([resource], TTL_MS);
          return async () => {
            await lock.release();
          };
        },
        async close() {
          await Promise.all(clients.map((c) => c.quit()));
        },
      };
    },
  };
}

const sesameRedlock: Contender = {
  name: '@sesamecare-oss/redlock 1.4.0',
  blocking: true,
  open([endpoint]) {
    const client = connect(endpoint as string);
    const redlock = new SesameRedlock([client], { retryCount: -1 });
    redlock.on('error', () => undefined);
    return {
      async lock(resource) {
        const lock: SesameLock = await redlock.acquire([resource], TTL_MS);
        return async () => {
          await lock.release();
        };
      },
      async close() {
        await client.quit();
      },
    };
  },
};

const redisSemaphore: Contender = {
  name: 'redis-semaphore 5.8.0 (Mutex)',
  blocking: true,
  open([endpoint]) {
    const client = connect(endpoint as string);
    return {
      async lock(resource) {
        // Library defaults (retryInterval 10 ms); no auto-refresh, as with the others.
        const mutex = new Mutex(client, resource, {
          lockTimeout: TTL_MS,
          acquireTimeout: WAIT_MS,
          refreshInterval: 0,
        });
        await mutex.acquire();
        return () => mutex.release();
      },
      async close() {
        await client.quit();
      },
    };
  },
};

/** A client of fencekit's semaphore of `permits` (this bench's 1-permit contender and bench:semaphore's). */
export function openFencekitSemaphore(endpoint: string, permits: number): Locker {
  const client = new RedisSharedLockClient({ connection: url(endpoint) });
  return {
    async lock(resource) {
      const lease = await client.semaphore(resource, { permits }).acquire({ ttlMs: TTL_MS, waitMs: WAIT_MS });
      return () => lease.release();
    },
    close: () => client.close(),
  };
}

/** A client of redis-semaphore's `Semaphore` of `permits`, library defaults (retryInterval 10 ms), no auto-refresh. */
export function openRedisSemaphore(endpoint: string, permits: number): Locker {
  const client = connect(endpoint);
  return {
    async lock(resource) {
      const semaphore = new Semaphore(client, resource, permits, {
        lockTimeout: TTL_MS,
        acquireTimeout: WAIT_MS,
        refreshInterval: 0,
      });
      await semaphore.acquire();
      return () => semaphore.release();
    },
    async close() {
      await client.quit();
    },
  };
}

/**
 * Issue #19: fencekit's semaphore with one permit beside redis-semaphore's `Semaphore` of one: in the
 * uncontended race (against the raw floor) and in the contended ring, where one permit makes it a mutex.
 */
const fencekitSemaphore: Contender = {
  name: 'fencekit semaphore (RedisSharedLockClient, 1 permit)',
  blocking: true,
  open: ([endpoint]) => openFencekitSemaphore(endpoint as string, 1),
};

const redisSemaphoreSemaphore: Contender = {
  name: 'redis-semaphore 5.8.0 (Semaphore, 1 permit)',
  blocking: true,
  open: ([endpoint]) => openRedisSemaphore(endpoint as string, 1),
};

export const contenders: readonly Contender[] = [
  rawFloor,
  fencekitRedis,
  fencekitRedlock(1),
  fencekitRedlock(5),
  nodeRedlock(1),
  nodeRedlock(5),
  minimalRedlock(5),
  sesameRedlock,
  redisSemaphore,
  fencekitSemaphore,
  redisSemaphoreSemaphore,
];

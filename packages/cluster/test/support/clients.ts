import { createRequire } from 'node:module';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { Redis } from 'ioredis';

/** Real clients for the three servers, each with short timeouts so a fault shows as an error, not a hang. */

export function redisClient(endpoint: string, options: { commandTimeout?: number } = {}): Redis {
  const [host, port] = endpoint.split(':');
  const redis = new Redis({
    host,
    port: Number(port),
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    commandTimeout: options.commandTimeout ?? 5000,
    retryStrategy: () => 100,
  });
  redis.on('error', () => undefined); // faults make connection errors expected; commands still reject
  return redis;
}

/** A Redis client for the length of `body`, disconnected however `body` ends. */
export async function withRedis<T>(
  endpoint: string,
  options: { commandTimeout?: number },
  body: (redis: Redis) => Promise<T>,
): Promise<T> {
  const redis = redisClient(endpoint, options);
  try {
    return await body(redis);
  } finally {
    redis.disconnect();
  }
}

/**
 * Every unary call gets a deadline, so a cut-off member shows as an error rather than a hang. No retries and no
 * circuit breaker: a test sees each call's own outcome, and a healed member answers the very next call.
 */
export function etcdClient(endpoints: readonly string[], deadlineMs = 5000): Etcd3 {
  return new Etcd3({
    hosts: endpoints.map((e) => `http://${e}`),
    dialTimeout: 2000,
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + deadlineMs }),
    faultHandling: { host: () => noop, global: noop },
  });
}

interface ZkStat {
  readonly version: number;
}
interface ZkClient {
  connect(): void;
  close(): void;
  once(event: 'connected', listener: () => void): void;
  create(path: string, data: Buffer, callback: (error: Error | null, path: string) => void): void;
  create(
    path: string,
    data: Buffer,
    mode: number,
    callback: (error: Error | null, path: string) => void,
  ): void;
  exists(path: string, callback: (error: Error | null, stat: ZkStat | null) => void): void;
  getData(path: string, callback: (error: Error | null, data: Buffer, stat: ZkStat) => void): void;
}
interface ZkModule {
  CreateMode: { EPHEMERAL: number };
  createClient(connectionString: string, options?: { sessionTimeout?: number; retries?: number }): ZkClient;
}

const zookeeper = createRequire(import.meta.url)('node-zookeeper-client') as ZkModule;

/** A connected ZooKeeper client with create/get as promises; rejects if not connected within `timeoutMs`. */
export async function zookeeperClient(
  endpoints: readonly string[],
  timeoutMs = 15_000,
  sessionTimeout = 10_000,
) {
  const client = zookeeper.createClient(endpoints.join(','), { sessionTimeout, retries: 1 });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`ZooKeeper client not connected within ${timeoutMs} ms`));
    }, timeoutMs);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  return {
    create: (path: string, data: string) =>
      new Promise<string>((resolve, reject) =>
        client.create(path, Buffer.from(data), (error, created) =>
          error ? reject(error) : resolve(created),
        ),
      ),
    createEphemeral: (path: string) =>
      new Promise<string>((resolve, reject) =>
        client.create(path, Buffer.alloc(0), zookeeper.CreateMode.EPHEMERAL, (error, created) =>
          error ? reject(error) : resolve(created),
        ),
      ),
    exists: (path: string) =>
      new Promise<boolean>((resolve, reject) =>
        client.exists(path, (error, stat) => (error ? reject(error) : resolve(stat !== null))),
      ),
    get: (path: string) =>
      new Promise<string>((resolve, reject) =>
        client.getData(path, (error, data) => (error ? reject(error) : resolve(data.toString()))),
      ),
    close: () => client.close(),
  };
}

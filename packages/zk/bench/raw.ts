/// <reference path="../src/node-zookeeper-client.d.ts" />
import zookeeper, { type Client, type ZkException } from 'node-zookeeper-client';

/**
 * The bare library, as the floor uses it: promises over node-zookeeper-client's callbacks and nothing
 * else (no timeouts, no signals, no session bookkeeping).
 */
export function connectRaw(servers: string, timeoutMs = 30_000): Promise<Client> {
  return new Promise((resolve, reject) => {
    const client = zookeeper.createClient(servers, { sessionTimeout: 10_000, retries: 0 });
    const timer = setTimeout(() => {
      client.close();
      reject(new Error(`no ZooKeeper session with ${servers} within ${timeoutMs} ms`));
    }, timeoutMs);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve(client);
    });
    client.connect();
  });
}

export function settle<T>(call: (done: (error: ZkException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value))));
}

export const EPHEMERAL = 1;
export const EPHEMERAL_SEQUENTIAL = 3;

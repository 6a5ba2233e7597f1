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

/**
 * Closes a bare client for good and waits (bounded) until it has: node-zookeeper-client would
 * otherwise keep trying to reconnect once the ensemble is gone, and keep the process alive.
 */
export function closeRaw(client: Client, timeoutMs = 2_000): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(timer);
      const internals = (
        client as unknown as { connectionManager: { connect(): void; socket?: { destroy(): void } } }
      ).connectionManager;
      internals.connect = () => {};
      internals.socket?.destroy();
      client.removeAllListeners();
      resolve();
    };
    const timer = setTimeout(finish, timeoutMs);
    client.once('disconnected', finish);
    client.close();
  });
}

export function settle<T>(call: (done: (error: ZkException | null, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => call((error, value) => (error ? reject(error) : resolve(value))));
}

export const EPHEMERAL = 1;
export const EPHEMERAL_SEQUENTIAL = 3;

/**
 * The part of node-zookeeper-client 1.1.3 (which ships no types) that fencekit uses. Long fields of
 * a Stat (czxid, pzxid…) arrive as 8-byte big-endian Buffers.
 */
declare module 'node-zookeeper-client' {
  import type { EventEmitter } from 'node:events';

  export interface Stat {
    czxid: Buffer;
    mzxid: Buffer;
    pzxid: Buffer;
    ephemeralOwner: Buffer;
    version: number;
    cversion: number;
    numChildren: number;
  }

  export interface WatcherEvent {
    type: number;
    name: string;
    path: string;
  }

  export interface ZkException extends Error {
    getCode(): number;
    code: number;
    name: string;
  }

  export type Watcher = (event: WatcherEvent) => void;

  export interface Transaction {
    create(path: string, data: Buffer | null, mode: number): Transaction;
    check(path: string, version?: number): Transaction;
    setData(path: string, data: Buffer | null, version?: number): Transaction;
    remove(path: string, version?: number): Transaction;
    commit(
      callback: (
        error: ZkException | null,
        results?: { type: number; err?: number; path?: string; stat?: Stat }[],
      ) => void,
    ): void;
  }

  export interface State {
    name: string;
    code: number;
  }

  export interface Client extends EventEmitter {
    connect(): void;
    close(): void;
    getState(): State;
    getSessionTimeout(): number;
    getSessionId(): Buffer;
    create(
      path: string,
      data: Buffer | null,
      mode: number,
      callback: (error: ZkException | null, path: string) => void,
    ): void;
    remove(path: string, version: number, callback: (error: ZkException | null) => void): void;
    exists(
      path: string,
      watcher: Watcher | undefined,
      callback: (error: ZkException | null, stat: Stat | null) => void,
    ): void;
    getChildren(
      path: string,
      watcher: Watcher | undefined,
      callback: (error: ZkException | null, children: string[], stat: Stat) => void,
    ): void;
    mkdirp(path: string, callback: (error: ZkException | null, path: string) => void): void;
    transaction(): Transaction;
  }

  export interface ClientOptions {
    sessionTimeout?: number;
    spinDelay?: number;
    retries?: number;
  }

  const zookeeper: {
    createClient(connectionString: string, options?: ClientOptions): Client;
    CreateMode: { PERSISTENT: 0; EPHEMERAL: 1; PERSISTENT_SEQUENTIAL: 2; EPHEMERAL_SEQUENTIAL: 3 };
    Event: { NODE_CREATED: 1; NODE_DELETED: 2; NODE_DATA_CHANGED: 3; NODE_CHILDREN_CHANGED: 4 };
    Exception: Record<string, number>;
  };
  export default zookeeper;
}

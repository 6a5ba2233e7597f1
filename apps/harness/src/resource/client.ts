import { LineClient } from '../rpc/line-socket.js';

/** A client process's connection to the resource process. */
export class ResourceClient {
  readonly #connection: LineClient;
  readonly #timeoutMs: number;

  private constructor(connection: LineClient, timeoutMs: number) {
    this.#connection = connection;
    this.#timeoutMs = timeoutMs;
  }

  static async connect(socketPath: string, timeoutMs: number): Promise<ResourceClient> {
    return new ResourceClient(await LineClient.connect(socketPath), timeoutMs);
  }

  read(client: number, fence?: string): Promise<{ stock: number; version: number }> {
    return this.#call({ op: 'read', client, fence });
  }

  write(client: number, stock: number, fence?: string): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'write', client, stock, fence });
  }

  compareAndSet(client: number, stock: number, version: number): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'cas', client, stock, version });
  }

  enter(client: number, fence?: string): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'enter', client, fence });
  }

  leave(client: number, fence?: string): Promise<unknown> {
    return this.#call({ op: 'leave', client, fence });
  }

  claim(client: number, term: string, fence?: string): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'claim', client, term, fence });
  }

  run(client: number, tick: number, fence?: string): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'run', client, tick, fence });
  }

  /** A semaphore holder enters the pool with its `permits` (of `limit`); `inside` = permits held after it. */
  semaphoreEnter(
    client: number,
    permits: number,
    limit: number,
    fence?: string,
  ): Promise<{ inside: number }> {
    return this.#call({ op: 'sem-enter', client, permits, limit, fence });
  }

  semaphoreLeave(client: number, fence?: string): Promise<unknown> {
    return this.#call({ op: 'sem-leave', client, fence });
  }

  readWriteEnter(client: number, mode: 'read' | 'write', fence?: string): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'rw-enter', client, mode, fence });
  }

  /** The register's value (the grant that wrote it) and the fence it was written with. */
  readWriteRead(
    client: number,
    fence?: string,
  ): Promise<{ accepted: boolean; value: string | null; writtenFence: string | null }> {
    return this.#call({ op: 'rw-read', client, fence });
  }

  readWriteWrite(client: number, value: string, fence?: string): Promise<{ accepted: boolean }> {
    return this.#call({ op: 'rw-write', client, value, fence });
  }

  readWriteLeave(client: number, fence?: string): Promise<unknown> {
    return this.#call({ op: 'rw-leave', client, fence });
  }

  close(): void {
    this.#connection.close();
  }

  #call<T>(request: Record<string, unknown>): Promise<T> {
    return this.#connection.call<T>(request, this.#timeoutMs);
  }
}

import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * Newline-delimited JSON request/response over a unix socket: the tiny protocol between clients and
 * the resource, and between clients and the in-memory lock server. One JSON object per line; each
 * request carries an `id` that its response echoes, so requests may be pipelined.
 */

export type Handler = (request: Record<string, unknown>) => unknown | Promise<unknown>;

export class RpcTimeoutError extends Error {
  override readonly name = 'RpcTimeoutError';
  constructor(
    readonly op: string,
    readonly timeoutMs: number,
  ) {
    super(`No answer to ${op} within ${timeoutMs} ms: it may or may not have taken effect`);
  }
}

export class RpcRemoteError extends Error {
  override readonly name = 'RpcRemoteError';
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly details: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** Serves `handler` on `path`; errors thrown by the handler travel back as `{error, code}`. */
export async function serveLines(path: string, handler: Handler): Promise<Server> {
  const server = createServer((socket) => {
    let buffered = '';
    socket.setEncoding('utf8');
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: string) => {
      buffered += chunk;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (line.length > 0) void answer(socket, line, handler);
        newline = buffered.indexOf('\n');
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return server;
}

async function answer(socket: Socket, line: string, handler: Handler): Promise<void> {
  let id: unknown;
  let reply: Record<string, unknown>;
  try {
    const request = JSON.parse(line) as Record<string, unknown>;
    id = request.id;
    const result = await handler(request);
    reply = { id, result };
  } catch (error) {
    const e = error as Error & { code?: unknown };
    reply = { id, error: e.message ?? String(error), code: typeof e.code === 'string' ? e.code : undefined };
    for (const key of ['fence', 'highestSeen', 'resource', 'owner'] as const) {
      const v = (e as unknown as Record<string, unknown>)[key];
      if (v !== undefined) reply[key] = typeof v === 'bigint' ? v.toString() : v;
    }
  }
  if (!socket.destroyed) socket.write(`${JSON.stringify(reply)}\n`);
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** A connection that pipelines requests and times each one out on its own. */
export class LineClient {
  #socket: Socket;
  #buffered = '';
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #closed = false;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.#onData(chunk));
    socket.on('close', () => this.#failAll(new Error('connection closed')));
    socket.on('error', (error) => this.#failAll(error));
  }

  static connect(path: string, timeoutMs = 5_000): Promise<LineClient> {
    return new Promise((resolve, reject) => {
      const socket = createConnection(path);
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new RpcTimeoutError(`connect to ${path}`, timeoutMs));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new LineClient(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  call<T = unknown>(request: Record<string, unknown>, timeoutMs: number): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('connection closed'));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new RpcTimeoutError(String(request.op), timeoutMs));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      this.#socket.write(`${JSON.stringify({ ...request, id })}\n`);
    });
  }

  close(): void {
    this.#closed = true;
    this.#socket.destroy();
    this.#failAll(new Error('connection closed'));
  }

  #onData(chunk: string): void {
    this.#buffered += chunk;
    let newline = this.#buffered.indexOf('\n');
    while (newline >= 0) {
      const line = this.#buffered.slice(0, newline);
      this.#buffered = this.#buffered.slice(newline + 1);
      newline = this.#buffered.indexOf('\n');
      if (line.length === 0) continue;
      const reply = JSON.parse(line) as Record<string, unknown>;
      const pending = this.#pending.get(reply.id as number);
      if (!pending) continue;
      this.#pending.delete(reply.id as number);
      clearTimeout(pending.timer);
      if (typeof reply.error === 'string') {
        pending.reject(new RpcRemoteError(reply.error, reply.code as string | undefined, reply));
      } else pending.resolve(reply.result);
    }
  }

  #failAll(error: Error): void {
    this.#closed = true;
    for (const [id, pending] of this.#pending) {
      clearTimeout(pending.timer);
      pending.reject(error);
      this.#pending.delete(id);
    }
  }
}

import type { RedisClient } from './deployment.js';
import { permitAcquireScript, permitExtendScript, permitReleaseScript } from './permit-scripts.lua.js';
import { type CommandDeadlines, callScript, LuaScript } from './script-call.js';

/** Where one semaphore's or read-write lock's state lives (see `permit-scripts.lua.ts`). */
export interface PermitKeys {
  readonly holders: string;
  readonly expiry: string;
  readonly fence: string;
  readonly queue: string;
  readonly waiters: string;
  readonly tickets: string;
}

/**
 * Keys of `name` for one kind of primitive. Every key carries the hash tag `{name}` (one slot in a
 * Cluster, as the mutex's), and the kind word keeps a semaphore, a read-write lock and a mutex of one
 * name apart: the suffixes are fixed words without `}:`, so no two names share a key.
 */
export function permitKeys(prefix: string, kind: 'semaphore' | 'rwlock', name: string): PermitKeys {
  const base = `${prefix}{${name}}:${kind}:`;
  return {
    holders: `${base}holders`,
    expiry: `${base}expiry`,
    fence: `${base}fence`,
    queue: `${base}queue`,
    waiters: `${base}waiters`,
    tickets: `${base}tickets`,
  };
}

function keyList(keys: PermitKeys): string[] {
  return [keys.holders, keys.expiry, keys.fence, keys.queue, keys.waiters, keys.tickets];
}

export type PermitReply =
  | { readonly kind: 'granted'; readonly fence: string }
  | { readonly kind: 'refused'; readonly retryMs: number; readonly fenceSeen: string }
  /** The name is in use with another limit (`limit`, as stored). */
  | { readonly kind: 'mismatch'; readonly limit: string };

export interface PermitAttempt {
  readonly owner: string;
  readonly weight: number;
  readonly limit: number;
  readonly ttlMs: number;
  readonly mode: 'try' | 'wait';
  readonly waiterTtlMs: number;
  /** Redis Cluster: the channel is sharded (SPUBLISH). */
  readonly sharded: boolean;
  readonly channel: string;
}

export type RawPermitReply = number | string | [number, string | number, string?];

export function permitReply(reply: RawPermitReply): PermitReply {
  // The fast path's grant is the fence alone (see the script).
  if (!Array.isArray(reply)) return { kind: 'granted', fence: String(reply) };
  if (reply[0] === 1) return { kind: 'granted', fence: String(reply[1]) };
  if (reply[0] === -1) return { kind: 'mismatch', limit: String(reply[1]) };
  return { kind: 'refused', retryMs: Number(reply[1]), fenceSeen: String(reply[2] ?? '0') };
}

const ACQUIRE = new LuaScript(permitAcquireScript, 6);
const RELEASE = new LuaScript(permitReleaseScript, 6);
const EXTEND = new LuaScript(permitExtendScript, 6);

/** The permit scripts on one ioredis connection (EVALSHA, EVAL after NOSCRIPT). */
export class PermitNode {
  constructor(
    readonly redis: RedisClient,
    readonly deadlines: CommandDeadlines | undefined,
  ) {}

  async attempt(keys: PermitKeys, request: PermitAttempt): Promise<PermitReply> {
    return permitReply(await this.attemptRaw(keys, request));
  }

  /**
   * The acquire script's answer as sent: a number or string is the fast path's grant, the fence
   * alone (see `permitReply`); callers on the hot path read that without building a reply.
   */
  attemptRaw(keys: PermitKeys, request: PermitAttempt): Promise<RawPermitReply> {
    return callScript(this.redis, this.deadlines, ACQUIRE, [
      keys.holders,
      keys.expiry,
      keys.fence,
      keys.queue,
      keys.waiters,
      keys.tickets,
      request.owner,
      request.weight,
      String(request.limit),
      request.ttlMs,
      request.mode,
      request.waiterTtlMs,
      request.sharded ? 's' : 'p',
      request.channel,
    ]) as Promise<RawPermitReply>;
  }

  /** 1 released, 0 nothing held; also withdraws a queued waiter. */
  async release(keys: PermitKeys, owner: string, limit: number): Promise<number> {
    return Number(
      await callScript(this.redis, this.deadlines, RELEASE, [
        keys.holders,
        keys.expiry,
        keys.fence,
        keys.queue,
        keys.waiters,
        keys.tickets,
        owner,
        limit,
      ]),
    );
  }

  async extend(keys: PermitKeys, owner: string, ttlMs: number, limit: number): Promise<boolean> {
    const reply = await callScript(this.redis, this.deadlines, EXTEND, [
      ...keyList(keys),
      owner,
      ttlMs,
      limit,
    ]);
    return Number(reply) === 1;
  }
}

import type { RedisClient } from './deployment.js';
import {
  permitAcquireScript,
  permitExtendScript,
  permitFastAcquireScript,
  permitFastReleaseScript,
  permitReleaseScript,
} from './permit-scripts.lua.js';
import { type CommandDeadlines, callScript, LuaScript } from './script-call.js';

/** Where one semaphore's or read-write lock's state lives (see `permit-scripts.lua.ts`). */
export interface PermitKeys {
  readonly holders: string;
  readonly expiry: string;
  readonly fence: string;
  readonly queue: string;
  readonly waiters: string;
  readonly tickets: string;
  /** The key arrays the scripts are sent with, built once per name rather than per call. */
  readonly all: readonly string[];
  readonly fastAcquire: readonly string[];
  readonly fastRelease: readonly string[];
  /**
   * A hint only, never trusted for correctness: this client last found the name held or queued, so
   * its next attempt goes straight to the full script instead of a fast one that would decide nothing
   * (a second round trip). Cleared by the next grant that found nobody holding or waiting.
   */
  busy: boolean;
}

/**
 * Keys of `name` for one kind of primitive. Every key carries the hash tag `{name}` (one slot in a
 * Cluster, as the mutex's), and the kind word keeps a semaphore, a read-write lock and a mutex of one
 * name apart: the suffixes are fixed words without `}:`, so no two names share a key.
 */
export function permitKeys(prefix: string, kind: 'semaphore' | 'rwlock', name: string): PermitKeys {
  const base = `${prefix}{${name}}:${kind}:`;
  const holders = `${base}holders`;
  const expiry = `${base}expiry`;
  const fence = `${base}fence`;
  const queue = `${base}queue`;
  const waiters = `${base}waiters`;
  const tickets = `${base}tickets`;
  return {
    holders,
    expiry,
    fence,
    queue,
    waiters,
    tickets,
    all: [holders, expiry, fence, queue, waiters, tickets],
    fastAcquire: [holders, fence, queue],
    fastRelease: [holders, expiry, queue],
    busy: false,
  };
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
const FAST_ACQUIRE = new LuaScript(permitFastAcquireScript, 3);
const FAST_RELEASE = new LuaScript(permitFastReleaseScript, 3);

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
      ...keys.all,
      request.owner,
      request.weight,
      request.limit,
      request.ttlMs,
      request.mode,
      request.waiterTtlMs,
      request.sharded ? 's' : 'p',
      request.channel,
    ]) as Promise<RawPermitReply>;
  }

  /**
   * The uncontended grant alone (`permitFastAcquireScript`): the fence, or null when the name is
   * held or queued and the full script must decide.
   */
  fastAttempt(
    keys: PermitKeys,
    owner: string,
    weight: number,
    limit: number,
    ttlMs: number,
  ): Promise<number | string | null> {
    return callScript(this.redis, this.deadlines, FAST_ACQUIRE, [
      ...keys.fastAcquire,
      owner,
      weight,
      limit,
      ttlMs,
    ]) as Promise<number | string | null>;
  }

  /** 1 released, 0 nothing held; also withdraws a queued waiter. */
  async release(keys: PermitKeys, owner: string, limit: number): Promise<number> {
    return Number(await callScript(this.redis, this.deadlines, RELEASE, [...keys.all, owner, limit]));
  }

  /**
   * As `release`, by the script that declares three keys when `keys` is not known busy; a queue found
   * there (it cannot hand off) sends the full release after it, which serves it.
   */
  async releaseFast(keys: PermitKeys, owner: string, limit: number): Promise<number> {
    if (!keys.busy) {
      const reply = Number(
        await callScript(this.redis, this.deadlines, FAST_RELEASE, [...keys.fastRelease, owner]),
      );
      if (reply !== -1) return reply;
      keys.busy = true;
    }
    return this.release(keys, owner, limit);
  }

  async extend(keys: PermitKeys, owner: string, ttlMs: number, limit: number): Promise<boolean> {
    const reply = await callScript(this.redis, this.deadlines, EXTEND, [...keys.all, owner, ttlMs, limit]);
    return Number(reply) === 1;
  }
}

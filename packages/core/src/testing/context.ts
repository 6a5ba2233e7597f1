import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Lease, LockClient } from '../contract.js';
import { type FencekitErrorCode, isFencekitError } from '../errors.js';

/** What a backend can promise; a check that needs a capability the backend lacks is skipped. */
export interface ConformanceCapabilities {
  /** Fences strictly increase across all holders of a resource (false for Redlock). */
  safeFences: boolean;
  /** Waiters are granted in arrival order. */
  fair: boolean;
  /**
   * A waiting acquire is woken by the release itself rather than by a poll, so it is granted well
   * within one TTL of the release.
   */
  blocking: boolean;
  /**
   * An un-extended lease ends on the backend within a few TTLs of being granted (false where
   * expiry is bound to a session timeout that the test cannot shorten).
   */
  expiry: boolean;
  /** `close()` leaves no refed timers, sockets or child processes behind. */
  cleanClose: boolean;
}

export const DEFAULT_CAPABILITIES: ConformanceCapabilities = {
  safeFences: true,
  fair: false,
  blocking: true,
  expiry: true,
  cleanClose: true,
};

export interface LockConformanceOptions {
  /** A new, independent client (its own connection / session). Called several times per check. */
  // biome-ignore lint/suspicious/noExplicitAny: the suite works for fenced and unfenced clients alike.
  createClient: () => Promise<LockClient<any>>;
  /** Defaults: safe fences, blocking, expiry and clean close on; fairness off. */
  capabilities?: Partial<ConformanceCapabilities>;
  /** The short TTL used by expiry checks. Default 500 ms. */
  ttlMs?: number;
  /** Multiplies every wait and timeout (use > 1 for slow backends or loaded machines). Default 1. */
  timeScale?: number;
  /** Prefix for the random resource names, so runs sharing a server never collide. */
  resourcePrefix?: string;
  /** Clients in the mutual-exclusion check. Default 10. */
  concurrency?: number;
  /**
   * Handle types that count as leaks after `close()` (from `process.getActiveResourcesInfo()`).
   * Default: timers, TCP/pipe/UDP sockets, child processes, DNS and TLS wraps.
   */
  leakTypes?: readonly string[];
}

/** What one check gets: clients closed for it at the end, fresh resource names and scaled times. */
export interface CheckContext {
  readonly capabilities: ConformanceCapabilities;
  readonly ttlMs: number;
  readonly timeScale: number;
  readonly concurrency: number;
  readonly leakTypes: readonly string[];
  // biome-ignore lint/suspicious/noExplicitAny: see LockConformanceOptions.createClient.
  readonly createClient: () => Promise<LockClient<any>>;
  /** A client that is closed after the check (closing twice must be harmless). */
  // biome-ignore lint/suspicious/noExplicitAny: see LockConformanceOptions.createClient.
  client(): Promise<LockClient<any>>;
  /** A resource name no other check or run uses. */
  resource(label?: string): string;
  /** `ms` × timeScale. */
  scaled(ms: number): number;
}

export const DEFAULT_LEAK_TYPES = [
  'Timeout',
  'TCPSocketWrap',
  'TCPServerWrap',
  'TCPWRAP',
  'TCPWrap',
  'PipeWrap',
  'PipeConnectWrap',
  'UDPWrap',
  'ProcessWrap',
  'GetAddrInfoReqWrap',
  'TLSWrap',
  'FSEventWrap',
  'Immediate',
] as const;

/** Runs `body` with a fresh context and closes every client it opened, even when the body throws. */
export async function withCheckContext(
  options: LockConformanceOptions,
  body: (context: CheckContext) => Promise<void>,
): Promise<void> {
  // biome-ignore lint/suspicious/noExplicitAny: see LockConformanceOptions.createClient.
  const opened: LockClient<any>[] = [];
  const timeScale = options.timeScale ?? 1;
  const prefix = options.resourcePrefix ?? 'fencekit-conformance';
  const context: CheckContext = {
    capabilities: { ...DEFAULT_CAPABILITIES, ...options.capabilities },
    ttlMs: options.ttlMs ?? 500,
    timeScale,
    concurrency: options.concurrency ?? 10,
    leakTypes: options.leakTypes ?? DEFAULT_LEAK_TYPES,
    createClient: options.createClient,
    async client() {
      const client = await options.createClient();
      opened.push(client);
      return client;
    },
    resource(label = 'lock') {
      return `${prefix}/${label}/${randomBytes(6).toString('hex')}`;
    },
    scaled(ms) {
      return Math.round(ms * timeScale);
    },
  };
  let bodyError: { error: unknown } | undefined;
  try {
    await body(context);
  } catch (error) {
    bodyError = { error };
  }
  const results = await Promise.allSettled(opened.map((c) => c.close()));
  // The body's own failure says more than a close failing after it, so it wins.
  if (bodyError) throw bodyError.error;
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw new Error('close() rejected after the check', { cause: failed.reason });
}

/**
 * Acquires `resource` with the short TTL. On a loaded machine a grant can lapse before it is handed
 * out, which a correct client reports as `lost` rather than returning a dead lease; retry that (up
 * to 3 attempts) instead of failing a check that is about something else.
 */
export async function acquireShort(
  context: CheckContext,
  // biome-ignore lint/suspicious/noExplicitAny: works for fenced and unfenced clients.
  client: LockClient<any>,
  resource: string,
): Promise<Lease<bigint | undefined>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.acquire(resource, { ttlMs: context.ttlMs, waitMs: context.scaled(5_000) });
    } catch (error) {
      if (attempt >= 3 || !isFencekitError(error, 'lost')) throw error;
    }
  }
}

/** Awaits `action` (a sync throw counts as a rejection) and asserts it fails with a fencekit `code`. */
export async function assertRejectsWithCode(
  action: () => unknown,
  code: FencekitErrorCode,
  what: string,
): Promise<unknown> {
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await action() };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) {
    assert.fail(`${what}: expected a "${code}" error, but it succeeded`);
  }
  const { error } = outcome;
  if (!isFencekitError(error, code)) {
    const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    assert.fail(`${what}: expected a "${code}" error, got ${detail}`);
  }
  return error;
}

/** Resolves when `signal` aborts; fails the check if it has not within `ms`. */
export function waitForAbort(signal: AbortSignal, ms: number, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      reject(new assert.AssertionError({ message: `${what}: signal not aborted within ${ms} ms` }));
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Fails with a clear message instead of hanging when `promise` does not settle within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new assert.AssertionError({ message: `${what}: did not settle within ${ms} ms` })),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Counts `process.getActiveResourcesInfo()` entries of the given types. */
export function countHandles(types: readonly string[]): Map<string, number> {
  const wanted = new Set(types);
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    if (wanted.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/** Types whose count grew from `before` to `after`, as "Type: before → after". */
export function handleGrowth(before: Map<string, number>, after: Map<string, number>): string[] {
  const grown: string[] = [];
  for (const [type, count] of after) {
    const was = before.get(type) ?? 0;
    if (count > was) grown.push(`${type}: ${was} → ${count}`);
  }
  return grown;
}

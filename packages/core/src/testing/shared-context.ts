import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Lease } from '../contract.js';
import type { ReadWriteLockClient, SemaphoreClient } from '../contract-shared.js';
import {
  type ConformanceCapabilities,
  countHandles,
  DEFAULT_CAPABILITIES,
  DEFAULT_LEAK_TYPES,
  delay,
  handleGrowth,
} from './context.js';

/** The capabilities the semaphore and read-write lock checks look at. */
export type SharedCapabilities = Pick<ConformanceCapabilities, 'blocking' | 'expiry' | 'cleanClose'>;

export interface SharedConformanceOptions<C> {
  /** A new, independent client (its own connection / session). Called several times per check. */
  createClient: () => Promise<C>;
  /** Defaults: blocking, expiry and clean close on. */
  capabilities?: Partial<SharedCapabilities>;
  /** The short TTL of expiry checks. Default 500 ms. */
  ttlMs?: number;
  /** Multiplies every wait and timeout. Default 1. */
  timeScale?: number;
  /** Prefix for the random names, so runs sharing a server never collide. */
  resourcePrefix?: string;
  /** Handle types that count as leaks after `close()`. */
  leakTypes?: readonly string[];
}

// biome-ignore lint/suspicious/noExplicitAny: the checks work for fenced and unfenced clients alike.
export type AnySemaphoreClient = SemaphoreClient<any>;
// biome-ignore lint/suspicious/noExplicitAny: as above.
export type AnyReadWriteLockClient = ReadWriteLockClient<any>;

export interface SharedCheckContext<C> {
  readonly capabilities: SharedCapabilities;
  readonly ttlMs: number;
  readonly timeScale: number;
  readonly leakTypes: readonly string[];
  readonly createClient: () => Promise<C>;
  /** A client closed after the check. */
  client(): Promise<C>;
  /** A name no other check or run uses. */
  resource(label?: string): string;
  scaled(ms: number): number;
}

export interface SharedCheck<C> {
  readonly id: string;
  readonly title: string;
  readonly requires?: keyof SharedCapabilities;
  run(context: SharedCheckContext<C>): Promise<void>;
}

/** Runs `body` with a fresh context and closes every client it opened, even when the body throws. */
export async function withSharedContext<C extends { close(): Promise<void> }>(
  options: SharedConformanceOptions<C>,
  body: (context: SharedCheckContext<C>) => Promise<void>,
): Promise<void> {
  const opened: C[] = [];
  const timeScale = options.timeScale ?? 1;
  const prefix = options.resourcePrefix ?? 'fencekit-conformance';
  const context: SharedCheckContext<C> = {
    capabilities: {
      blocking: options.capabilities?.blocking ?? DEFAULT_CAPABILITIES.blocking,
      expiry: options.capabilities?.expiry ?? DEFAULT_CAPABILITIES.expiry,
      cleanClose: options.capabilities?.cleanClose ?? DEFAULT_CAPABILITIES.cleanClose,
    },
    ttlMs: options.ttlMs ?? 500,
    timeScale,
    leakTypes: options.leakTypes ?? DEFAULT_LEAK_TYPES,
    createClient: options.createClient,
    async client() {
      const client = await options.createClient();
      opened.push(client);
      return client;
    },
    resource(label = 'shared') {
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
  if (bodyError) throw bodyError.error;
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw new Error('close() rejected after the check', { cause: failed.reason });
}

/** Outcome of a promise, kept for later: never an unhandled rejection while the check goes on. */
export type Settled<T> = { readonly value: T } | { readonly error: unknown };

export function settle<T>(promise: Promise<T>): Promise<Settled<T>> {
  return promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
}

/** Records the order in which grants arrive, releasing each at once when `hold` is false. */
export function recordGrant<L extends Lease<bigint | undefined>>(
  order: string[],
  label: string,
  promise: Promise<L>,
): Promise<L> {
  return promise.then((lease) => {
    order.push(label);
    return lease;
  });
}

/** After `close()`, waits a bounded moment for sockets to finish closing, then asserts nothing grew. */
export async function assertNoGrowth(
  context: SharedCheckContext<unknown>,
  before: Map<string, number>,
): Promise<void> {
  const deadline = Date.now() + context.scaled(3_000);
  let grown = handleGrowth(before, countHandles(context.leakTypes));
  while (grown.length > 0 && Date.now() < deadline) {
    await delay(25);
    grown = handleGrowth(before, countHandles(context.leakTypes));
  }
  assert.deepEqual(grown, [], `handles left after close(): ${grown.join(', ')}`);
}

import assert from 'node:assert/strict';
import { monotonicNow } from '../clock.js';
import type { Lease } from '../contract.js';
import { isFencekitError } from '../errors.js';
import { type CheckContext, within } from './context.js';
import type { LockCheck } from './lock-check.js';

/** TTLs of tens of ms: long enough for a backend to grant, short enough for a stall to use them up. */
const SHORT_TTLS_MS = [20, 35, 50] as const;
/** Clients acquiring at once, each on its own resource, and the grants each asks for. */
const CLIENTS = 4;
const ROUNDS = 12;
/** The longest a busy stretch blocks the event loop (ms): about the shortest TTL. */
const MAX_STALL_MS = 20;

/**
 * Keeps the event loop busy until stopped: stretches of synchronous work of up to `MAX_STALL_MS`, a
 * few ms apart, so answers from the backend wait in the queue as they do in a loaded process. A
 * client that checks its grant's validity only before such a wait (or never) hands out dead leases.
 */
function busyEventLoop(): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const stall = () => {
    timer = undefined;
    if (stopped) return;
    const until = monotonicNow() + 2 + Math.random() * (MAX_STALL_MS - 2);
    while (monotonicNow() < until) {
      // Busy on purpose: this is the load.
    }
    timer = setTimeout(stall, Math.random() * 4);
  };
  timer = setTimeout(stall, 0);
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}

/** One client's rounds: acquire (or tryAcquire) a short TTL, and check each lease as it is returned. */
async function grantRounds(
  context: CheckContext,
  client: Awaited<ReturnType<CheckContext['client']>>,
  resource: string,
  deadline: number,
): Promise<void> {
  for (let round = 0; round < ROUNDS && monotonicNow() < deadline; round++) {
    const ttlMs = SHORT_TTLS_MS[round % SHORT_TTLS_MS.length] as number;
    let lease: Lease<bigint | undefined> | null = null;
    try {
      lease =
        round % 3 === 2
          ? await client.tryAcquire(resource, { ttlMs })
          : await client.acquire(resource, { ttlMs, waitMs: context.scaled(3_000) });
    } catch (error) {
      // Refusing so short a TTL, or reporting a grant that lapsed on the way, is fine; anything
      // else must at least be a typed fencekit error.
      assert.ok(isFencekitError(error), `round ${round}: failed with a non-fencekit error: ${String(error)}`);
      continue;
    }
    // Nothing may run between the client's resolve and this line but the promise chain itself.
    const answeredAt = monotonicNow();
    const held = lease?.held;
    if (lease) {
      assert.ok(
        held === true && lease.validUntil > answeredAt - 2,
        `round ${round} (ttl ${ttlMs} ms): handed out a lease ${(answeredAt - lease.validUntil).toFixed(1)} ms past its validUntil (held: ${held}); a lease whose validity is gone on return must never be handed out`,
      );
      await lease.release().catch(() => {});
    }
  }
}

export const freshGrantChecks: readonly LockCheck[] = [
  {
    id: 'fresh-grants-under-load',
    title: `every returned lease is held at return: ${CLIENTS * ROUNDS} grants with TTLs of tens of ms on a busy event loop`,
    async run(context) {
      const clients = await Promise.all(Array.from({ length: CLIENTS }, () => context.client()));
      const resources = clients.map(() => context.resource('fresh-under-load'));
      // Warm up (connections, sessions) before the load, so the rounds measure grants, not set-up.
      for (const [i, client] of clients.entries()) {
        const lease = await client.acquire(resources[i] as string, {
          ttlMs: context.scaled(5_000),
          waitMs: context.scaled(5_000),
        });
        await lease.release();
      }
      const load = busyEventLoop();
      const budget = context.scaled(20_000);
      try {
        await within(
          Promise.all(
            clients.map((client, i) =>
              grantRounds(context, client, resources[i] as string, monotonicNow() + budget),
            ),
          ),
          budget + context.scaled(10_000),
          'short-TTL grants on a busy event loop',
        );
      } finally {
        load.stop();
      }
      // Whatever happened, nothing may stay granted: each lock is free again within moments.
      for (const [i, client] of clients.entries()) {
        const next = await client.acquire(resources[i] as string, {
          ttlMs: context.scaled(5_000),
          waitMs: context.scaled(10_000),
        });
        await next.release();
      }
    },
  },
];

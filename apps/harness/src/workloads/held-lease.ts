import { type Fence, type Lease, type LockClient, LockLostError } from '@fencekit/core';
import { documentedBounds } from '../client/bounds.js';
import { grantFact, historyNow, type LeaseObservation, observe } from '../client/lease-facts.js';
import { ok } from '../client/recorder.js';
import { mutexTake, type Take, takeLock } from './acquire.js';
import { drawCancel } from './cancel.js';
import type { WorkloadContext } from './types.js';

/** A ZooKeeper-style client that can re-adopt a lease that ended unsure (`ZkLockClient.reclaim`). */
interface Reclaiming {
  reclaim(
    lease: Lease<Fence | undefined>,
    options: { ttlMs: number; waitMs?: number; signal?: AbortSignal },
  ): Promise<Lease<Fence | undefined>>;
}

const canReclaim = (
  locks: LockClient<Fence | undefined>,
): locks is LockClient<Fence | undefined> & Reclaiming =>
  typeof (locks as Partial<Reclaiming>).reclaim === 'function';

/**
 * A lease as the workload holds it: the lease, the id its grant has in the history, and what the
 * client learnt about its end. `await using` releases it as one recorded `release` op, whose invoke
 * ends the grant's believed-valid window (and says when the lease's signal had aborted before, if it did).
 */
export class HeldLease implements AsyncDisposable {
  #abortedAt: string | undefined;
  #reason: string | undefined;
  #released = false;
  #releaseFailed = false;

  constructor(
    readonly lease: Lease<Fence | undefined>,
    readonly grant: string,
    readonly resource: string,
    private readonly ctx: WorkloadContext,
  ) {
    // Reading the signal arms the adapter's expiry watch, as a careful user's I/O under the lock would.
    const signal = lease.signal;
    const ended = () => {
      this.#abortedAt ??= historyNow();
      const reason: unknown = signal.reason;
      this.#reason = reason instanceof LockLostError ? reason.reason : String(reason);
    };
    if (signal.aborted) ended();
    else signal.addEventListener('abort', ended, { once: true });
  }

  /** The fence as the history writes it, or undefined for fence-less backends. */
  get fence(): string | undefined {
    return this.lease.fence === undefined ? undefined : this.lease.fence.toString();
  }

  /** The careful client's check before acting under the lock: `held` and `validUntil`, as read. */
  check(): LeaseObservation {
    return observe(this.lease, this.grant);
  }

  /** Its release was not confirmed (failed or unsure, not refused as not ours): the lock may still be its own. */
  get releaseFailed(): boolean {
    return this.#releaseFailed;
  }

  /** The lease ended because the connection was suspended: it may still be ours (ZooKeeper). */
  get endedUnsure(): boolean {
    return this.#reason === 'unsure';
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    const { recorder, config } = this.ctx;
    const ended =
      this.#abortedAt === undefined
        ? {}
        : { lease: { grant: this.grant, held: false, at: this.#abortedAt, reason: this.#reason } };
    const boundMs = documentedBounds(config.backend, config.ttlMs, config.sessionMs).releaseMs;
    // A failed release is recorded (fail/info); the lease is left to expire, or to the adapter's own
    // clean-up, and the caller stays away meanwhile (see lockedSections).
    const outcome = await recorder.op(
      'release',
      { grant: this.grant, fence: this.fence ?? null, boundMs, ...ended },
      async () => {
        await this.lease.release();
        return ok();
      },
    );
    // Refused as not the holder's: nothing of ours is left on the servers, so nothing to wait out.
    const refused = (outcome.value as { code?: unknown } | undefined)?.code === 'not-holder';
    this.#releaseFailed = outcome.type !== 'ok' && !refused;
  }
}

/**
 * Takes the lock as one recorded `acquire` op: the invoke carries `waitMs` (the contract's bound on
 * a blocking acquire), the ok the grant (id, fence, `validUntil` on the history's clock).
 */
export function acquireHeld(
  ctx: WorkloadContext,
  resource: string,
  grant: string,
): Promise<HeldLease | undefined> {
  const key = `${ctx.config.namespace}:${resource}`;
  return acquireRecorded(ctx, resource, grant, key, mutexTake(ctx.locks, key), { sends: true });
}

/**
 * The recorded `acquire` op of every lock workload (mutex, semaphore, read-write lock): the invoke
 * carries `resource`, `extra` (what a shared grant asks: permits and limit, or mode) and the wait's
 * bound, and any `--abort-rate` cancellation (cancel.ts); the ok the grant's lease facts with the same
 * `extra`, which the semaphore and read-write checks weigh grants by. `sends`: record when the granting
 * request was sent (`SendClock`), for the backends that observe it. `name` names the lock in errors.
 */
export async function acquireRecorded(
  ctx: WorkloadContext,
  resource: string,
  grant: string,
  name: string,
  take: Take,
  options: { extra?: Record<string, unknown>; sends?: boolean } = {},
): Promise<HeldLease | undefined> {
  const { config, recorder, stopping } = ctx;
  const extra = options.extra ?? {};
  let held: HeldLease | undefined;
  // A blocking acquire carries the contract's `waitMs` and the bound its adapter documents for it;
  // polling is the harness's own loop around tryAcquire, which no adapter promises anything about.
  const cancel = drawCancel(config, name, stopping, ctx.random);
  const waitMs =
    cancel !== undefined && 'waitMs' in cancel.recorded ? cancel.recorded.waitMs : config.opTimeoutMs;
  const bound =
    config.acquire === 'wait'
      ? {
          waitMs,
          boundMs: documentedBounds(config.backend, config.ttlMs, config.sessionMs).acquireMs(waitMs),
        }
      : { pollMs: waitMs };
  const asked = {
    resource,
    ...extra,
    ...bound,
    ...(cancel !== undefined && 'abortAfterMs' in cancel.recorded ? cancel.recorded : {}),
  };
  try {
    await recorder.op('acquire', asked, async () => {
      const lease = await takeLock(take, name, config, cancel?.signal ?? stopping, ctx.random, waitMs);
      const request = options.sends ? { ttlMs: config.ttlMs, sends: ctx.sends } : undefined;
      const fact = grantFact(lease, grant, resource, request);
      held = new HeldLease(lease, grant, resource, ctx);
      return ok({ ...fact, ...extra });
    });
  } finally {
    cancel?.dispose();
  }
  return held;
}

/**
 * The Curator pattern: a lease that ended unsure (connection suspended) is re-adopted once the same
 * session is back, as one recorded `reclaim` op whose ok is a new grant on the same node and fence.
 * Undefined when the backend cannot reclaim, the lease did not end unsure, or the reclaim failed.
 */
export async function reclaimHeld(
  ctx: WorkloadContext,
  old: HeldLease,
  grant: string,
): Promise<HeldLease | undefined> {
  const { config, locks, recorder, stopping } = ctx;
  if (!old.endedUnsure || !canReclaim(locks) || stopping.aborted) return undefined;
  let held: HeldLease | undefined;
  await recorder.op(
    'reclaim',
    {
      resource: old.resource,
      from: old.grant,
      waitMs: config.opTimeoutMs,
      boundMs: documentedBounds(config.backend, config.ttlMs, config.sessionMs).acquireMs(config.opTimeoutMs),
    },
    async () => {
      const lease = await locks.reclaim(old.lease, {
        ttlMs: config.ttlMs,
        waitMs: config.opTimeoutMs,
        signal: stopping,
      });
      const fact = grantFact(lease, grant, old.resource);
      held = new HeldLease(lease, grant, old.resource, ctx);
      return ok(fact);
    },
  );
  return held;
}

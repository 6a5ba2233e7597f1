import type { Fence, Lease } from '@fencekit/core';
import type { SendClock } from './send-clock.js';

/**
 * Lease facts as the history records them (the format is documented in @fencekit/checker's README,
 * "Lease histories"): every time is ns on the history's clock (`process.hrtime.bigint()`, shared by all
 * processes of the host) as a decimal string, since a lease's `validUntil` is on this process's own
 * `performance.now()` and only this process can translate it.
 */

/** The history clock now, as a decimal string of ns. */
export function historyNow(): string {
  return process.hrtime.bigint().toString();
}

/**
 * `validUntil` (ms on this process's `performance.now()`) on the history's clock:
 * historyNow − (performance.now() − validUntil)·1e6, both clocks read back to back so the error is the
 * gap between two reads (about a microsecond). `null` for a lease that claims no expiry.
 */
export function toHistoryNs(validUntilMs: number): { validUntil: string | null; at: string } {
  const now = process.hrtime.bigint();
  const perf = performance.now();
  const at = now.toString();
  if (!Number.isFinite(validUntilMs)) return { validUntil: null, at };
  return { validUntil: (now - BigInt(Math.round((perf - validUntilMs) * 1e6))).toString(), at };
}

/** A grant as the `ok` of its acquire (or reclaim) records it. */
export interface GrantFact {
  grant: string;
  resource: string;
  fence: string | null;
  validUntil: string | null;
  /** When `validUntil` was read (the first thing done with the returned lease). */
  at: string;
  /** Validity left at the grant, ms, by the client's own clock (read by scenarios); null = no expiry. */
  validMs: number | null;
  /**
   * Where the server counts the TTL from the request (`SendClock`): the TTL asked and when the granting
   * request was sent (ns), for the lease check's `validity-past-send`.
   */
  ttlMs?: number;
  sentAt?: string;
}

/** One reading of a held lease, as the careful client makes it before acting under the lock. */
export interface LeaseObservation {
  grant: string;
  held: boolean;
  validUntil?: string | null;
  at: string;
  reason?: string;
}

export function grantFact(
  lease: Lease<Fence | undefined>,
  grant: string,
  resource: string,
  request?: { ttlMs: number; sends: SendClock | undefined },
): GrantFact {
  const validUntilMs = lease.validUntil;
  const { validUntil, at } = toHistoryNs(validUntilMs);
  const sentAt = request?.sends?.take(lease.owner);
  return {
    ...(request === undefined || sentAt === undefined
      ? {}
      : { ttlMs: request.ttlMs, sentAt: sentAt.toString() }),
    grant,
    resource,
    fence: lease.fence === undefined ? null : lease.fence.toString(),
    validUntil,
    at,
    validMs: Number.isFinite(validUntilMs) ? Math.round(validUntilMs - performance.now()) : null,
  };
}

/** Reads `held` and `validUntil` the way the client acts on them: `held` first, as the check does. */
export function observe(lease: Lease<Fence | undefined>, grant: string): LeaseObservation {
  const held = lease.held;
  const { validUntil, at } = toHistoryNs(lease.validUntil);
  return held ? { grant, held, validUntil, at } : { grant, held, at };
}

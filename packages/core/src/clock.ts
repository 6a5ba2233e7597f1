/**
 * The one clock leases are measured on: monotonic, in milliseconds, immune to wall-clock jumps.
 * Validity is always counted from when a request was *sent*, so time spent on the wire is never
 * credited to the holder.
 */
export function monotonicNow(): number {
  return performance.now();
}

/**
 * When a lease granted for `ttlMs` stops being safe to use, given when its request was sent and the
 * clock drift to allow for (Redlock: ttl × factor + a constant; one server: 0 or a small margin).
 */
export function validUntilFrom(sentAt: number, ttlMs: number, driftMs = 0): number {
  return sentAt + ttlMs - driftMs;
}

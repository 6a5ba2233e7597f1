/**
 * The one clock every history line is stamped with: CLOCK_MONOTONIC in nanoseconds, read in each
 * process on its own. All harness processes run on one host, so their readings are comparable: a
 * client's invoke, the resource's write and the nemesis's fault share one timeline.
 */
export function nowNs(): number {
  // Uptime in ns stays below 2^53 for ~104 days, so a JSON number keeps full precision.
  return Number(process.hrtime.bigint());
}

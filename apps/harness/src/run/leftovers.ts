/**
 * What keeps the event loop alive (timers, sockets, servers, child processes), counted by type, so
 * the end of a command or a test can name what a run left open instead of hanging on it.
 */
export function openResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/** The resources open now beyond `baseline`, as "TCPSocketWrap ×3"; empty when nothing was left. */
export function leftOpen(baseline: ReadonlyMap<string, number>): string[] {
  const left: string[] = [];
  for (const [type, count] of openResources()) {
    const extra = count - (baseline.get(type) ?? 0);
    if (extra > 0) left.push(`${type} ×${extra}`);
  }
  return left;
}

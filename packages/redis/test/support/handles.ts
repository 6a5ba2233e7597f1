/** Handle types that count as leaks after close(): timers and sockets. */
const LEAK_TYPES = new Set(['Timeout', 'TCPSocketWrap', 'TCPWrap', 'TCPWRAP', 'PipeWrap']);

/** Counts of the leak-prone handles this process has open now, by type. */
export function handlesNow(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) {
    if (LEAK_TYPES.has(type)) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return counts;
}

/**
 * The handle types that grew since `before` ("Type: before → after"), looked at until none did or
 * `withinMs` passed: sockets finish closing a few ticks after close() resolves.
 */
export async function handlesGrownSince(before: Map<string, number>, withinMs: number): Promise<string[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const grown: string[] = [];
    for (const [type, count] of handlesNow()) {
      const was = before.get(type) ?? 0;
      if (count > was) grown.push(`${type}: ${was} → ${count}`);
    }
    if (grown.length === 0 || Date.now() >= deadline) return grown;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

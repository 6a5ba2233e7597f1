import type { Deployment } from '../backends/types.js';
import { UnsupportedFaultError } from '../backends/types.js';
import type { StartedFault } from './faults.js';

/** A minority (⌊(N − 1)/2⌋) of `nodes`, picked with the nemesis's seeded random; empty for one or two. */
export function minorityOf(nodes: readonly string[], random: () => number): string[] {
  const shuffled = nodes.map((node) => ({ node, key: random() })).sort((a, b) => a.key - b.key);
  return shuffled.slice(0, Math.floor((nodes.length - 1) / 2)).map((s) => s.node);
}

/**
 * `clock-jump-minority`: the clocks of a minority of the servers jump forward by twice the TTL, at once,
 * so every key they hold expires: the lock's holder keeps its keys on a majority only. A quorum of a
 * majority must still refuse everyone else until the holder's keys there expire or are released; a
 * "quorum" that a minority can make up grants the lock beside the holder. On one or two servers there
 * is no minority to jump: refused (`UnsupportedFaultError`), recorded as not applied.
 */
export async function jumpMinority(
  deployment: Deployment,
  random: () => number,
  ttlMs: number,
): Promise<StartedFault> {
  const { faults, nodes } = deployment;
  const minority = minorityOf(nodes, random);
  if (minority.length === 0) {
    throw new UnsupportedFaultError('clock-jump-minority', `${nodes.length} server(s): no minority to jump`);
  }
  for (const node of minority) await faults.clock(node, { offsetMs: ttlMs * 2 });
  return { target: { node: minority[0] as string, nodes: minority }, heal: () => faults.heal() };
}

/**
 * `latency-minority`: every client's requests to a minority of the servers are delayed by TTL/4 ± TTL/4
 * (through the fault proxy; each connection keeps its order, different clients' requests overtake each
 * other). A grant is decided by the majority that answers first, while the holder's requests to the slow
 * minority are still on their way: another client's later requests may reach that minority first and
 * win it. A majority quorum ignores such a minority (and gives it back); one that a minority can make up
 * grants the lock beside the holder. Refused where there is no minority.
 */
export async function slowMinority(
  deployment: Deployment,
  random: () => number,
  ttlMs: number,
): Promise<StartedFault> {
  const { faults, nodes } = deployment;
  const minority = minorityOf(nodes, random);
  if (minority.length === 0) {
    throw new UnsupportedFaultError('latency-minority', `${nodes.length} server(s): no minority to slow`);
  }
  const ms = Math.max(1, Math.round(ttlMs / 4));
  for (const node of minority) await faults.latency(node, { ms, jitterMs: ms });
  return { target: { node: minority[0] as string, nodes: minority }, heal: () => faults.heal() };
}

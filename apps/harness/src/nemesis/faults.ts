import type { Deployment } from '../backends/types.js';
import { pick } from './random.js';

/**
 * The fault vocabulary of `--fault`. Each maps to @fencekit/cluster primitives (or, for
 * `pause-client`, a SIGSTOP of a client process at its most vulnerable moment).
 */
export const FAULTS = {
  partition: 'split the servers into two halves',
  isolate: 'cut one server off from the others',
  'cut-clients': 'cut clients off from one server (through the fault proxy)',
  kill: 'kill -9 one server, restart it at heal',
  'pause-server': 'SIGSTOP one server, SIGCONT at heal',
  'pause-client': 'SIGSTOP a client between its lock check and its write, for longer than the TTL',
  'clock-jump': "jump one server's clock forward by twice the TTL",
  'clock-drift': "make one server's clock run at 3× speed",
  latency: 'add latency (TTL/4 ± TTL/8) between clients and one server',
} as const;

export type FaultName = keyof typeof FAULTS;
export const FAULT_NAMES = Object.keys(FAULTS) as FaultName[];

/** Where a started fault landed, for the history and the report. */
export interface FaultTarget {
  node?: string;
  halves?: [string[], string[]];
  client?: number;
}

/** A started server fault: how to undo it. */
export interface StartedFault {
  target: FaultTarget;
  heal(): Promise<void>;
}

/** Starts a server-side fault (everything but `pause-client`, which the nemesis does itself). */
export async function startServerFault(
  fault: Exclude<FaultName, 'pause-client'>,
  deployment: Deployment,
  random: () => number,
  ttlMs: number,
): Promise<StartedFault> {
  const { faults, nodes } = deployment;
  const node = pick(random, nodes);
  const healAll = () => faults.heal();
  switch (fault) {
    case 'partition': {
      const shuffled = [...nodes].sort(() => random() - 0.5);
      const cut = Math.max(1, Math.floor(shuffled.length / 2));
      const halves: [string[], string[]] = [shuffled.slice(0, cut), shuffled.slice(cut)];
      await faults.partition({ halves });
      return { target: { halves }, heal: healAll };
    }
    case 'isolate':
      await faults.partition({ isolate: node });
      return { target: { node }, heal: healAll };
    case 'cut-clients':
      await faults.cutClients(node);
      return { target: { node }, heal: healAll };
    case 'kill':
      await faults.kill(node);
      return { target: { node }, heal: () => faults.restart(node) };
    case 'pause-server':
      await faults.pause(node);
      return { target: { node }, heal: () => faults.resume(node) };
    case 'clock-jump':
      await faults.clock(node, { offsetMs: ttlMs * 2 });
      return { target: { node }, heal: healAll };
    case 'clock-drift':
      await faults.clock(node, { offsetMs: 0, rate: 3 });
      return { target: { node }, heal: healAll };
    case 'latency':
      await faults.latency(node, { ms: Math.round(ttlMs / 4), jitterMs: Math.round(ttlMs / 8) });
      return { target: { node }, heal: healAll };
  }
}

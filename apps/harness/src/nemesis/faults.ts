import type { PromotionQuery } from '@fencekit/cluster';
import type { Deployment } from '../backends/types.js';
import type { WorkloadName } from '../workloads/types.js';
import { jumpMinority, slowMinority } from './minority.js';
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
  'stall-holder':
    'SIGSTOP a client right after its validity check, while it holds, for longer than its session (ZooKeeper session timeout, etcd lease TTL, else the TTL) and until another client is granted; then SIGCONT',
  flicker:
    'kill -9 the leader (or one server) the moment a client invokes a release or an extend, restart it a quarter of a session later: the request meets the outage, the session outlives it',
  'quorum-loss':
    'kill -9 a majority of the servers the moment a client invokes a release or resign, keep them down past the session (each client gives its session up for a new one, the servers keep the old), then restart them one at a time: what the release gave up must be withdrawn once they serve again',
  suspend:
    'reset every client connection, while a client holds, for half the session: a suspended connection that comes back with the session alive',
  'delete-waiter-key':
    "etcd: delete the key of the waiter right behind a queue's head through a separate admin client, leaving its session alive, as etcd 3.4.3 lost a waiter's key under Jepsen: the waiter must queue again, not take the lock beside the true next one",
  'cut-holder':
    "cut a holder's process off from every server (through the fault proxies, its connections only) right after its validity check, for longer than its session and until another client is granted; the process keeps running",
  'reset-holder':
    "reset a holder's connections to every server (RST, new ones too) right after its validity check, until its release has failed (a third of its session at most): write and release fail at once, the session outlives the outage",
  'clock-jump-minority':
    "jump a minority of the servers' clocks forward by twice the TTL at once: the holder keeps its keys on a majority only",
  'latency-minority':
    "add latency (TTL/4 ± TTL/4) between clients and a minority of the servers: clients' requests reach them in differing orders",
  'stall-acquire':
    'SIGSTOP a client while its acquire is outstanding (every client link slowed so its first request is still in flight), for longer than its session and until another client is granted; then SIGCONT',
  'drift-majority':
    "make a majority of the servers' clocks run 0.8 % fast (inside Redlock's 1 % + 2 ms drift allowance) and stall a holder granted under it, as stall-holder does, until another client is granted",
  'hang-at-close':
    'SIGSTOP the leader (or one server) while the clients close at the end of the run; SIGCONT once they have closed, or after a bound',
  failover:
    "replicated Redis: promote a replica of the primary, gracefully (Sentinel's or CLUSTER FAILOVER, the old primary demoted alive) or by kill -9 of the primary (the seed picks); heal restarts a killed one and waits for the deployment to be whole",
  'failover-lagged':
    "replicated Redis: the failover that loses acknowledged writes, as replication lag does in production: cut the primary's replication links for 1 s while its clients still write to it, kill -9 it, and a replica without those writes is promoted; the lag at the kill (replication offsets) and the promoted node are recorded; heal restarts the old primary as a replica",
  'split-brain':
    'replicated Redis: cut the primary off from its replicas, the other Sentinels and cluster nodes while its clients still reach it, until a replica is promoted on the other side; heal demotes the old primary, discarding what it took meanwhile',
} as const;

export type FaultName = keyof typeof FAULTS;
export const FAULT_NAMES = Object.keys(FAULTS) as FaultName[];

/** Faults aimed at the lease promise: each acts on what the clients do (see aimed.ts). */
export const AIMED_FAULTS = [
  'stall-holder',
  'flicker',
  'quorum-loss',
  'suspend',
  'delete-waiter-key',
  'cut-holder',
  'reset-holder',
  'stall-acquire',
  'drift-majority',
] as const;
export type AimedFault = (typeof AIMED_FAULTS)[number];
export const isAimedFault = (fault: string): fault is AimedFault =>
  (AIMED_FAULTS as readonly string[]).includes(fault);

/**
 * Workloads whose clients never give the aimed fault its moment: flicker waits for a release, resign or
 * extend invoke, which cas (no lock) and cron (its tick locks are never released) never make. Run there,
 * it would only ever record "not applied"; the others wait for a window, which every workload opens.
 */
const NEVER_TRIGGERED: Readonly<Partial<Record<AimedFault, readonly WorkloadName[]>>> = {
  flicker: ['cas', 'cron'],
  'quorum-loss': ['cas', 'cron'],
  // cas takes no lock and cron only tries (tryAcquire gives its place up at once): nobody ever waits.
  'delete-waiter-key': ['cas', 'cron'],
  // stall-acquire waits for an acquire op: cas takes no lock, cron only tries (its op is a `lock`), an
  // election campaigns.
  'stall-acquire': ['cas', 'cron', 'election'],
};

/** What an aimed fault in NEVER_TRIGGERED waits for, when not a release (for the refusal's message). */
const WAITS_FOR: Readonly<Partial<Record<AimedFault, string>>> = {
  'delete-waiter-key': 'a client waiting in a lock or election queue behind another',
  'stall-acquire': 'a blocking acquire',
};

/** Why each of `faults` can never act under `workload` (empty when all can). */
export function untriggerableFaults(workload: WorkloadName, faults: readonly string[]): string[] {
  return faults.flatMap((fault) =>
    isAimedFault(fault) && NEVER_TRIGGERED[fault]?.includes(workload)
      ? [
          `fault ${fault} waits for ${WAITS_FOR[fault] ?? 'a release, resign or extend'}, which the ${workload} workload never makes: it could never act`,
        ]
      : [],
  );
}

/** Applied while the clients close at the run's end (see hang-at-close.ts), never on the schedule. */
export const CLOSING_FAULT = 'hang-at-close';

/** Faults on the servers or the network alone, started and healed on the schedule. */
export type ServerFault = Exclude<FaultName, 'pause-client' | AimedFault | typeof CLOSING_FAULT>;

/** Where a started fault landed, for the history and the report. */
export interface FaultTarget {
  node?: string;
  /** Every server the fault acted on, where it acted on several (`node` is the first). */
  nodes?: string[];
  halves?: [string[], string[]];
  client?: number;
  /** `failover`: how the replica was promoted. */
  how?: 'graceful' | 'kill' | 'lagged';
  /**
   * `failover-lagged`: how far behind the primary each replica was at the kill (replication offsets, bytes of the
   * stream the primary acknowledged and no replica applied), and the window the links were cut for.
   */
  lag?: {
    windowMs: number;
    primaryOffset?: number | undefined;
    replicaOffsets: Record<string, number | undefined>;
  };
  /** A promotion fault: the replica its start saw promoted (absent when it saw none within its bound). */
  promoted?: string;
}

/** A started server fault: how to undo it. */
export interface StartedFault {
  target: FaultTarget;
  heal(): Promise<void>;
}

/** Starts a server-side fault (the client and aimed faults are the nemesis's own). */
export async function startServerFault(
  fault: ServerFault,
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
    case 'clock-jump-minority':
      return jumpMinority(deployment, random, ttlMs);
    case 'latency-minority':
      return slowMinority(deployment, random, ttlMs);
    case 'clock-drift':
      await faults.clock(node, { offsetMs: 0, rate: 3 });
      return { target: { node }, heal: healAll };
    case 'failover': {
      if (!faults.failover) throw new Error(`fault failover is not supported on ${deployment.backend}`);
      const how = random() < 0.5 ? 'graceful' : 'kill';
      const { from } = await faults.failover({ how });
      await promoted(deployment, 'failover', from);
      return { target: { node: from, how }, heal: healAll };
    }
    case 'failover-lagged': {
      if (!faults.failover)
        throw new Error(`fault failover-lagged is not supported on ${deployment.backend}`);
      const { from, lag } = await faults.failover({ how: 'lagged' });
      const promotedId = await promoted(deployment, 'failover', from);
      return {
        target: {
          node: from,
          how: 'lagged',
          ...(lag ? { lag: { ...lag, replicaOffsets: { ...lag.replicaOffsets } } } : {}),
          ...(promotedId ? { promoted: promotedId } : {}),
        },
        heal: healAll,
      };
    }
    case 'split-brain': {
      if (!faults.splitBrain) throw new Error(`fault split-brain is not supported on ${deployment.backend}`);
      const { from } = await faults.splitBrain({});
      await promoted(deployment, 'splitBrain', from);
      return { target: { node: from }, heal: healAll };
    }
    case 'latency':
      await faults.latency(node, { ms: Math.round(ttlMs / 4), jitterMs: Math.round(ttlMs / 8) });
      return { target: { node }, heal: healAll };
  }
}

/** How long a promotion fault's start waits for the promotion: the primary seen down (2 s), an election, the act. */
const PROMOTION_WAIT_MS = 30_000;

/**
 * A failover or split brain is the promotion, not the call that sets it off: its start waits (bounded) until a
 * replica is primary, so that the window the schedule holds it for is spent with two histories diverging, not
 * waiting for the Sentinels (a kill is seen after 2 s and an election, longer on a loaded machine). Whatever
 * this wait sees, the fault's own probe then looks again, independently; a promotion that never came is
 * recorded unseen by it.
 */
async function promoted(
  deployment: Deployment,
  fault: 'failover' | 'splitBrain',
  node: string,
): Promise<string | undefined> {
  const observe = deployment.faults.observe as unknown as
    | ((q: PromotionQuery) => Promise<{ seen: boolean; detail: string }>)
    | undefined;
  const seen = await observe
    ?.call(deployment.faults, { fault, node, phase: 'started', timeoutMs: PROMOTION_WAIT_MS })
    .catch(() => undefined);
  // @fencekit/cluster's promotion probe ends its detail with "<id> promoted" when it saw one.
  return seen?.seen ? /(\w+) promoted/.exec(seen.detail)?.[1] : undefined;
}

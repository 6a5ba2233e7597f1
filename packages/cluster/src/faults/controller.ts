import { InvalidArgumentError, sleep } from '@fencekit/core';
import { ClusterClosedError, NodeNotRunningError, UnsupportedFaultError } from '../errors.js';
import { cutPairs } from '../partition.js';
import { validateToxic } from '../proxy/toxics.js';
import { FAILOVER_BOUND_MS } from '../replication.js';
import type {
  ClockOptions,
  ClusterNode,
  FailoverLag,
  FailoverOptions,
  Faults,
  LatencyOptions,
  PartitionSpec,
  PromotionFault,
  Toxic,
} from '../types.js';
import { checkEffectQuery, checkNodeId, clockSkew, latencyToxic } from './arguments.js';
import { type ClockReading, EffectProbes, type EffectQuery, type Observation } from './effects.js';
import type { FaultPrimitives, FaultTarget } from './primitives.js';
import { checkPromotionQuery, isPromotionQuery, observePromotion, type PromotionQuery } from './promotion.js';
import type { TopologyFault } from './support.js';

/** The shim re-reads its file every 2 ms; waiting a little longer means the skew is in force on return. */
const SHIM_PICKUP_MS = 20;
/** How long a graceful promotion may take to be accepted (a Sentinel busy with another failover is asked again). */
const PROMOTE_BOUND_MS = 15_000;
/** How long a heal of replicated Redis waits for one primary per shard with its replicas linked. */
const CONVERGE_BOUND_MS = 45_000;
/**
 * A 'lagged' failover's window: long enough for a busy primary to acknowledge writes no replica has, short enough
 * (at most the cluster node timeout) that nothing but the cut replication links sees the primary gone before it dies.
 */
const DEFAULT_LAG_MS = 1000;
const MAX_LAG_MS = 2000;

/**
 * The nemesis, for either provider: checks each call, keeps track of what it broke (killed, paused, skewed) so
 * that `heal()` can undo exactly that, and leaves the acts themselves to the provider's `FaultPrimitives`.
 */
export class FaultController<N extends ClusterNode> implements Faults {
  private readonly killed = new Set<string>();
  private readonly paused = new Set<string>();
  private readonly skewed = new Set<string>();
  /** What was asked of each node, for the probes to compare the servers' behaviour with. */
  private readonly latencyAsked = new Map<string, number>();
  private readonly clockAsked = new Map<string, { offsetMs: number; rate: number; before?: ClockReading }>();
  /** When each clock skew was asked (Date.now()), and the lead each clock had when last healed (`clockHealed`). */
  private readonly clockSince = new Map<string, number>();
  private readonly clockHealedAt = new Map<string, { leadMs: number; healedAtMs: number }>();
  private readonly probes: EffectProbes<N>;
  /** Per primary a promotion fault acted on, its shard then (itself and its replicas): what its probe looks at. */
  private readonly shards = new Map<string, string[]>();
  /** Primaries killed by `failover({ how: 'kill' })`: a heal restarts them only once a replica took over. */
  private readonly killedPrimaries = new Set<string>();
  private disposed = false;
  /** A partition or split brain is in force: a lagged failover then leaves the links to `heal()`. */
  private otherCuts = false;

  constructor(
    private readonly cluster: FaultTarget<N>,
    private readonly primitives: FaultPrimitives<N>,
  ) {
    this.probes = new EffectProbes(
      {
        node: (id) => cluster.node(id),
        probeTarget: (n) => cluster.probeTarget(n),
        members: cluster.members,
        recipe: cluster.recipe,
        processState: (n) => primitives.processState(n),
      },
      {
        latencyMs: (id) => this.latencyAsked.get(id),
        clock: (id) => this.clockAsked.get(id),
        clockHealed: (id) => this.clockHealedAt.get(id),
      },
    );
  }

  /**
   * Probes, independently of the act, whether a fault's effect shows (`phase: 'started'`) or is gone
   * (`'healed'`), bounded by `timeoutMs`; never throws for an effect not seen, it says so.
   */
  async observe(query: EffectQuery | PromotionQuery): Promise<Observation> {
    this.live();
    if (isPromotionQuery(query)) {
      checkPromotionQuery(query);
      this.refuseUnsupported(query.fault);
      this.target(query.node);
      const replication = this.cluster.replication!;
      // A node no promotion fault acted on: its shard as the servers see it now.
      const shard = this.shards.get(query.node) ?? [
        query.node,
        ...(await replication.replicasOf(query.node)),
      ];
      return observePromotion(replication, query, shard);
    }
    checkEffectQuery(query);
    if (query.node !== undefined || query.fault !== 'partition') this.target(String(query.node));
    return this.probes.observe(query);
  }

  async kill(id: string): Promise<void> {
    const node = await this.runningTarget(id, 'kill');
    await this.primitives.kill(node);
    this.killed.add(id);
    this.paused.delete(id); // a killed process is no longer stopped: its replacement starts running
    this.primitives.clients.dropConnections(id);
  }

  async restart(id: string): Promise<void> {
    const node = this.target(id);
    await this.primitives.kill(node); // restart of a running server is kill + start
    await this.primitives.start(node);
    this.killed.delete(id);
    this.paused.delete(id);
    await this.cluster.waitReady(node);
  }

  async pause(id: string): Promise<void> {
    await this.primitives.signal(await this.runningTarget(id, 'pause'), 'STOP');
    this.paused.add(id);
  }

  async resume(id: string): Promise<void> {
    await this.primitives.signal(await this.runningTarget(id, 'resume'), 'CONT');
    this.paused.delete(id);
  }

  /**
   * Cuts server ↔ server links. On topologies whose servers never talk to each other (Redis) or a single server
   * there is nothing to cut: `UnsupportedFaultError`, after the spec is checked.
   */
  async partition(spec: PartitionSpec): Promise<void> {
    this.live();
    const pairs = cutPairs(
      spec,
      this.cluster.nodes.map((n) => n.id),
    );
    this.refuseUnsupported('partition');
    await this.primitives.cutLinks(pairs);
    this.otherCuts = true;
  }

  async cutClients(id: string): Promise<void> {
    this.target(id);
    this.primitives.clients.cutClients(id);
  }

  async cutProcess(pid: number, options: { reset?: boolean } = {}): Promise<number> {
    this.live();
    if (!Number.isSafeInteger(pid) || pid <= 0) {
      throw new InvalidArgumentError('pid', pid, 'the process id of a client (a positive integer)');
    }
    return this.primitives.clients.cutProcess(pid, options.reset === true);
  }

  async latency(id: string, options: LatencyOptions): Promise<void> {
    this.target(id);
    const toxic = latencyToxic(options);
    this.primitives.clients.addToxic(id, toxic, 'latency');
    if (toxic.type === 'latency') this.latencyAsked.set(id, toxic.latencyMs);
  }

  async toxic(id: string, toxic: Toxic): Promise<void> {
    this.target(id);
    const valid = validateToxic(toxic);
    this.primitives.clients.addToxic(id, valid);
    if (valid.type === 'latency') this.latencyAsked.set(id, valid.latencyMs);
  }

  async clock(id: string, options: ClockOptions): Promise<void> {
    const node = this.target(id);
    const { offsetMs, rate } = clockSkew(options);
    this.refuseUnsupported('clock', id);
    // The server's clock before its first skew: what a probe of a clock that only runs (ZooKeeper's uptime) needs.
    const before = this.clockAsked.get(id)?.before ?? (await this.readClock(node));
    this.clockAsked.set(id, { offsetMs, rate, ...(before ? { before } : {}) });
    if (!this.clockSince.has(id)) this.clockSince.set(id, Date.now());
    await this.primitives.writeClock(node, offsetMs, rate);
    this.skewed.add(id);
    await sleep(SHIM_PICKUP_MS);
  }

  /**
   * A replica of the primary `node` (default: the current one) is promoted: asked gracefully, or the primary is
   * killed (then `heal()` restarts it), or killed after its replicas lagged behind it (`how: 'lagged'`). Resolves
   * once the act is done; the promotion itself is `observe`d.
   */
  async failover(options: FailoverOptions = {}): Promise<PromotionFault> {
    this.live();
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError(
        'failover options',
        options,
        "{ how?: 'graceful' | 'kill' | 'lagged', node?, lagMs? }",
      );
    }
    const how = options.how ?? 'graceful';
    if (how !== 'graceful' && how !== 'kill' && how !== 'lagged') {
      throw new InvalidArgumentError('failover.how', how, "'graceful', 'kill' or 'lagged'");
    }
    const lagMs = options.lagMs ?? DEFAULT_LAG_MS;
    if (typeof lagMs !== 'number' || !Number.isFinite(lagMs) || lagMs <= 0 || lagMs > MAX_LAG_MS) {
      throw new InvalidArgumentError(
        'failover.lagMs',
        lagMs,
        `a positive number of ms, at most ${MAX_LAG_MS}`,
      );
    }
    this.refuseUnsupported('failover');
    const from = await this.primary(options.node, 'failover.node');
    if (how === 'lagged') return { from, lag: await this.laggedFailover(from, lagMs) };
    if (how === 'kill') {
      await this.kill(from);
      this.killedPrimaries.add(from);
    } else {
      await this.cluster.replication!.promote(from, AbortSignal.timeout(PROMOTE_BOUND_MS));
    }
    return { from };
  }

  /**
   * Replication lag, then the primary's death: its links to its replicas are cut (not the replicas stopped: bytes
   * already sent to a SIGSTOPped replica wait in its socket buffer and are applied when it resumes, so nothing would
   * be lost), it acknowledges writes for `lagMs` that reach no replica, and is SIGKILLed. Every replica of its shard
   * is cut, so whichever one is promoted lacks those writes. Resolves once a replica is promoted (bounded), the
   * links flowing again; `heal()` restarts the old primary.
   */
  private async laggedFailover(from: string, lagMs: number): Promise<FailoverLag> {
    const replication = this.cluster.replication!;
    // `primary()` just recorded the shard as the servers see it.
    const shard = this.shards.get(from) ?? [from];
    const replicas = shard.filter((id) => id !== from);
    if (replicas.length === 0) throw new Error(`${from} has no replica to promote: nothing to fail over`);
    const started = performance.now();
    await this.primitives.cutLinks(replicas.map((id) => [from, id] as const));
    await sleep(lagMs);
    const offsets = await replication.offsets([from, ...replicas]);
    const windowMs = Math.round(performance.now() - started);
    await this.kill(from);
    this.killedPrimaries.add(from);
    // The lag is over once a replica is primary: the cut pairs carry the Sentinel links too, and a Sentinel beside
    // the old primary left cut would miss the failover and name the old primary, restarted empty, as primary.
    // Bytes still held for a replica go nowhere then: the promoted one dropped its old link, and any other resyncs
    // from the new primary in full (its offset is beyond the new primary's history). Other cuts stay until heal().
    const promotion = await observePromotion(
      replication,
      { fault: 'failover', node: from, phase: 'started', timeoutMs: FAILOVER_BOUND_MS },
      shard,
    );
    if (promotion.seen && !this.otherCuts) await this.primitives.healLinks();
    return {
      windowMs,
      primaryOffset: offsets[from],
      replicaOffsets: Object.fromEntries(replicas.map((id) => [id, offsets[id]])),
    };
  }

  /**
   * The primary `node` (default: the current one) is cut from every other node while its clients keep reaching it;
   * the other side promotes a replica. `heal()` lets the links flow and waits until the old primary is a replica.
   */
  async splitBrain(options: { readonly node?: string } = {}): Promise<PromotionFault> {
    this.live();
    if (typeof options !== 'object' || options === null) {
      throw new InvalidArgumentError('splitBrain options', options, '{ node? }');
    }
    this.refuseUnsupported('splitBrain');
    const from = await this.primary(options.node, 'splitBrain.node');
    await this.primitives.cutLinks(
      cutPairs(
        { isolate: from },
        this.cluster.nodes.map((n) => n.id),
      ),
    );
    this.otherCuts = true;
    return { from };
  }

  /** The primary a promotion fault acts on (checked to be one now), its shard recorded for the probes. */
  private async primary(node: string | undefined, field: string): Promise<string> {
    const replication = this.cluster.replication!;
    const primaries = await replication.primaries();
    if (node !== undefined) {
      this.target(node);
      if (!primaries.includes(node)) {
        throw new InvalidArgumentError(
          field,
          node,
          `a primary now: ${primaries.join(', ') || 'none is known'}`,
        );
      }
    }
    const from = node ?? (await replication.defaultPrimary());
    if (from === undefined) {
      throw new Error(
        `no primary is known now on this ${this.cluster.topology} cluster: nothing to fail over`,
      );
    }
    this.shards.set(from, [from, ...(await replication.replicasOf(from))]);
    return from;
  }

  /** Undoes the network faults, pauses and skews first, then restarts the killed: they rejoin a healed network. */
  async heal(): Promise<void> {
    this.live();
    this.primitives.clients.heal();
    this.latencyAsked.clear();
    // How far ahead each skewed clock ran as it is healed (a jump's offset, a fast drift's gain so far): what it
    // granted under the skew (a Redis key's PX) may outlive the heal by that much on the server's real time (#20).
    const now = Date.now();
    for (const [id, asked] of this.clockAsked) {
      const ranMs = now - (this.clockSince.get(id) ?? now);
      const leadMs = Math.max(0, asked.offsetMs) + Math.max(0, (asked.rate - 1) * ranMs);
      this.clockHealedAt.set(id, { leadMs: Math.round(leadMs), healedAtMs: now });
    }
    this.clockSince.clear();
    this.clockAsked.clear();
    this.otherCuts = false;
    await Promise.all([
      this.primitives.healLinks(),
      // A paused server that has since exited has nothing left to resume.
      ...[...this.paused].map(async (id) => {
        const node = this.cluster.node(id);
        if (await this.primitives.running(node)) await this.primitives.signal(node, 'CONT');
      }),
      ...[...this.skewed].map((id) => this.primitives.writeClock(this.cluster.node(id), 0, 1)),
    ]);
    this.paused.clear();
    this.skewed.clear();
    // A primary killed for a failover comes back empty: restarted before a replica took over, it would be primary
    // again and its replicas would resync its empty dataset. Wait (bounded) for the promotion first.
    await Promise.all(
      [...this.killedPrimaries]
        .filter((id) => this.killed.has(id) && this.cluster.replication)
        .map((id) =>
          observePromotion(
            this.cluster.replication!,
            { fault: 'failover', node: id, phase: 'started', timeoutMs: CONVERGE_BOUND_MS },
            this.shards.get(id) ?? [],
          ),
        ),
    );
    this.killedPrimaries.clear();
    await Promise.all([...this.killed].map((id) => this.restart(id)));
    await sleep(SHIM_PICKUP_MS);
    // Replicated Redis: a returning old primary is demoted by the Sentinels (after ~8 s) or by the cluster's
    // newer config epoch, then resyncs; the heal is done once one primary per shard serves with its replicas.
    await this.cluster.replication?.waitWhole(CONVERGE_BOUND_MS);
  }

  private async readClock(node: N): Promise<ClockReading | undefined> {
    const read = this.cluster.recipe.readClock;
    if (!read) return undefined;
    try {
      const realMs = Date.now();
      return { realMs, serverMs: (await read(this.cluster.probeTarget(node))).ms };
    } catch {
      return undefined; // a server that cannot answer now (paused): the probe says it had nothing to compare with
    }
  }

  /** Called by close(): drops fault state without healing (the servers are about to go). */
  dispose(): void {
    this.disposed = true;
  }

  private live(): void {
    if (this.disposed) throw new ClusterClosedError();
  }

  /** Refuses, with the reason, a fault this cluster cannot apply, rather than recording an act that did nothing. */
  private refuseUnsupported(fault: TopologyFault, id?: string): void {
    const reason = this.cluster.unsupported[fault];
    if (reason) {
      const where = `${this.cluster.topology} cluster${id === undefined ? '' : ` node ${id}`}`;
      throw new UnsupportedFaultError(fault, where, reason);
    }
  }

  /** The node, if its server process is running: signalling a killed or exited server would change nothing. */
  private async runningTarget(id: string, fault: string): Promise<N> {
    const node = this.target(id);
    if (!(await this.primitives.running(node))) throw new NodeNotRunningError(fault, id);
    return node;
  }

  private target(id: string): N {
    this.live();
    checkNodeId(id);
    return this.cluster.node(id);
  }
}

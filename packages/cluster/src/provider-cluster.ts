import { ClusterStartError, UnknownNodeError } from './errors.js';
import { FaultController } from './faults/controller.js';
import type { FaultPrimitives } from './faults/primitives.js';
import { type TopologyFault, unsupportedFaults } from './faults/support.js';
import { type ProbeTarget, waitForLeader } from './leader.js';
import type { LocalRecipe } from './local/recipe.js';
import type { ResolvedOptions } from './options.js';
import { type RedisReplication, SentinelReplication } from './replication.js';
import type {
  Cluster,
  ClusterNode,
  ProviderName,
  SentinelEndpoints,
  Topology,
  WaitForLeaderOptions,
} from './types.js';
import { poll } from './wait.js';

/** Thrown by `checkRunning` when a server process is gone while we wait for it to serve. */
export class ServerExitedError extends Error {}

/**
 * What a cluster is on either provider: its members, leader lookup, readiness waits, the start-or-tear-down
 * sequence and an idempotent close. A provider adds how to reach a member directly, how to read its log, and how
 * to tear everything down.
 */
export abstract class ProviderCluster<N extends ClusterNode> implements Cluster {
  abstract readonly provider: ProviderName;
  readonly faults: FaultController<N>;
  /** Why each fault this cluster cannot apply would do nothing (the nemesis refuses those). */
  readonly unsupported: Partial<Record<TopologyFault, string>>;
  /** Replicated Redis (redis-sentinel, redis-cluster): roles, the authority on the primary, the joining. */
  replication: RedisReplication | undefined;
  private closed: Promise<void> | undefined;

  protected constructor(
    readonly topology: Topology,
    readonly recipe: LocalRecipe,
    readonly members: readonly N[],
    primitives: FaultPrimitives<N>,
    /** How often a readiness probe is repeated. */
    private readonly readyPollMs: number,
    /** Whether the clock shim was loaded into the servers. */
    clockShim: boolean,
  ) {
    this.unsupported = unsupportedFaults({ topology, nodes: members.length, clockShim });
    this.faults = new FaultController(this, primitives);
  }

  get nodes(): readonly ClusterNode[] {
    return this.members;
  }

  get endpoints(): readonly string[] {
    return this.members.map((n) => n.endpoint);
  }

  node(id: string): N {
    const node = this.members.find((n) => n.id === id);
    if (!node)
      throw new UnknownNodeError(
        String(id),
        this.members.map((n) => n.id),
      );
    return node;
  }

  waitForLeader(options?: WaitForLeaderOptions): Promise<string> {
    return waitForLeader(() => this.leader(), options);
  }

  leader(): Promise<string | undefined> {
    if (this.replication?.kind === 'sentinel') return this.replication.primaries().then((p) => p[0]);
    return this.recipe.leader?.(this.members.map((n) => this.probeTarget(n))) ?? Promise.resolve(undefined);
  }

  async primaries(): Promise<string[]> {
    if (this.replication) return this.replication.primaries();
    const leader = await this.leader();
    return leader === undefined ? [] : [leader];
  }

  get sentinel(): SentinelEndpoints | undefined {
    const replication = this.replication;
    if (!(replication instanceof SentinelReplication)) return undefined;
    return {
      masterName: replication.masterName,
      endpoints: replication.sentinels.map((s) => `${s.host}:${s.port}`),
    };
  }

  get natMap(): Readonly<Record<string, { host: string; port: number }>> | undefined {
    if (!this.replication) return undefined;
    const map: Record<string, { host: string; port: number }> = {};
    for (const m of this.replication.members) {
      const [host, port] = this.node(m.id).endpoint.split(':') as [string, string];
      map[m.announced] = { host, port: Number(port) };
    }
    return map;
  }

  /** Waits (bounded) until `node` serves clients; the error carries the end of its log. */
  async waitReady(node: N, timeoutMs = this.recipe.readyTimeoutMs, signal?: AbortSignal): Promise<void> {
    try {
      await poll(
        async () => {
          this.checkRunning(node);
          return (await this.recipe.ready(this.probeTarget(node))) ? true : undefined;
        },
        {
          what: `${this.recipe.server} ${node.id} to serve`,
          timeoutMs,
          intervalMs: this.readyPollMs,
          signal,
          fatal: (error) => error instanceof ServerExitedError,
        },
      );
    } catch (error) {
      const reason =
        error instanceof ServerExitedError ? 'the process exited' : String((error as Error).message);
      throw new ClusterStartError(node.id, reason, await this.logTail(node), { cause: error });
    }
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.faults.dispose();
      await this.teardown();
    })();
    return this.closed;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /**
   * Starts the servers and waits until every member serves, all within `startTimeoutMs` (or until the caller's
   * signal aborts). On any failure the whole cluster is torn down before the error is rethrown, so a failed
   * start leaves nothing behind.
   */
  protected async boot(options: ResolvedOptions, startServers: () => Promise<void>): Promise<void> {
    try {
      await startServers();
      const deadline = AbortSignal.timeout(options.startTimeoutMs);
      const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
      await Promise.all(
        this.members.map((n) =>
          this.waitReady(n, Math.min(this.recipe.readyTimeoutMs, options.startTimeoutMs), signal),
        ),
      );
      if (this.replication) {
        const replication = this.replication;
        try {
          await replication.assemble(signal);
          await replication.waitWhole(options.startTimeoutMs, signal);
        } catch (error) {
          const seen = await replication.whole().then(
            (w) => w.detail,
            () => 'no reading',
          );
          throw new ClusterStartError(
            'all',
            `the ${this.topology} deployment did not form (${(error as Error).message}); last seen: ${seen}`,
            await this.logTail(this.members[0]!),
            { cause: error },
          );
        }
      }
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  /**
   * Where readiness and leader probes go: the server's own client port, never through the client proxy, so a fault
   * on the clients' path cannot make a server look down.
   */
  abstract probeTarget(node: N): ProbeTarget;
  protected abstract logTail(node: N): Promise<string>;
  /** Kills every server and removes what the start created (dirs, containers, networks, proxies). */
  protected abstract teardown(): Promise<void>;
  /** Throws `ServerExitedError` when the provider can tell the server is gone. */
  protected checkRunning(_node: N): void {}
}

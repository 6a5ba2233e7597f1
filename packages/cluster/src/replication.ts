import { sleep } from '@fencekit/core';
import type { LocalRecipe, NodeLayout } from './local/recipe.js';
import { announcedPort, CLUSTER_NODE_TIMEOUT_MS, SENTINEL_MASTER_NAME } from './local/redis-replicated.js';
import { redisCall, redisCommand, redisInfo } from './resp.js';
import { poll } from './wait.js';

/** A data node of a replicated Redis: where probes reach it, and the port it announces to its peers. */
export interface RedisMember {
  readonly id: string;
  readonly host: string;
  /** Its own client port (never through a proxy). */
  readonly port: number;
  /**
   * 'host:port' its peers know it by (local: its peer proxy; docker: its container address): what INFO
   * replication, Sentinel and CLUSTER NODES name.
   */
  readonly announced: string;
  /** Redis Cluster: its announced bus port (what CLUSTER MEET is given). */
  readonly announcedBusPort?: number;
}

/** A Sentinel, reached at its own port. */
export interface SentinelMember {
  readonly id: string;
  readonly host: string;
  readonly port: number;
}

/** One data node's own view of its role (INFO replication). */
export interface RoleView {
  readonly id: string;
  readonly role: 'master' | 'slave' | undefined;
  /** A replica's primary, by member id. */
  readonly primary?: string;
  readonly linkUp?: boolean;
  readonly connectedReplicas?: number;
  readonly error?: string;
}

/** A check of the deployment's shape: whole (serving as set up) or not, and what was read. */
export interface Whole {
  readonly whole: boolean;
  readonly detail: string;
}

/** Bound on one probe request; a loaded 2-core machine (load 30+) was seen to take over a second to answer. */
const PROBE_MS = 2000;
/** Bound on one set-up command (ADDSLOTSRANGE, MEET, REPLICATE: each saves nodes.conf). */
const SETUP_MS = 5000;

/**
 * Replicated Redis seen from outside: each member's role, the authority on who is primary (a majority of the
 * Sentinels, or of the cluster nodes' views), the joining of a Redis Cluster, and the acts of the failover faults.
 * Provider-neutral: it only talks to the servers' ports.
 */
export abstract class RedisReplication {
  abstract readonly kind: 'sentinel' | 'cluster';

  constructor(readonly members: readonly RedisMember[]) {}

  /** Joins the members into one deployment once each serves (Redis Cluster: slots, meet, replicas). */
  async assemble(_signal: AbortSignal): Promise<void> {}

  /** Whether the deployment serves as set up: one primary per shard, its replicas linked, the authority agreeing. */
  abstract whole(): Promise<Whole>;

  /** The current primaries' ids, per the authority (one for Sentinel; one per shard for Redis Cluster). */
  abstract primaries(): Promise<string[]>;

  /** The members replicating `primary` now, per the authority. */
  abstract replicasOf(primary: string): Promise<string[]>;

  /** The primary a promotion fault acts on when none is named: the only one (Sentinel), or slot 0's (Cluster). */
  async defaultPrimary(): Promise<string | undefined> {
    return (await this.primaries())[0];
  }

  /** Asks for a graceful promotion of a replica of `primary` (SENTINEL FAILOVER / CLUSTER FAILOVER). */
  abstract promote(primary: string, signal: AbortSignal): Promise<void>;

  /** Waits, bounded, until `whole()`; rejects saying what was last read. */
  async waitWhole(timeoutMs: number, signal?: AbortSignal): Promise<void> {
    let last = 'not probed';
    await poll(
      async () => {
        const view = await this.whole();
        last = view.detail;
        return view.whole ? true : undefined;
      },
      { what: `the ${this.kind} deployment to serve`, timeoutMs, intervalMs: 250, signal },
    ).catch((error: Error) => {
      throw new Error(`${error.message}; last seen: ${last}`, { cause: error });
    });
  }

  /** Each member's own view of its role. */
  async roles(): Promise<RoleView[]> {
    return Promise.all(
      this.members.map(async (m): Promise<RoleView> => {
        try {
          const info = await redisInfo(m.host, m.port, 'replication', PROBE_MS);
          const role = info.get('role');
          if (role === 'master') {
            return { id: m.id, role, connectedReplicas: Number(info.get('connected_slaves') ?? 0) };
          }
          const address = `${info.get('master_host')}:${info.get('master_port')}`;
          const primary = this.memberByAddress(address) ?? address;
          return { id: m.id, role: 'slave', primary, linkUp: info.get('master_link_status') === 'up' };
        } catch (error) {
          return { id: m.id, role: undefined, error: (error as Error).message };
        }
      }),
    );
  }

  /**
   * Each member's replication offset: a primary's `master_repl_offset`, a replica's `slave_repl_offset` (how much of
   * its primary's stream it applied). Undefined for a member that did not answer.
   */
  async offsets(ids: readonly string[]): Promise<Record<string, number | undefined>> {
    const read = await Promise.all(
      ids.map(async (id) => {
        const m = this.member(id);
        const info = await redisInfo(m.host, m.port, 'replication', PROBE_MS).catch(() => undefined);
        const field = info?.get('role') === 'slave' ? 'slave_repl_offset' : 'master_repl_offset';
        const value = Number(info?.get(field));
        return [id, info && Number.isFinite(value) ? value : undefined] as const;
      }),
    );
    return Object.fromEntries(read);
  }

  member(id: string): RedisMember {
    const found = this.members.find((m) => m.id === id);
    if (!found) throw new Error(`no Redis member ${id}`);
    return found;
  }

  memberByAddress(address: string): string | undefined {
    return this.members.find((m) => m.announced === address)?.id;
  }
}

export const describeRoles = (roles: readonly RoleView[]) =>
  roles
    .map((r) =>
      r.role === undefined
        ? `${r.id}: no answer`
        : r.role === 'master'
          ? `${r.id}: primary (${r.connectedReplicas} replicas connected)`
          : `${r.id}: replica of ${r.primary} (link ${r.linkUp ? 'up' : 'down'})`,
    )
    .join(', ');

/** Most frequent value among the defined ones, if more than half of `total` name it. */
function majority(values: ReadonlyArray<string | undefined>, total: number): string | undefined {
  const counts = new Map<string, number>();
  for (const v of values) if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
  for (const [value, count] of counts) if (count > total / 2) return value;
  return undefined;
}

/** One primary and its replicas behind Sentinels: the Sentinels' majority names the primary. */
export class SentinelReplication extends RedisReplication {
  readonly kind = 'sentinel';
  readonly masterName = SENTINEL_MASTER_NAME;

  constructor(
    members: readonly RedisMember[],
    readonly sentinels: readonly SentinelMember[],
  ) {
    super(members);
  }

  /**
   * Sentinel's internal periods, shortened for tests (`SENTINEL DEBUG`, runtime only): INFO of the primary and
   * replicas every second (default 10 s: replicas were found 10 s after start), hello messages every second
   * (default 2 s; a primary that comes back is demoted after 4 of these, 4 s instead of 8 s), and TILT — the
   * 30 s pause a Sentinel takes when its timer ran 2 s late, which a loaded machine triggers — over in 5 s.
   */
  override async assemble(signal: AbortSignal): Promise<void> {
    const settings = ['info-period', '1000', 'publish-period', '1000', 'tilt-period', '5000'];
    await Promise.all(
      this.sentinels.map((s) =>
        poll(
          async () => {
            await redisCommand(s.host, s.port, ['SENTINEL', 'DEBUG', ...settings], PROBE_MS);
            return true;
          },
          { what: `Sentinel ${s.id} to take its settings`, timeoutMs: 30_000, intervalMs: 200, signal },
        ),
      ),
    );
  }

  /** Each Sentinel's answer to get-master-addr-by-name, as a member id (undefined: no answer). */
  async sentinelViews(): Promise<Array<string | undefined>> {
    return Promise.all(
      this.sentinels.map(async (s) => {
        const reply = await redisCall(
          s.host,
          s.port,
          ['SENTINEL', 'GET-MASTER-ADDR-BY-NAME', this.masterName],
          PROBE_MS,
        ).catch(() => undefined);
        return Array.isArray(reply) ? this.memberByAddress(`${reply[0]}:${reply[1]}`) : undefined;
      }),
    );
  }

  async primaries(): Promise<string[]> {
    const primary = majority(await this.sentinelViews(), this.sentinels.length);
    return primary === undefined ? [] : [primary];
  }

  async replicasOf(primary: string): Promise<string[]> {
    return this.members.filter((m) => m.id !== primary).map((m) => m.id);
  }

  /** What a Sentinel knows of the primary: its replicas and the other Sentinels. */
  private async sentinelKnows(s: SentinelMember): Promise<string> {
    const reply = await redisCall(s.host, s.port, ['SENTINEL', 'MASTER', this.masterName], PROBE_MS).catch(
      (e: Error) => e,
    );
    if (!Array.isArray(reply)) return `${s.id}: ${reply instanceof Error ? reply.message : 'no answer'}`;
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < reply.length; i += 2) fields.set(String(reply[i]), String(reply[i + 1]));
    return `${s.id}: ${fields.get('num-slaves')} replicas, ${fields.get('num-other-sentinels')} other sentinels, flags ${fields.get('flags')}`;
  }

  async whole(): Promise<Whole> {
    const [roles, views] = await Promise.all([this.roles(), this.sentinelViews()]);
    const primary = majority(views, this.sentinels.length);
    const replicas = this.members.length - 1;
    const knows = await Promise.all(this.sentinels.map((s) => this.sentinelKnows(s)));
    const others = this.sentinels.length - 1;
    const sentinelsWhole = knows.every((k) =>
      new RegExp(`: (\\d+) replicas, ${others} other sentinels, flags master$`).test(k)
        ? Number(/: (\d+) replicas/.exec(k)?.[1]) >= replicas
        : false,
    );
    const whole =
      primary !== undefined &&
      views.every((v) => v === primary) &&
      sentinelsWhole &&
      roles.every((r) =>
        r.id === primary
          ? r.role === 'master' && r.connectedReplicas === replicas
          : r.role === 'slave' && r.primary === primary && r.linkUp === true,
      );
    const detail = `${describeRoles(roles)}; sentinels name ${views.map((v, i) => `${this.sentinels[i]!.id}: ${v ?? 'none'}`).join(', ')}; ${knows.join('; ')}`;
    return { whole, detail };
  }

  async promote(_primary: string, signal: AbortSignal): Promise<void> {
    // Any Sentinel can run a forced failover; one that is busy (INPROG) or sees no replica fit yet
    // (NOGOODSLAVE, right after a replica re-linked) is asked again, within the bound.
    let last = '';
    for (let round = 0; ; round++) {
      for (const s of this.sentinels) {
        if (signal.aborted) throw new Error(`no Sentinel started a failover (${last})`);
        const reply = await redisCall(
          s.host,
          s.port,
          ['SENTINEL', 'FAILOVER', this.masterName],
          PROBE_MS,
        ).catch((e: Error) => e);
        if (reply === 'OK') return;
        last = `${s.id}: ${reply instanceof Error ? reply.message : String(reply)}`;
      }
      await sleep(Math.min(1000, 200 * (round + 1)), signal).catch(() => {
        throw new Error(`no Sentinel started a failover (${last})`);
      });
    }
  }
}

/** One line of CLUSTER NODES. */
interface ClusterNodeLine {
  readonly nodeId: string;
  readonly member: string | undefined;
  readonly flags: readonly string[];
  readonly primaryNodeId: string | undefined;
  readonly slots: number;
  /** It serves slot 0 (the shard the faults act on by default). */
  readonly slotZero: boolean;
  readonly connected: boolean;
}

const SLOTS = 16_384;

export function parseClusterNodes(text: string, memberByAddress: (address: string) => string | undefined) {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line): ClusterNodeLine => {
      const [nodeId, address, flags, primary, , , , link, ...slots] = line.trim().split(' ');
      const announced = /^([^@,]+)@/.exec(address ?? '')?.[1] ?? '';
      let count = 0;
      let slotZero = false;
      for (const range of slots) {
        if (range.startsWith('[')) continue; // a slot being migrated
        const [from, to] = range.split('-').map(Number);
        count += to === undefined ? 1 : to - from! + 1;
        if (from === 0) slotZero = true;
      }
      return {
        nodeId: nodeId!,
        member: memberByAddress(announced),
        flags: (flags ?? '').split(','),
        primaryNodeId: primary === '-' ? undefined : primary,
        slots: count,
        slotZero,
        connected: link === 'connected',
      };
    });
}

/** Redis Cluster: primaries with slots, one replica each; each node's CLUSTER NODES is its view. */
export class ClusterReplication extends RedisReplication {
  readonly kind = 'cluster';
  /** How many of the members are primaries when it is set up (the rest replicate them, one each). */
  readonly shards: number;

  constructor(members: readonly RedisMember[]) {
    super(members);
    this.shards = Math.ceil(members.length / 2);
  }

  /** Each member's CLUSTER NODES (undefined: no answer). */
  async views(): Promise<Array<ClusterNodeLine[] | undefined>> {
    return Promise.all(
      this.members.map(async (m) => {
        const reply = await redisCall(m.host, m.port, ['CLUSTER', 'NODES'], PROBE_MS).catch(() => undefined);
        return typeof reply === 'string'
          ? parseClusterNodes(reply, (a) => this.memberByAddress(a))
          : undefined;
      }),
    );
  }

  /** The primaries holding slots in a view, sorted. */
  private static primariesIn(view: readonly ClusterNodeLine[]): string[] {
    return view
      .filter((l) => l.flags.includes('master') && l.slots > 0 && !l.flags.includes('fail'))
      .map((l) => l.member ?? l.nodeId)
      .sort();
  }

  async primaries(): Promise<string[]> {
    const views = await this.views();
    const agreed = majority(
      views.map((v) => (v ? ClusterReplication.primariesIn(v).join(',') : undefined)),
      this.members.length,
    );
    return agreed ? agreed.split(',') : [];
  }

  /**
   * The primary serving slot 0 as a majority of the nodes see it: harness runs put their resource there, so a
   * `failover` or `splitBrain` without a node acts on the shard the clients use, after a promotion too (the
   * sorted list's first would be another shard's primary once slot 0 moved to a promoted replica).
   */
  override async defaultPrimary(): Promise<string | undefined> {
    const views = await this.views();
    const owner = (view: readonly ClusterNodeLine[]) =>
      view.find((l) => l.slotZero && l.flags.includes('master') && !l.flags.includes('fail'))?.member;
    return majority(
      views.map((v) => (v ? owner(v) : undefined)),
      this.members.length,
    );
  }

  async replicasOf(primary: string): Promise<string[]> {
    for (const view of await this.views()) {
      const line = view?.find((l) => l.member === primary);
      if (!view || !line) continue;
      return view.filter((l) => l.primaryNodeId === line.nodeId && l.member).map((l) => l.member!);
    }
    return [];
  }

  /**
   * Forms the cluster in four steps, each retried with backoff until it is done or `signal` aborts (the start's
   * bound): slots and config epochs on the primaries, every node meeting every other, the node ids, each replica
   * replicating its primary. Each step is safe to repeat (what an earlier try did counts as done), because on a
   * loaded machine any of them can fail once: a node not listening yet, a MEET handshake that timed out (it is
   * dropped after the node timeout, 2 s, and never retried by Redis), a REPLICATE before gossip named the primary.
   * A step that never completes fails the start with an error naming it and what it last saw.
   */
  override async assemble(signal: AbortSignal): Promise<void> {
    const primaries = this.members.slice(0, this.shards);
    const replicas = this.members.slice(this.shards);
    // Slots split evenly; each primary gets a distinct config epoch, as `redis-cli --cluster create` does.
    await formationStep('assign slots and config epochs', signal, () =>
      Promise.all(
        primaries.map(async (m, i) => {
          const first = Math.floor((SLOTS * i) / primaries.length);
          const last = Math.floor((SLOTS * (i + 1)) / primaries.length) - 1;
          await repeatable(
            m,
            ['CLUSTER', 'ADDSLOTSRANGE', String(first), String(last)],
            /already busy/, // assigned by an earlier try
          );
          await repeatable(
            m,
            ['CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1)],
            /already non-zero|does not know any other node/, // set by an earlier try (or already met)
          );
        }),
      ).then(() => true),
    );
    // The first node meets every node not yet known both ways; gossip spreads the rest. Sent again each round
    // for a node still missing: a handshake that did not complete within the node timeout is forgotten.
    const first = this.members[0]!;
    await formationStep('every node to know every other (CLUSTER MEET)', signal, async () => {
      const views = await this.views();
      const known = (view: ClusterNodeLine[] | undefined, id: string) =>
        view?.some((l) => l.member === id && !l.flags.includes('handshake')) === true;
      const missing = this.members.filter((_m, i) => !this.members.every((o) => known(views[i], o.id)));
      if (missing.length === 0) return true;
      for (const m of this.members.slice(1)) {
        if (known(views[0], m.id) && known(views[this.members.indexOf(m)], first.id)) continue;
        const [host, port] = m.announced.split(':') as [string, string];
        await redisCommand(
          first.host,
          first.port,
          ['CLUSTER', 'MEET', host, port, String(m.announcedBusPort)],
          SETUP_MS,
        );
      }
      throw new Error(
        `not yet: ${missing.map((m) => `${m.id} knows ${views[this.members.indexOf(m)]?.filter((l) => l.member && !l.flags.includes('handshake')).length ?? 'no answer'} of ${this.members.length}`).join(', ')}`,
      );
    });
    const ids = new Map<string, string>();
    await formationStep('read the node ids (CLUSTER MYID)', signal, async () => {
      for (const m of this.members) {
        if (!ids.has(m.id))
          ids.set(m.id, String(await redisCommand(m.host, m.port, ['CLUSTER', 'MYID'], SETUP_MS)));
      }
      return true;
    });
    await formationStep('each replica to replicate its primary (CLUSTER REPLICATE)', signal, async () => {
      const views = await this.views();
      const pending = replicas.filter((m, i) => {
        const primaryId = ids.get(primaries[i % primaries.length]!.id);
        const self = views[this.members.indexOf(m)]?.find((l) => l.flags.includes('myself'));
        return self?.primaryNodeId !== primaryId;
      });
      if (pending.length === 0) return true;
      await Promise.all(
        pending.map((m) =>
          redisCommand(
            m.host,
            m.port,
            ['CLUSTER', 'REPLICATE', ids.get(primaries[replicas.indexOf(m) % primaries.length]!.id)!],
            SETUP_MS,
          ),
        ),
      );
      return true;
    });
  }

  async whole(): Promise<Whole> {
    const [views, roles, states] = await Promise.all([
      this.views(),
      this.roles(),
      Promise.all(
        this.members.map((m) =>
          redisCall(m.host, m.port, ['CLUSTER', 'INFO'], PROBE_MS)
            .then((reply) => {
              const text = String(reply);
              return `${/cluster_state:(\w+)/.exec(text)?.[1]} ${/cluster_slots_ok:(\d+)/.exec(text)?.[1]}`;
            })
            .catch(() => 'no answer'),
        ),
      ),
    ]);
    const shapes = views.map((view) => {
      if (!view) return undefined;
      if (view.some((l) => l.flags.includes('fail') || l.flags.includes('fail?') || !l.member))
        return 'failing';
      const primaries = ClusterReplication.primariesIn(view);
      const shards = primaries.map((p) => {
        const line = view.find((l) => l.member === p)!;
        const reps = view.filter((l) => l.primaryNodeId === line.nodeId).map((l) => l.member);
        return `${p}>${reps.sort().join('+')}`;
      });
      return shards.join(' ');
    });
    const agreed = shapes[0];
    const shardsOk =
      agreed !== undefined &&
      agreed !== 'failing' &&
      shapes.every((s) => s === agreed) &&
      agreed.split(' ').length === this.shards &&
      agreed.split(' ').every((s) => /^n\d+>n\d+$/.test(s));
    const statesOk = states.every((s) => s === `ok ${SLOTS}`);
    const primaryOf = new Map<string, string>();
    for (const shard of agreed?.split(' ') ?? []) {
      const [p, r] = shard.split('>');
      if (p && r) primaryOf.set(r, p);
    }
    const rolesOk = roles.every((r) =>
      primaryOf.has(r.id)
        ? r.role === 'slave' && r.primary === primaryOf.get(r.id) && r.linkUp === true
        : r.role === 'master',
    );
    const detail = `${describeRoles(roles)}; cluster state ${this.members.map((m, i) => `${m.id}: ${states[i]}`).join(', ')}; shards (primary>replica) per view ${this.members.map((m, i) => `${m.id}: ${shapes[i] ?? 'no answer'}`).join('; ')}`;
    return { whole: shardsOk && statesOk && rolesOk, detail };
  }

  async promote(primary: string, signal: AbortSignal): Promise<void> {
    let last = '';
    for (let round = 0; ; round++) {
      if (signal.aborted) throw new Error(`no replica of ${primary} took a CLUSTER FAILOVER (${last})`);
      const [replica] = await this.replicasOf(primary);
      if (replica) {
        const m = this.member(replica);
        const reply = await redisCall(m.host, m.port, ['CLUSTER', 'FAILOVER'], PROBE_MS).catch(
          (e: Error) => e,
        );
        if (reply === 'OK') return;
        last = `${replica}: ${reply instanceof Error ? reply.message : String(reply)}`;
      } else {
        last = `${primary} has no replica`;
      }
      await sleep(Math.min(1000, 200 * (round + 1)), signal).catch(() => {
        throw new Error(`no replica of ${primary} took a CLUSTER FAILOVER (${last})`);
      });
    }
  }
}

/**
 * One step of forming a Redis Cluster: `act` until it returns true, retried with backoff (0.1 s doubling to 2 s)
 * while it throws, until `signal` aborts; then an error naming the step and its last failure.
 */
async function formationStep(what: string, signal: AbortSignal, act: () => Promise<boolean>): Promise<void> {
  let last = 'not tried';
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) break;
    try {
      if (await act()) return;
      last = 'not done';
    } catch (error) {
      last = (error as Error).message;
    }
    const slept = await sleep(Math.min(2000, 100 * 2 ** attempt), signal).then(
      () => true,
      () => false,
    );
    if (!slept) break;
  }
  throw new Error(
    `Redis Cluster formation step "${what}" did not complete before the start's bound: ${last}`,
  );
}

/** A set-up command whose refusal matching `done` means an earlier try already did it. */
async function repeatable(m: RedisMember, args: readonly string[], done: RegExp): Promise<void> {
  const reply = await redisCall(m.host, m.port, args, SETUP_MS);
  if (reply instanceof Error && !done.test(reply.message)) {
    throw new Error(`${args.join(' ')} on ${m.id}: ${reply.message}`);
  }
}

/** How long a failover may take before the faults give up waiting for it: detection, election, promotion. */
export const FAILOVER_BOUND_MS = Math.max(20_000, CLUSTER_NODE_TIMEOUT_MS * 10);

/** Where the probes reach a node's Redis and its Sentinel (their own ports, or the ports mapped to them). */
export interface Reach {
  node(layout: NodeLayout): { host: string; port: number };
  sentinel(layout: NodeLayout): { host: string; port: number };
}

/** Replicated Redis (by its recipe): the members as probes reach them and as their peers know them. */
export function replicationFor(
  recipe: LocalRecipe,
  layouts: readonly NodeLayout[],
  reach: Reach,
): RedisReplication | undefined {
  const members = layouts.map((l) => ({
    id: l.id,
    ...reach.node(l),
    announced: `${l.advertisedHost}:${announcedPort(l)}`,
    announcedBusPort: l.advertisedPeerPorts[1],
  }));
  if (recipe.replication === 'sentinel') {
    return new SentinelReplication(
      members,
      layouts.map((l) => ({ id: l.id, ...reach.sentinel(l) })),
    );
  }
  if (recipe.replication === 'cluster') return new ClusterReplication(members);
  return undefined;
}

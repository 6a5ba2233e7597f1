import { Redis, type RedisOptions, ReplyError } from 'ioredis';
import type { RedisClient } from './deployment.js';

/**
 * What an epoch fence's grant is checked against on a Sentinel deployment (issue #17): the config epoch a
 * majority of the Sentinels agree on for the primary, that primary's run_id, and the replication id the
 * node had while they were asked. The scripts grant only on the node with that run_id, in that reign, and
 * take config epoch + 1 as the epoch (+ 1: never 0, so above every plain counter fence). The epoch lives in
 * the Sentinels' state, outside the replicated dataset: a primary restarted empty, or a dataset a stale
 * replica overwrote, cannot take the epoch back to 1.
 *
 * Why a majority: each promotion is voted by a majority of the Sentinels for a config epoch none used
 * before, and names one primary. A node restarted empty (new run_id), or one a stale Sentinel still names,
 * is not the primary of any configuration a majority agrees on, so it grants nothing.
 */
export interface SentinelView {
  /** The script arguments: config epoch + 1, run_id, master_replid. */
  readonly args: readonly [string, string, string];
}

/** The three arguments that turn the view off (Redis Cluster, a single node, no Sentinels). */
export const NO_VIEW: SentinelView = { args: ['', '', ''] };

const NONE_MATCHES: SentinelView = { args: ['0', 'none', 'none'] };

/** Each Sentinel's answer is bounded by this: an unanswered one just counts against the majority. */
const SENTINEL_TIMEOUT_MS = 2000;

/** The error scripts and this view reply with; the client reports it as `BackendUnavailableError`. */
export const VIEW_ERROR = 'FENCEKIT_VIEW';

/** Read-only commands that do not answer in time: nothing was granted, so it is a refusal, not an outcome unknown. */
async function bounded<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ReplyError(`${VIEW_ERROR} ${what} did not answer within ${SENTINEL_TIMEOUT_MS} ms`)),
      SENTINEL_TIMEOUT_MS,
    );
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function isViewError(error: unknown): boolean {
  return error instanceof Error && error.message.includes(VIEW_ERROR);
}

type Answer = { readonly epoch: string; readonly runId: string } | { readonly why: string };

/** A connection in Sentinel mode (ioredis `sentinels` + `name`), or undefined. */
function sentinelOptions(redis: RedisClient): RedisOptions | undefined {
  const options = (redis as Redis).options as RedisOptions | undefined;
  if (!options || !Array.isArray(options.sentinels) || options.sentinels.length === 0) return undefined;
  if (typeof options.name !== 'string' || options.name === '') return undefined;
  return options;
}

function field(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(\\S+)`, 'm').exec(info)?.[1];
}

/** `SENTINEL MASTER` answers as a flat list of names and values. */
function pairs(reply: unknown): Map<string, string> {
  const map = new Map<string, string>();
  if (!Array.isArray(reply)) return map;
  for (let i = 0; i + 1 < reply.length; i += 2) map.set(String(reply[i]), String(reply[i + 1]));
  return map;
}

/**
 * The view of one client's command connection, read once and kept until a script says it does not hold
 * (the node restarted, was replaced or promoted): then read again. Reads are one at a time.
 */
export class SentinelViews {
  #view: SentinelView | undefined;
  #reading: Promise<SentinelView> | undefined;

  private constructor(
    private readonly redis: RedisClient,
    private readonly options: RedisOptions,
  ) {}

  /** Undefined when `redis` does not find its primary through Sentinels. */
  static of(redis: RedisClient): SentinelViews | undefined {
    const options = sentinelOptions(redis);
    return options ? new SentinelViews(redis, options) : undefined;
  }

  /**
   * The view read last, without reading: what a release sends. None yet: one no node matches, so the release
   * hands nothing over (it wakes the waiter, whose own acquire reads a view).
   */
  get last(): SentinelView {
    return this.#view ?? NONE_MATCHES;
  }

  current(): Promise<SentinelView> {
    if (this.#view) return Promise.resolve(this.#view);
    this.#reading ??= this.#read().finally(() => {
      this.#reading = undefined;
    });
    return this.#reading;
  }

  /** `view` failed a script's check: the next `current()` reads again (unless another read replaced it). */
  invalidate(view: SentinelView): void {
    if (this.#view === view) this.#view = undefined;
  }

  async #read(): Promise<SentinelView> {
    const before = await this.#node();
    const answers = await Promise.all((this.options.sentinels ?? []).map((s) => this.#ask(s)));
    const after = await this.#node();
    // The reign held while the Sentinels were asked: the epoch they agree on is this reign's, or older.
    if (before.runId !== after.runId || before.replId !== after.replId) {
      throw new ReplyError(`${VIEW_ERROR} the primary changed while the Sentinels were asked`);
    }
    const needed = Math.floor(answers.length / 2) + 1;
    const votes = new Map<string, number>();
    for (const a of answers)
      if ('epoch' in a) votes.set(`${a.epoch}|${a.runId}`, (votes.get(`${a.epoch}|${a.runId}`) ?? 0) + 1);
    const agreed = [...votes].find(([, n]) => n >= needed)?.[0];
    const shown = answers.map((a) => ('epoch' in a ? `${a.runId.slice(0, 8)}@${a.epoch}` : a.why)).join(', ');
    if (agreed === undefined) {
      throw new ReplyError(
        `${VIEW_ERROR} no ${needed} of the ${answers.length} Sentinels agree on the primary and its config epoch (${shown})`,
      );
    }
    const [epoch, runId] = agreed.split('|') as [string, string];
    if (runId !== before.runId || before.role !== 'master') {
      throw new ReplyError(
        `${VIEW_ERROR} the Sentinels' majority names run_id ${runId.slice(0, 8)} at config epoch ${epoch}; this connection is on ${before.runId.slice(0, 8)} (${before.role})`,
      );
    }
    const view: SentinelView = { args: [String(BigInt(epoch) + 1n), runId, before.replId] };
    this.#view = view;
    return view;
  }

  async #node(): Promise<{ runId: string; replId: string; role: string }> {
    const redis = this.redis as Redis;
    const [server, replication] = await bounded(
      Promise.all([redis.info('server'), redis.info('replication')]),
      'INFO on the primary',
    );
    return {
      runId: field(server, 'run_id') ?? '',
      replId: field(replication, 'master_replid') ?? '',
      role: field(replication, 'role') ?? '',
    };
  }

  /** One Sentinel's view of the primary: its config epoch and run_id, or why it is not counted. */
  async #ask(at: Partial<{ host: string; port: number }>): Promise<Answer> {
    const o = this.options;
    const sentinel = new Redis({
      host: at.host ?? '127.0.0.1',
      port: at.port ?? 26379,
      ...(o.sentinelUsername ? { username: o.sentinelUsername } : {}),
      ...(o.sentinelPassword ? { password: o.sentinelPassword } : {}),
      ...(o.enableTLSForSentinelMode && o.sentinelTLS ? { tls: o.sentinelTLS } : {}),
      lazyConnect: true,
      connectTimeout: SENTINEL_TIMEOUT_MS,
      commandTimeout: SENTINEL_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    sentinel.on('error', () => undefined);
    try {
      const master = pairs(await sentinel.call('SENTINEL', 'MASTER', o.name as string));
      const epoch = master.get('config-epoch');
      const runId = master.get('runid');
      if (!epoch || !/^\d+$/.test(epoch)) return { why: 'no config epoch' };
      // Not known yet: a promoted replica's run_id comes with the Sentinel's next INFO of it.
      if (!runId) return { why: `no run_id yet @${epoch}` };
      // The Sentinel leading a failover shows the new epoch beside the old primary until it switches.
      if ((master.get('flags') ?? '').split(',').includes('failover_in_progress')) {
        return { why: `failover in progress @${epoch}` };
      }
      return { epoch, runId };
    } catch (error) {
      return { why: error instanceof Error ? error.message.slice(0, 60) : 'no answer' };
    } finally {
      sentinel.disconnect();
    }
  }
}

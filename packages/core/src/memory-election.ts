import type { CampaignOptions, Election, ElectionClient, LeaderInfo, Leadership } from './contract.js';
import { ClientClosedError, LockAbortedError, LockLostError, LockTimeoutError } from './errors.js';
import { type MemoryCandidacy, MemoryElectionHub } from './memory-election-hub.js';
import {
  assertCandidate,
  assertNonNegativeMs,
  assertResource,
  assertSignal,
  assertTtlMs,
  DEFAULT_WAIT_MS,
} from './validate.js';

let defaultHub: MemoryElectionHub | undefined;

/** The process-wide hub elections share when none is given. */
export function defaultMemoryElectionHub(): MemoryElectionHub {
  defaultHub ??= new MemoryElectionHub();
  return defaultHub;
}

class MemoryLeadership implements Leadership {
  readonly #controller = new AbortController();
  constructor(
    readonly election: string,
    readonly candidate: string,
    readonly term: bigint,
    private readonly step: () => void,
  ) {}

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get isLeader(): boolean {
    return !this.#controller.signal.aborted;
  }

  async resign(): Promise<void> {
    this.end('resigned');
  }

  /** Ends leadership once: steps down on the hub and aborts the signal with the reason. */
  end(reason: string): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(new LockLostError(this.election, `leadership ended: ${reason}`));
    this.step();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.resign();
  }
}

/**
 * One participant in an in-memory election (one process). Candidates are elected in arrival order;
 * the term grows by one with every new leader and is usable as a fence. Leadership lasts until
 * `resign()` or `close()`: in one process there is no session to lose, so no TTL applies.
 */
export class MemoryElection implements Election {
  readonly #hub: MemoryElectionHub;
  readonly #leaderships = new Set<MemoryLeadership>();
  readonly #stops = new Set<(error: Error) => void>();
  readonly #closing = new AbortController();

  constructor(
    readonly name: string,
    hub: MemoryElectionHub = defaultMemoryElectionHub(),
  ) {
    assertResource(name);
    this.#hub = hub;
  }

  async campaign(candidate: string, options: CampaignOptions = {}): Promise<Leadership> {
    assertCandidate(candidate);
    assertSignal('signal', options.signal);
    const waitMs = options.waitMs ?? DEFAULT_WAIT_MS;
    assertNonNegativeMs('waitMs', waitMs);
    this.#assertOpen();
    const { signal } = options;
    const name = this.name;
    if (signal?.aborted) throw new LockAbortedError(this.name, { cause: signal.reason });
    return new Promise<Leadership>((resolve, reject) => {
      // The hub may elect synchronously inside `campaign` below, so everything `finish` touches is
      // declared (or hoisted) before it, and nothing is armed for a campaign already won.
      let timer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (): void => {
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.#stops.delete(stop);
      };
      const candidacy: MemoryCandidacy = {
        candidate,
        onElected: (term) => {
          finish();
          const leadership = new MemoryLeadership(this.name, candidate, term, () => {
            this.#leaderships.delete(leadership);
            this.#hub.resign(this.name, candidacy);
          });
          this.#leaderships.add(leadership);
          resolve(leadership);
        },
      };
      const withdraw = this.#hub.campaign(this.name, candidacy);
      // Withdrawing is synchronous and fails once elected: a campaign is elected or withdrawn, never both.
      function stop(error: Error): void {
        if (!withdraw()) return;
        finish();
        reject(error);
      }
      function onAbort(): void {
        stop(new LockAbortedError(name, { cause: signal?.reason }));
      }
      if (settled) return;
      timer = setTimeout(() => stop(new LockTimeoutError(this.name, waitMs)), waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#stops.add(stop);
    });
  }

  async leader(options: { signal?: AbortSignal } = {}): Promise<LeaderInfo | null> {
    assertSignal('signal', options.signal);
    this.#assertOpen();
    return this.#hub.leader(this.name);
  }

  async *observe(options: { signal?: AbortSignal } = {}): AsyncIterable<LeaderInfo | null> {
    assertSignal('signal', options.signal);
    this.#assertOpen();
    const pending: (LeaderInfo | null)[] = [this.#hub.leader(this.name)];
    let wake: (() => void) | undefined;
    const unwatch = this.#hub.watch(this.name, (leader) => {
      pending.push(leader);
      wake?.();
    });
    const ended = (): boolean => options.signal?.aborted === true || this.#closing.signal.aborted;
    const onEnd = (): void => wake?.();
    options.signal?.addEventListener('abort', onEnd);
    this.#closing.signal.addEventListener('abort', onEnd);
    try {
      while (!ended()) {
        const next = pending.shift();
        if (next !== undefined) {
          yield next;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      unwatch();
      options.signal?.removeEventListener('abort', onEnd);
      this.#closing.signal.removeEventListener('abort', onEnd);
    }
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    const closed = new ClientClosedError(`memory election "${this.name}"`);
    for (const stop of [...this.#stops]) stop(closed);
    for (const leadership of [...this.#leaderships]) leadership.end('election closed');
  }

  #assertOpen(): void {
    if (this.#closing.signal.aborted) throw new ClientClosedError(`memory election "${this.name}"`);
  }
}

/** Elections over one shared in-memory hub; `ttlMs` is validated for contract parity, then unused. */
export function createMemoryElectionClient(options: { hub?: MemoryElectionHub } = {}): ElectionClient {
  const hub = options.hub ?? defaultMemoryElectionHub();
  return {
    election(name: string, electionOptions: { ttlMs: number }): Election {
      assertTtlMs('ttlMs', electionOptions?.ttlMs);
      return new MemoryElection(name, hub);
    },
  };
}

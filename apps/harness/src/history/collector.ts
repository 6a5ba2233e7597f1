import type { HistoryEvent, UnindexedEvent } from './event.js';

/** A source of events (a child process, the nemesis) and whether everything it sent arrived. */
interface SourceState {
  received: number;
  /** The count the source said it sent, once it said so. */
  announced?: number;
  failure?: string;
}

/**
 * Merges the events of every process of a run into one history: ordered by time (one monotonic clock
 * across the host), ties kept in arrival order, then indexed. It also keeps the evidence that the
 * history is complete: each child announces how many events it sent, and a child that exits without
 * announcing, or whose count does not match, makes the history incomplete.
 */
export class HistoryCollector {
  readonly #events: UnindexedEvent[] = [];
  readonly #sources = new Map<string, SourceState>();
  readonly #problems: string[] = [];

  source(name: string): void {
    if (!this.#sources.has(name)) this.#sources.set(name, { received: 0 });
  }

  add(source: string, events: readonly UnindexedEvent[]): void {
    this.source(source);
    const state = this.#sources.get(source)!;
    state.received += events.length;
    for (const event of events) this.#events.push(event);
  }

  /** Local events (the nemesis) need no count: they cannot be lost in transit. */
  addLocal(event: UnindexedEvent): void {
    this.#events.push(event);
  }

  announce(source: string, count: number, failure?: string): void {
    this.source(source);
    const state = this.#sources.get(source)!;
    state.announced = count;
    if (failure) state.failure = failure;
  }

  /** Notes something that makes the history untrustworthy (a crash, an abort). */
  problem(message: string): void {
    this.#problems.push(message);
  }

  get size(): number {
    return this.#events.length;
  }

  /** Events completed since `since` ns, for the ops/s progress figure. */
  completionsSince(since: number): number {
    let n = 0;
    for (let i = this.#events.length - 1; i >= 0 && n < 100_000; i--) {
      const e = this.#events[i]!;
      if (e.time < since) break;
      if (typeof e.process === 'number' && e.type !== 'invoke') n++;
    }
    return n;
  }

  /** Why the history cannot be trusted to be complete; empty when it can. */
  completeness(): string[] {
    const problems = [...this.#problems];
    for (const [name, state] of this.#sources) {
      if (state.announced === undefined) problems.push(`${name} ended without reporting its event count`);
      else if (state.announced !== state.received) {
        problems.push(`${name} sent ${state.announced} events, ${state.received} arrived`);
      }
      if (state.failure) problems.push(`${name} crashed: ${state.failure.split('\n')[0]}`);
    }
    return problems;
  }

  history(): HistoryEvent[] {
    const ordered = this.#events.map((event, arrival) => ({ event, arrival }));
    ordered.sort((a, b) => a.event.time - b.event.time || a.arrival - b.arrival);
    return ordered.map(({ event }, index) => ({ index, ...event }));
  }
}

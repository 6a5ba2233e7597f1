import type { HistoryEvent } from '../src/history/types.js';

/** Builds histories line by line, numbering indices, for the lock checker tests. */
export class HistoryBuilder {
  readonly events: HistoryEvent[] = [];

  resource(time: number, f: string, value: Record<string, unknown>, key?: string): this {
    return this.push({
      time,
      process: 'resource',
      type: 'ok',
      f,
      value,
      ...(key === undefined ? {} : { key }),
    });
  }

  client(time: number, process: number, type: HistoryEvent['type'], f: string, value: unknown = null): this {
    return this.push({ time, process, type, f, value });
  }

  /** A full critical section of `client` with `fence`, entered at `from` and left at `to`. */
  section(client: number, fence: number, from: number, to: number, key?: string): this {
    this.resource(from, 'enter', { client, fence: String(fence), accepted: true }, key);
    return this.resource(to, 'leave', { client, fence: String(fence) }, key);
  }

  private push(event: Omit<HistoryEvent, 'index'>): this {
    this.events.push({ index: this.events.length, ...event } as HistoryEvent);
    return this;
  }
}

import { monotonicNow } from '@fencekit/core';

export interface ResourceEntry {
  readonly who: string;
  readonly event: string;
  readonly at: number;
}

/**
 * What the protected resource saw, in order, stamped on one monotonic clock: "A stopped" (its
 * lease.signal fired), "B granted", writes accepted or refused. Ordering claims are checked here.
 */
export class ResourceLog {
  readonly entries: ResourceEntry[] = [];

  record(who: string, event: string): void {
    this.entries.push({ who, event, at: monotonicNow() });
  }

  at(who: string, event: string): number {
    const entry = this.entries.find((e) => e.who === who && e.event === event);
    if (!entry) throw new Error(`no "${who} ${event}" in the resource log: ${this.describe()}`);
    return entry.at;
  }

  describe(): string {
    const start = this.entries[0]?.at ?? 0;
    return this.entries.map((e) => `+${(e.at - start).toFixed(0)}ms ${e.who} ${e.event}`).join(', ');
  }
}

import type { HistoryEvent } from '../src/history/types.js';

/**
 * Builds client histories with lease facts in the documented format (README, "Lease histories"):
 * times in ns, `validUntil` and `at` as decimal strings, as the harness writes them.
 */
export class LeaseHistory {
  readonly events: HistoryEvent[] = [];

  op(
    process: number | string,
    f: string,
    from: number,
    to: number | undefined,
    input: unknown,
    type: 'ok' | 'fail' | 'info' = 'ok',
    output: unknown = null,
  ): this {
    this.push({ time: from, process, type: 'invoke', f, value: input });
    if (to !== undefined) this.push({ time: to, process, type, f, value: output });
    return this;
  }

  /** An acquire granted at `at` (invoked 1 ns before) with `validUntil`; `grant` names it. */
  grant(
    process: number,
    grant: string,
    at: number,
    validUntil: number | null,
    resource = 'r',
    fence?: number,
  ): this {
    return this.op(process, 'acquire', at - 1, at, { resource, waitMs: 1000 }, 'ok', {
      grant,
      resource,
      fence: fence === undefined ? null : String(fence),
      validUntil: validUntil === null ? null : String(validUntil),
      at: String(at),
    });
  }

  /** A `buy` whose check saw `held` (and `validUntil`) at `at`. */
  check(process: number, grant: string, at: number, held: boolean, validUntil?: number): this {
    const lease = {
      grant,
      held,
      at: String(at),
      ...(validUntil === undefined ? {} : { validUntil: String(validUntil) }),
    };
    return this.op(process, 'buy', at, at + 1, { grant }, 'ok', { lease });
  }

  release(process: number, grant: string, at: number, lost?: { at: number; reason: string }): this {
    const lease = lost ? { lease: { grant, held: false, at: String(lost.at), reason: lost.reason } } : {};
    return this.op(process, 'release', at, at + 1, { grant, boundMs: 5000, ...lease });
  }

  fault(fault: string, from: number, to: number | undefined, extra: Record<string, unknown> = {}): this {
    this.op('nemesis', 'start', from, from, { fault }, 'ok', { fault, ...extra });
    if (to !== undefined) this.op('nemesis', 'stop', to, to, { fault }, 'ok', { fault });
    return this;
  }

  private push(event: Omit<HistoryEvent, 'index'>): void {
    this.events.push({ index: this.events.length, ...event } as HistoryEvent);
  }

  /** In time order, re-indexed (as the harness writes histories). */
  sorted(): HistoryEvent[] {
    return [...this.events]
      .sort((a, b) => a.time - b.time || a.index - b.index)
      .map((e, index) => ({ ...e, index }));
  }
}

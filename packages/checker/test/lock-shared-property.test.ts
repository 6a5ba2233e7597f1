import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../src/history/types.js';
import { checkReadWriteLock } from '../src/lock/rwlock.js';
import { checkSemaphore } from '../src/lock/semaphore.js';

/**
 * The semaphore and read-write lock checks against deliberately simple references written from the
 * README's rules, over random resource histories: few distinct times (ties are common, a leave at the
 * instant of its own entry included), lines shuffled in the file, two resources, four clients.
 * References: a holder is an entry to the same client's next leave in the resource's order (time, then
 * index); the permits held at instant t are those of holders with start ≤ t < end; two holders overlap
 * when each starts before the other ends and neither is empty.
 */
const RUNS = 2_000;

interface Line {
  f: 'enter' | 'leave';
  key: string;
  client: number;
  time: number;
  permits: number;
  mode: 'read' | 'write';
}

const line = fc.record({
  f: fc.constantFrom<'enter' | 'leave'>('enter', 'leave'),
  key: fc.constantFrom('', 'a'),
  client: fc.integer({ min: 1, max: 4 }),
  time: fc.integer({ min: 0, max: 10 }),
  permits: fc.integer({ min: 1, max: 3 }),
  mode: fc.constantFrom<'read' | 'write'>('read', 'read', 'write'),
});

/** Lines in file order, indexed; an entry by a client already inside is dropped (the checks refuse it). */
function history(lines: Line[], prefix: 'sem' | 'rw', order: number[]): HistoryEvent[] {
  const ordered = lines
    .map((l, i) => ({ l, i }))
    .sort((a, b) => a.l.time - b.l.time || a.i - b.i)
    .map((x) => x.l);
  const inside = new Set<string>();
  const kept = ordered.filter((l) => {
    const who = `${l.key}/${l.client}`;
    if (l.f === 'leave') {
      inside.delete(who);
      return true;
    }
    if (inside.has(who)) return false;
    inside.add(who);
    return true;
  });
  const events = kept.map(
    (l, index): HistoryEvent => ({
      index,
      time: l.time,
      process: 'resource',
      type: 'ok',
      f: `${prefix}-${l.f}`,
      ...(l.key === '' ? {} : { key: l.key }),
      value:
        prefix === 'sem'
          ? { client: l.client, permits: l.permits, limit: 3 }
          : { client: l.client, mode: l.mode, accepted: true },
    }),
  );
  // The file's order is shuffled; the resource's order stays (time, index).
  return order.length === events.length ? order.map((i) => events[i]!) : events;
}

interface RefHolding {
  key: string;
  start: number;
  end: number;
  permits: number;
  mode: 'read' | 'write';
}

function referenceHoldings(events: HistoryEvent[]): RefHolding[] {
  const sorted = [...events].sort((a, b) => a.time - b.time || a.index - b.index);
  const open = new Map<string, RefHolding>();
  const all: RefHolding[] = [];
  for (const e of sorted) {
    const v = e.value as { client: number; permits?: number; mode?: 'read' | 'write' };
    const who = `${e.key ?? ''}/${v.client}`;
    if (e.f.endsWith('-leave')) {
      const h = open.get(who);
      if (h) h.end = e.time;
      open.delete(who);
    } else {
      const h = {
        key: e.key ?? '',
        start: e.time,
        end: Infinity,
        permits: v.permits ?? 1,
        mode: v.mode ?? 'read',
      };
      open.set(who, h);
      all.push(h);
    }
  }
  return all.filter((h) => h.end > h.start);
}

const shuffled = (n: number) => fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n });

describe('shared-lock checks against their references', () => {
  it('semaphore: the most permits held at one instant, and whether it passed the limit', () => {
    fc.assert(
      fc.property(
        fc
          .array(line, { maxLength: 24 })
          .chain((lines) => fc.tuple(fc.constant(lines), shuffled(lines.length))),
        ([lines, order]) => {
          const events = history(lines, 'sem', order);
          const holdings = referenceHoldings(events);
          let most = 0;
          for (const at of holdings) {
            for (const key of [at.key]) {
              const held = holdings
                .filter((h) => h.key === key && h.start <= at.start && at.start < h.end)
                .reduce((sum, h) => sum + h.permits, 0);
              most = Math.max(most, held);
            }
          }
          const result = checkSemaphore(events);
          if (events.every((e) => !e.f.endsWith('-enter'))) {
            expect(result.verdict).toBe('unknown');
            return;
          }
          expect(result.stats.maxHeld).toBe(most);
          expect(result.verdict).toBe(most > 3 ? 'illegal' : 'ok');
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('read-write lock: every pair of overlapping holders with a writer among them', () => {
    fc.assert(
      fc.property(
        fc
          .array(line, { maxLength: 24 })
          .chain((lines) => fc.tuple(fc.constant(lines), shuffled(lines.length))),
        ([lines, order]) => {
          const events = history(lines, 'rw', order);
          const holdings = referenceHoldings(events);
          let pairs = 0;
          for (let i = 0; i < holdings.length; i++) {
            for (let j = i + 1; j < holdings.length; j++) {
              const a = holdings[i]!;
              const b = holdings[j]!;
              if (a.key !== b.key || (a.mode !== 'write' && b.mode !== 'write')) continue;
              if (a.start < b.end && b.start < a.end) pairs++;
            }
          }
          const result = checkReadWriteLock(events);
          if (events.every((e) => !e.f.endsWith('-enter'))) {
            expect(result.verdict).toBe('unknown');
            return;
          }
          expect(result.stats.writerOverlaps).toBe(pairs);
          expect(result.verdict).toBe(pairs > 0 ? 'illegal' : 'ok');
        },
      ),
      { numRuns: RUNS },
    );
  });
});

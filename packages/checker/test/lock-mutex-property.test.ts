import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../src/history/types.js';
import { checkMutex } from '../src/lock/index.js';

/** Sections of distinct clients with all 2n times distinct, so overlap is plain interval intersection. */
const sections = fc
  .integer({ min: 1, max: 40 })
  .chain((n) =>
    fc.uniqueArray(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 2 * n, maxLength: 2 * n }),
  )
  .map((times) => {
    const out: { client: number; start: number; end: number }[] = [];
    for (let i = 0; i < times.length; i += 2) {
      const [a, b] = [times[i]!, times[i + 1]!];
      out.push({ client: i / 2, start: Math.min(a, b), end: Math.max(a, b) });
    }
    return out;
  });

function toHistory(list: { client: number; start: number; end: number }[], order: number[]): HistoryEvent[] {
  const lines = list.flatMap((s) => [
    { time: s.start, f: 'enter', value: { client: s.client, fence: String(s.client), accepted: true } },
    { time: s.end, f: 'leave', value: { client: s.client } },
  ]);
  // Lines in an arbitrary file order: the checker must order them by time itself.
  return order
    .filter((i) => i < lines.length)
    .map((i, index) => ({ index, process: 'resource', type: 'ok', ...lines[i]! }) as HistoryEvent);
}

describe('checkMutex against brute force', () => {
  it('finds exactly the overlapping pairs, with their windows, whatever the line order', () => {
    fc.assert(
      fc.property(sections, fc.infiniteStream(fc.nat()), (list, noise) => {
        const order = [...Array(list.length * 2).keys()];
        const keys = order.map(() => noise.next().value as number);
        order.sort((a, b) => keys[a]! - keys[b]! || a - b);
        const result = checkMutex(toHistory(list, order), { maxViolations: 10_000 });

        const expected: string[] = [];
        for (let i = 0; i < list.length; i++) {
          for (let j = i + 1; j < list.length; j++) {
            const [a, b] = [list[i]!, list[j]!];
            const from = Math.max(a.start, b.start);
            const to = Math.min(a.end, b.end);
            if (from < to)
              expected.push([Math.min(a.client, b.client), Math.max(a.client, b.client), from, to].join());
          }
        }
        const found = result.violations.map((v) =>
          [
            Math.min(v.first.client as number, v.second.client as number),
            Math.max(v.first.client as number, v.second.client as number),
            v.from,
            v.to,
          ].join(),
        );
        expect(found.sort()).toEqual(expected.sort());
        expect(result.verdict).toBe(expected.length > 0 ? 'illegal' : 'ok');
        expect(result.stats.sections).toBe(list.length);
      }),
      { numRuns: 300 },
    );
  });
});

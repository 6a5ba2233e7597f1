import { describe, expect, it } from 'vitest';
import type { Operation } from '../src/history/index.js';
import { renderHtml } from '../src/html/index.js';

/**
 * Review 15b F4: `--html` on an independent history drew each key's partition by filtering every op of
 * the history, K keys × N ops. The page now looks each partition's ops up once: the ops array is read
 * a bounded number of times per op, whatever the number of keys. Counted by behaviour (element reads
 * of the history array), not by wall time.
 */
function countedHistory(keys: number): { history: Operation[]; reads: () => number } {
  const ops: Operation[] = [];
  for (let i = 0; i < keys; i++) {
    ops.push({
      id: i,
      process: i % 5,
      f: 'write',
      key: `k${i}`,
      input: i,
      output: i,
      call: 2 * i,
      ret: 2 * i + 1,
      status: 'ok',
    });
  }
  let reads = 0;
  const history = new Proxy(ops, {
    get(target, property, receiver) {
      if (typeof property === 'string' && /^\d+$/.test(property)) reads++;
      return Reflect.get(target, property, receiver);
    },
  });
  return { history, reads: () => reads };
}

describe('the HTML page of an independent history with many keys', () => {
  for (const byIds of [true, false]) {
    it(`reads each op a bounded number of times (${byIds ? 'partitions name their op ids' : 'partitions by key'})`, () => {
      const keys = 400;
      const { history, reads } = countedHistory(keys);
      const partitions = Array.from({ length: keys }, (_, i) => ({
        key: `k${i}`,
        verdict: 'ok' as const,
        ...(byIds ? { operations: [i] } : {}),
        linearization: [i],
      }));
      const page = renderHtml({ verdict: 'ok', partitions }, history, { timeUnit: 'index' });
      expect(page.match(/<section class="partition"/g)?.length).toBe(keys);
      // Every partition drew its one op, and only it.
      expect(page.match(/<g class="op /g)?.length).toBe(keys);
      expect(page).toContain('data-key="k399"');
      // Before the fix: keys × ops = 160 000 reads. Linear: a few per op.
      expect(reads()).toBeLessThanOrEqual(4 * keys);
    });
  }
});

import { describe, expect, it } from 'vitest';
import type { HistoryEvent } from '../src/history/types.js';
import {
  checkCron,
  checkElection,
  checkFences,
  checkInventory,
  checkMutex,
  LockHistoryError,
} from '../src/lock/index.js';
import { nothingToCheck, runCheckers } from '../src/verdict.js';
import { HistoryBuilder } from './lock-history.js';

// One test per rule of the README's "Lock checkers: exact semantics", and one per case issue #20
// found judged wrong (those failed on the code before the fix; each says so).

/** The lines in another file order, indices unchanged: every checker must order them itself. */
function reversed(events: readonly HistoryEvent[]): HistoryEvent[] {
  return [...events].reverse();
}

describe('nothing to check', () => {
  it('is one shape, defined in verdict.ts: unknown with the reason, never ok', () => {
    expect(nothingToCheck('no resource "claim" lines', { claims: 0 })).toEqual({
      verdict: 'unknown',
      violations: [],
      stats: { claims: 0 },
      nothingToCheck: 'no resource "claim" lines',
      error: 'nothing to check: no resource "claim" lines',
    });
  });

  it('a mutex-only history leaves inventory, cron and election unknown, never ok (was: all ok)', async () => {
    const h = new HistoryBuilder().section(1, 1, 10, 20).section(2, 2, 30, 40);
    const { results, verdict } = await runCheckers(
      {
        mutex: (x: HistoryEvent[]) => checkMutex(x),
        fence: (x: HistoryEvent[]) => checkFences(x),
        inventory: (x: HistoryEvent[]) => checkInventory(x, { initialStock: 10 }),
        cron: (x: HistoryEvent[]) => checkCron(x),
        election: (x: HistoryEvent[]) => checkElection(x),
      },
      h.events,
    );
    expect(results.mutex?.verdict).toBe('ok');
    expect(results.fence?.verdict).toBe('ok');
    for (const name of ['inventory', 'cron', 'election']) {
      expect(results[name]).toMatchObject({ verdict: 'unknown', nothingToCheck: expect.any(String) });
    }
    expect(verdict).toBe('unknown');
  });

  it('each checker says so on an empty history', () => {
    for (const result of [
      checkMutex([]),
      checkFences([]),
      checkInventory([], { initialStock: 3 }),
      checkCron([]),
      checkElection([]),
    ]) {
      expect(result.verdict).toBe('unknown');
      expect(result.nothingToCheck).toMatch(/^no /);
    }
  });

  it('a history of refusals only is judged (ok): the resource saw the attempts', () => {
    const h = new HistoryBuilder()
      .resource(1, 'enter', { client: 1, fence: '1', accepted: false })
      .resource(2, 'claim', { client: 1, term: '1', accepted: false })
      .resource(3, 'run', { client: 1, tick: 1, accepted: false });
    expect(checkMutex(h.events).verdict).toBe('ok');
    expect(checkElection(h.events).verdict).toBe('ok');
    expect(checkCron(h.events).verdict).toBe('ok');
  });
});

describe('order: (time, then history index), whatever the order of the lines', () => {
  it('election: a hand-over within one nanosecond, in index order, is not two leaders (was: two-leaders)', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: '1', accepted: true })
      .resource(5, 'claim', { client: 1, term: '1', accepted: true })
      .resource(5, 'claim', { client: 2, term: '2', accepted: true })
      .resource(9, 'claim', { client: 2, term: '2', accepted: true });
    expect(checkElection(h.events)).toMatchObject({ verdict: 'ok', stats: { reigns: 2 } });
    expect(checkElection(reversed(h.events)).verdict).toBe('ok');
  });

  it('election: the new leader first at the same nanosecond (lower index) overlaps the old one', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: '1', accepted: true })
      .resource(5, 'claim', { client: 2, term: '2', accepted: true })
      .resource(5, 'claim', { client: 1, term: '1', accepted: true });
    const result = checkElection(h.events);
    expect(result.violations.map((v) => v.kind).sort()).toEqual(['deposed-claim', 'two-leaders']);
    expect(result.violations.find((v) => v.kind === 'two-leaders')).toMatchObject({ from: 5, to: 5 });
  });

  it('mutex: a leave and an enter at the same time hand over in index order, overlap otherwise', () => {
    const handOver = new HistoryBuilder()
      .resource(10, 'enter', { client: 1, accepted: true })
      .resource(20, 'leave', { client: 1 })
      .resource(20, 'enter', { client: 2, accepted: true })
      .resource(30, 'leave', { client: 2 });
    expect(checkMutex(reversed(handOver.events)).verdict).toBe('ok');
    const early = new HistoryBuilder()
      .resource(10, 'enter', { client: 1, accepted: true })
      .resource(20, 'enter', { client: 2, accepted: true })
      .resource(20, 'leave', { client: 1 })
      .resource(30, 'leave', { client: 2 });
    expect(checkMutex(reversed(early.events))).toMatchObject({
      verdict: 'illegal',
      violations: [{ from: 20, to: 20 }],
    });
  });

  it('fence: equal times in index order decide which fence came first', () => {
    const h = new HistoryBuilder()
      .resource(5, 'write', { client: 2, stock: 1, fence: '8', accepted: true })
      .resource(5, 'write', { client: 1, stock: 0, fence: '7', accepted: true });
    expect(checkFences(reversed(h.events)).violations).toEqual([
      expect.objectContaining({ kind: 'stale-accepted', client: 1, fence: '7', highest: '8' }),
    ]);
  });

  it('inventory: buy lines out of file order are paired by index (was: exit 3, LockHistoryError)', () => {
    const h = new HistoryBuilder().resource(0, 'init', { stock: 2 });
    h.client(10, 1, 'invoke', 'buy')
      .resource(11, 'read', { client: 1, stock: 2 })
      .resource(12, 'write', { client: 1, stock: 1, accepted: true })
      .client(13, 1, 'ok', 'buy')
      .client(20, 1, 'invoke', 'buy')
      .resource(21, 'read', { client: 1, stock: 1 })
      .resource(22, 'write', { client: 1, stock: 0, accepted: true })
      .client(23, 1, 'ok', 'buy');
    const result = checkInventory(reversed(h.events));
    expect(result.verdict).toBe('ok');
    expect(result.stats['']).toMatchObject({ sales: 2, acknowledged: 2, decrements: 2 });
  });
});

describe('election', () => {
  it('a shared term without overlap reports a window that is not inverted (was: from after to)', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: 4, accepted: true })
      .resource(2, 'claim', { client: 1, term: 4, accepted: true })
      .resource(5, 'claim', { client: 2, term: 4, accepted: true })
      .resource(7, 'claim', { client: 2, term: 4, accepted: true });
    const [violation] = checkElection(h.events).violations;
    expect(violation).toMatchObject({ kind: 'two-leaders', from: 1, to: 7 });
  });

  it('reports every pair of clients sharing a term, not only neighbours (was: 2 of 3 pairs)', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: 4, accepted: true })
      .resource(3, 'claim', { client: 2, term: 4, accepted: true })
      .resource(5, 'claim', { client: 3, term: 4, accepted: true });
    const pairs = checkElection(h.events).violations.map((v) =>
      v.kind === 'two-leaders' ? [v.first.client, v.second.client].join('-') : v.kind,
    );
    expect(pairs.sort()).toEqual(['1-2', '1-3', '2-3']);
  });

  it('re-entry: repeated claims of one client and term are one reign; fences on claims are not judged here', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: '3', fence: '9', accepted: true })
      .resource(2, 'claim', { client: 1, term: '3', fence: '1', accepted: true })
      .resource(3, 'claim', { client: 1, term: '3', accepted: true });
    expect(checkElection(h.events)).toMatchObject({ verdict: 'ok', stats: { reigns: 1, claims: 3 } });
  });
});

describe('cron', () => {
  it('keeps ticks past 2^53 exact as decimal strings (as before)', () => {
    const h = new HistoryBuilder()
      .resource(1, 'run', { client: 1, tick: '9007199254740993' })
      .resource(2, 'run', { client: 2, tick: '9007199254740992' });
    expect(checkCron(h.events)).toMatchObject({ verdict: 'ok', stats: { ticks: 2 } });
  });

  it('refuses a tick given as a JSON number past 2^53, as fences are refused', () => {
    // JSON.parse has already rounded 9007199254740993 to 9007199254740992: it cannot be told apart.
    const h = new HistoryBuilder()
      .resource(1, 'run', { client: 1, tick: 2 ** 53 })
      .resource(2, 'run', { client: 2, tick: 2 ** 53 });
    expect(() => checkCron(h.events)).toThrow(LockHistoryError);
    expect(() => checkCron(new HistoryBuilder().resource(1, 'run', { client: 1, tick: 1.5 }).events)).toThrow(
      /value\.tick/,
    );
  });

  it('an integer tick is its value: 5, "5" and "05" are one tick (was: "05" a different one)', () => {
    const h = new HistoryBuilder()
      .resource(1, 'run', { client: 1, tick: 5 })
      .resource(2, 'run', { client: 2, tick: '05' })
      .resource(3, 'run', { client: 3, tick: 'daily-05' })
      .resource(4, 'run', { client: 4, tick: 'daily-5' });
    const result = checkCron(h.events);
    expect(result.violations).toEqual([expect.objectContaining({ tick: '5', runs: 2, clients: [1, 2] })]);
    expect(result.stats.ticks).toBe(3);
  });

  it('a missing job and "" are the same (default) job; a job that is not a string is refused', () => {
    const h = new HistoryBuilder()
      .resource(1, 'run', { client: 1, tick: 1 })
      .resource(2, 'run', { client: 2, tick: 1, job: '' })
      .resource(3, 'run', { client: 3, tick: 1, job: 'report' });
    expect(checkCron(h.events).violations).toEqual([expect.objectContaining({ job: '', runs: 2 })]);
    const bad = new HistoryBuilder().resource(1, 'run', { client: 1, tick: 1, job: 7 });
    expect(() => checkCron(bad.events)).toThrow(/value\.job/);
  });

  it('re-entry: the same client running a tick twice is a duplicate too', () => {
    const h = new HistoryBuilder()
      .resource(1, 'run', { client: 1, tick: 1 })
      .resource(2, 'run', { client: 1, tick: 1 });
    expect(checkCron(h.events).stats.duplicates).toBe(1);
  });
});

describe('inventory', () => {
  it('attributes buys that name no resource to the only (keyed) resource (was: refused)', () => {
    const h = new HistoryBuilder().resource(0, 'init', { stock: 1 }, 'sku');
    h.client(1, 1, 'invoke', 'buy')
      .resource(2, 'write', { client: 1, stock: 0, accepted: true }, 'sku')
      .client(3, 1, 'ok', 'buy');
    const result = checkInventory(h.events);
    expect(result.verdict).toBe('ok');
    expect(result.stats.sku).toMatchObject({ acknowledged: 1, decrements: 1 });
  });

  it('with several resources, judges buys that name none against all resources together', () => {
    const h = new HistoryBuilder()
      .resource(0, 'init', { stock: 1 }, 'a')
      .resource(0, 'init', { stock: 1 }, 'b')
      .client(1, 1, 'invoke', 'buy')
      .resource(2, 'write', { client: 1, stock: 0, accepted: true }, 'a')
      .client(3, 1, 'ok', 'buy')
      .client(4, 2, 'invoke', 'buy')
      .resource(5, 'write', { client: 2, stock: 0, accepted: true }, 'b')
      .client(6, 2, 'fail', 'buy');
    const result = checkInventory(h.events);
    expect(result.violations).toEqual([expect.objectContaining({ kind: 'phantom-sale', key: '' })]);
    expect(result.stats['']).toMatchObject({ initial: 2, final: 0, acknowledged: 1, failed: 1 });
  });

  it('an init line is the starting stock wherever it sits, initialStock or not (was: a false lost update)', () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'invoke', 'buy')
      .resource(2, 'write', { client: 1, stock: 4, accepted: true })
      .client(3, 1, 'ok', 'buy')
      .resource(3, 'init', { stock: 5 })
      .client(4, 1, 'invoke', 'buy')
      .resource(5, 'write', { client: 1, stock: 3, accepted: true })
      .client(6, 1, 'ok', 'buy');
    for (const options of [{}, { initialStock: 5 }, { initialStock: 99 }]) {
      const result = checkInventory(h.events, options);
      expect(result.verdict).toBe('ok');
      expect(result.stats['']).toMatchObject({ initial: 5, final: 3, writesAccepted: 2 });
    }
  });

  it('without an init line or initialStock the stock is unknown: a verdict, not an exception (was: exit 3)', () => {
    const h = new HistoryBuilder().resource(1, 'write', { client: 1, stock: 4, accepted: true });
    expect(checkInventory(h.events)).toMatchObject({
      verdict: 'unknown',
      error: /no starting stock for resource ""/,
    });
    // Another resource that can be judged still convicts.
    h.resource(2, 'init', { stock: 5 }, 'b').resource(
      3,
      'write',
      { client: 1, stock: 3, accepted: true },
      'b',
    );
    expect(checkInventory(h.events).verdict).toBe('illegal');
  });

  it('writes with no recorded buy: only the write-by-write checks apply, not the units-gone bound', () => {
    const h = new HistoryBuilder()
      .resource(0, 'init', { stock: 5 })
      .resource(1, 'write', { client: 1, stock: 4, accepted: true })
      .resource(2, 'write', { client: 2, stock: 3, accepted: true });
    expect(checkInventory(h.events)).toMatchObject({
      verdict: 'ok',
      stats: { '': { sales: 0, decrements: 2 } },
    });
  });

  it('two init lines for one resource are malformed', () => {
    const h = new HistoryBuilder().resource(0, 'init', { stock: 5 }).resource(1, 'init', { stock: 5 });
    expect(() => checkInventory(h.events)).toThrow(LockHistoryError);
  });
});

describe('fences on reads and leaves; leaves match by client', () => {
  it('a fence on a read or a leave is not judged and does not make a history fenced', () => {
    const h = new HistoryBuilder()
      .resource(1, 'read', { client: 1, stock: 3, fence: '9' })
      .resource(2, 'leave', { client: 1, fence: '9' })
      .resource(3, 'read', { client: 2, stock: 3, fence: '1' });
    expect(checkFences(h.events)).toMatchObject({ verdict: 'unknown', nothingToCheck: expect.any(String) });
    h.resource(4, 'write', { client: 2, stock: 2, fence: '2', accepted: true });
    expect(checkFences(h.events)).toMatchObject({ verdict: 'ok', stats: { accepted: 1 } });
  });

  it("mutex: a leave closes its client's section whatever fence it carries", () => {
    const h = new HistoryBuilder()
      .resource(1, 'enter', { client: 1, fence: '1', accepted: true })
      .resource(2, 'leave', { client: 1, fence: '2' })
      .resource(3, 'enter', { client: 2, fence: '2', accepted: true })
      .resource(4, 'leave', { client: 2, fence: '2' });
    expect(checkMutex(h.events)).toMatchObject({ verdict: 'ok', stats: { sections: 2, open: 0 } });
  });

  it('mutex: re-entry folds into the open section, which the first leave closes', () => {
    const h = new HistoryBuilder()
      .resource(1, 'enter', { client: 1, accepted: true })
      .resource(2, 'enter', { client: 1, accepted: true })
      .resource(3, 'leave', { client: 1 })
      .resource(4, 'enter', { client: 2, accepted: true })
      .resource(5, 'leave', { client: 1 })
      .resource(6, 'leave', { client: 2 });
    expect(checkMutex(h.events)).toMatchObject({
      verdict: 'ok',
      stats: { sections: 2, reentries: 1, unmatchedLeaves: 1 },
    });
  });
});

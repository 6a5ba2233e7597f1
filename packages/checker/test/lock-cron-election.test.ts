import { describe, expect, it } from 'vitest';
import { checkCron, checkElection } from '../src/lock/index.js';
import { HistoryBuilder } from './lock-history.js';

describe('checkCron', () => {
  it('counts duplicate runs per tick and per 1000 ticks; refused runs do not count', () => {
    const h = new HistoryBuilder();
    for (let tick = 0; tick < 10; tick++) h.resource(tick * 10, 'run', { client: tick % 3, tick });
    h.resource(11, 'run', { client: 2, tick: 1, fence: '7' });
    h.resource(12, 'run', { client: 0, tick: 1, fence: '8' });
    h.resource(21, 'run', { client: 0, tick: 2, accepted: false });
    const result = checkCron(h.events, { expectedTicks: 12 });
    expect(result.verdict).toBe('illegal');
    expect(result.stats).toMatchObject({
      ticks: 10,
      runs: 12,
      duplicates: 2,
      duplicatesPer1000Ticks: 200,
      refused: 1,
      missedTicks: 2,
    });
    expect(result.violations).toEqual([
      expect.objectContaining({ tick: '1', runs: 3, clients: [1, 2, 0], fences: [undefined, '7', '8'] }),
    ]);
  });
});

describe('checkElection', () => {
  it('passes one leader per term in sequence and counts refused claims of deposed leaders', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: 1, accepted: true })
      .resource(2, 'claim', { client: 1, term: 1, accepted: true })
      .resource(3, 'claim', { client: 2, term: '2', accepted: true })
      .resource(4, 'claim', { client: 1, term: 1, accepted: false });
    expect(checkElection(h.events)).toMatchObject({ verdict: 'ok', stats: { reigns: 2, staleRefused: 1 } });
  });

  it('convicts two leaders at once and a claim accepted from a deposed leader', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: 1, accepted: true })
      .resource(2, 'claim', { client: 2, term: 2, accepted: true })
      .resource(3, 'claim', { client: 1, term: 1, accepted: true });
    const result = checkElection(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations.map((v) => v.kind).sort()).toEqual(['deposed-claim', 'two-leaders']);
  });

  it('convicts two clients accepted under the same term even when their reigns do not overlap', () => {
    const h = new HistoryBuilder()
      .resource(1, 'claim', { client: 1, term: 4, accepted: true })
      .resource(5, 'claim', { client: 2, term: 4, accepted: true });
    const result = checkElection(h.events);
    expect(result.violations).toEqual([expect.objectContaining({ kind: 'two-leaders' })]);
  });

  it('convicts 500 clients in one term, keeping 1 000 pairs and counting all (was: stack overflow, unknown)', () => {
    const h = new HistoryBuilder();
    for (let i = 0; i < 500; i++) h.resource(i, 'claim', { client: i, term: 1, accepted: true });
    const result = checkElection(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations).toHaveLength(1000);
    expect(result.stats.twoLeaders).toBe((500 * 499) / 2);
  });

  it('counts the pairs of 6 000 overlapping claims without listing them (was: minutes, 4.5 GB)', () => {
    const h = new HistoryBuilder();
    // Every client claims term 1 at i and again at the end: 6 000 reigns open at once.
    for (let i = 0; i < 6000; i++) h.resource(i, 'claim', { client: i, term: 1, accepted: true });
    for (let i = 0; i < 6000; i++) h.resource(10_000 + i, 'claim', { client: i, term: 1, accepted: true });
    const started = performance.now();
    const result = checkElection(h.events, { maxViolations: 10 });
    expect(performance.now() - started).toBeLessThan(3000);
    expect(result.violations).toHaveLength(10);
    expect(result.stats.twoLeaders).toBe((6000 * 5999) / 2);
  });

  it('ends with an error past its deadline rather than running on', () => {
    const h = new HistoryBuilder();
    for (let i = 0; i < 5000; i++) h.resource(i, 'claim', { client: i, term: 1, accepted: true });
    expect(() => checkElection(h.events, { deadline: performance.now() - 1 })).toThrow(/time budget/);
  });

  it('counts each pair once when client ids differ only in type (1 and "1" are two clients)', () => {
    const h = new HistoryBuilder()
      .resource(0, 'claim', { client: 1, term: 1, accepted: true })
      .resource(5, 'claim', { client: '1', term: 1, accepted: true })
      .resource(10, 'claim', { client: 1, term: 1, accepted: true });
    const result = checkElection(h.events);
    expect(result.stats.twoLeaders).toBe(1);
    expect(result.violations).toHaveLength(1);
  });
});

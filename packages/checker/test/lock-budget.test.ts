import { describe, expect, it } from 'vitest';
import { checkCron, checkElection, checkFences, checkInventory, checkMutex } from '../src/lock/index.js';
import { runCheckers } from '../src/verdict.js';
import { HistoryBuilder } from './lock-history.js';

/** 5 000 accepted enters and leaves, fenced writes and runs: more events than one budget step (4096). */
function busyHistory(): HistoryBuilder {
  const h = new HistoryBuilder().resource(0, 'init', { stock: 10_000 });
  for (let i = 1; i <= 5000; i++) {
    h.resource(4 * i, 'enter', { client: 1, fence: String(i), accepted: true });
    h.resource(4 * i + 1, 'write', { client: 1, stock: 10_000 - i, fence: String(i), accepted: true });
    h.resource(4 * i + 2, 'run', { client: 1, tick: i });
    h.resource(4 * i + 2, 'claim', { client: 1, term: i, accepted: true });
    h.resource(4 * i + 3, 'leave', { client: 1 });
  }
  return h;
}

describe('lock checkers stop at their deadline (--timeout covered reading only)', () => {
  const h = busyHistory();
  const past = () => performance.now() - 1;
  const checks = {
    mutex: () => checkMutex(h.events, { deadline: past() }),
    fence: () => checkFences(h.events, { deadline: past() }),
    inventory: () => checkInventory(h.events, { deadline: past() }),
    cron: () => checkCron(h.events, { deadline: past() }),
    election: () => checkElection(h.events, { deadline: past() }),
  };

  it('each ends unknown, naming the budget, when its deadline has passed', async () => {
    const ran = await runCheckers(checks);
    for (const [name, result] of Object.entries(ran.results)) {
      expect(result, name).toMatchObject({ verdict: 'unknown', error: expect.stringMatching(/time budget/) });
    }
    expect(ran.verdict).toBe('unknown');
  });

  it('each judges the same history when the deadline is ahead', () => {
    const later = performance.now() + 60_000;
    expect(checkMutex(h.events, { deadline: later }).verdict).toBe('ok');
    expect(checkFences(h.events, { deadline: later }).verdict).toBe('ok');
    expect(checkInventory(h.events, { deadline: later }).verdict).toBe('ok');
    expect(checkElection(h.events, { deadline: later }).verdict).toBe('ok');
  });
});

describe('the fences check stops at its deadline while it reads grants for reissued fences', () => {
  // 5 000 grants, every fence granted twice (a counter that restarted), no resource event: only the grant
  // scan and the reissued violations take ticks.
  const h = new HistoryBuilder();
  for (let i = 0; i < 5000; i++)
    h.client(i, 1 + (i % 4), 'ok', 'acquire', { grant: `g${i}`, fence: String(i % 2500) });

  it('is unknown, naming the budget, past its deadline', async () => {
    const ran = await runCheckers({
      fence: () => checkFences(h.events, { deadline: performance.now() - 1 }),
    });
    expect(ran.results.fence).toMatchObject({
      verdict: 'unknown',
      error: expect.stringMatching(/time budget/),
    });
  });

  it('convicts every reissued fence with the deadline ahead', () => {
    const result = checkFences(h.events, { deadline: performance.now() + 60_000 });
    expect(result).toMatchObject({ verdict: 'illegal', stats: { grants: 5000, reissued: 2500 } });
    expect(result.violations).toHaveLength(2500);
  });
});

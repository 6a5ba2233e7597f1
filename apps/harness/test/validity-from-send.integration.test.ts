import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { HistoryEvent } from '@fencekit/checker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureMutants } from '../src/mutation/measure.js';
import { loadMutants } from '../src/mutation/mutants-module.js';
import { linesTo } from '../src/run/progress.js';
import { buildMutants } from './support/mutants.js';
import { reportsDir, run, stats } from './support/runs.js';

/**
 * The lease check's `validity-past-send` on real redis-servers: a Redis or Redlock grant's `validUntil`
 * must not exceed its request's send + TTL (the server counts the TTL from receiving it). The mutant
 * that counts from the answer (`redis-validity-from-answer`, never convicted by overlaps alone: 0 of 5
 * seeds) is convicted by it, and the unmutated Redis and Redlock adapters, whose grants all record
 * their send, are not. Short runs: the rule judges every grant, so a few seconds suffice.
 */
const out = reportsDir();
const lines: string[] = [];
beforeAll(() => {
  buildMutants();
});
afterAll(() => rmSync(out, { recursive: true, force: true }));

const history = (dir: string): HistoryEvent[] =>
  readFileSync(join(dir, 'history.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as HistoryEvent);

describe('validity counted from the request’s send', () => {
  it('convicts redis-validity-from-answer by lease while the unmutated adapter stays clean', async () => {
    const mutant = (await loadMutants()).findMutant('redis-validity-from-answer');
    const { rows, baselines } = await measureMutants([mutant], {
      seeds: 1,
      budgetMs: 60_000,
      timeMs: 2_000,
      out,
      provider: 'local',
      sink: linesTo((line) => lines.push(line)),
    });
    const why = lines.filter((l) => l.startsWith('mutants:')).join('\n');
    expect(rows[0]!.note, why).toBeUndefined();
    expect(rows[0]!.convictedBy, why).toEqual(['lease']);
    expect(rows[0]!.harnessMs).toBeLessThan(60_000);
    expect(baselines[0]!.seedsTried).toBe(1);
    expect(baselines[0]!.convictions, why).toBe(0);
  }, 120_000);

  it('judges every Redlock grant and finds its drift-adjusted validity within send + TTL', async () => {
    const { run: r, results } = await run({
      backend: 'redlock',
      workload: 'mutex',
      fault: 'latency',
      fencing: false,
      time: '5s',
      seed: 1,
      out,
    });
    const lease = stats(results, 'lease');
    expect(results.checkers.lease?.verdict).toBe('ok');
    expect(lease.grants).toBeGreaterThan(0);
    // Every grant recorded its send: the rule judged them all, not none.
    expect(lease.sendChecked).toBe(lease.grants);
    expect(lease.validityPastSend).toBe(0);
    // Redlock subtracts its drift (1 % of the TTL + 2 ms), so it stays below the bound by at least that.
    expect(lease.worstSendMarginNs as number).toBeLessThan(0);
    const grants = history(r.dir).filter((e) => e.type === 'ok' && e.f === 'acquire');
    expect(grants.every((e) => typeof (e.value as { sentAt?: unknown }).sentAt === 'string')).toBe(true);
  }, 60_000);
});

import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { checkHistory } from '../src/index.js';
import { renderRunPage } from '../src/report/run-page.js';
import { runMeta, runResults } from './support/stored-runs.js';

/**
 * Issue #17: a Redis failover (or a restart without persistence) hands fences out again. The fences checker
 * convicts the lock for it (`reissued`) even when the resource refused every stale fence; the run page shows
 * both the conviction and that no stale write was accepted.
 */
const ms = 1e6;
/** A resource name as hostile as a shared reports directory can make it. */
const resource = '<img src=x onerror="window.fk=1">stock';

function history(): HistoryEvent[] {
  const lines: Omit<HistoryEvent, 'index'>[] = [
    { time: 0, process: 'resource', type: 'ok', f: 'init', value: { stock: 10 } },
    { time: 1 * ms, process: 1, type: 'invoke', f: 'acquire', value: { resource } },
    { time: 2 * ms, process: 1, type: 'ok', f: 'acquire', value: { grant: 'c1.1', resource, fence: '1' } },
    { time: 3 * ms, process: 1, type: 'invoke', f: 'buy', value: { grant: 'c1.1', fence: '1' } },
    { time: 4 * ms, process: 'resource', type: 'ok', f: 'read', value: { client: 1, stock: 10, fence: '1' } },
    {
      time: 5 * ms,
      process: 'resource',
      type: 'ok',
      f: 'write',
      value: { client: 1, stock: 9, fence: '1', accepted: true },
    },
    { time: 6 * ms, process: 1, type: 'ok', f: 'buy', value: { stock: 9 } },
    // The promoted replica never saw grant c1.1: it hands fence 1 out again, and the resource refuses it.
    { time: 7 * ms, process: 2, type: 'invoke', f: 'acquire', value: { resource } },
    { time: 8 * ms, process: 2, type: 'ok', f: 'acquire', value: { grant: 'c2.1', resource, fence: '1' } },
    { time: 9 * ms, process: 2, type: 'invoke', f: 'buy', value: { grant: 'c2.1', fence: '1' } },
    { time: 10 * ms, process: 'resource', type: 'ok', f: 'read', value: { client: 2, stock: 9, fence: '1' } },
    {
      time: 11 * ms,
      process: 'resource',
      type: 'ok',
      f: 'write',
      value: { client: 2, stock: 8, fence: '1', accepted: false },
    },
    { time: 12 * ms, process: 2, type: 'fail', f: 'buy', value: { error: 'stale fence' } },
  ];
  return lines.map((e, index) => ({ index, ...e }) as HistoryEvent);
}

describe('a fence reissued by the lock', () => {
  it('convicts the run through the fences checker, with the finding that the resource refused the stale fence', async () => {
    const outcome = await checkHistory(
      { workload: 'inventory', fenced: true, fencing: true, initialStock: 10, clients: 3 },
      history(),
      [],
    );
    const fences = outcome.checkers.fences;
    expect(fences?.verdict).toBe('illegal');
    expect(fences?.violations).toMatchObject([
      { kind: 'reissued', key: resource, fence: '1', grants: ['c1.1', 'c2.1'], indices: [2, 8], index: 8 },
    ]);
    expect(fences?.findings?.[0]).toMatch(/refused 1 stale fence and accepted 0 \(fencing held\)$/);
    expect(fences?.stats).toMatchObject({ staleRefused: 1, reissued: 1 });
    // Nothing else is wrong: the resource kept its stock right.
    expect(outcome.checkers.inventory?.verdict).toBe('ok');
    expect(outcome.verdict).toBe('illegal');
  });

  it('renders on the run page: convicted, the violation marked on both grants and listed, the finding beside it, escaped', async () => {
    const h = history();
    const outcome = await checkHistory(
      { workload: 'inventory', fenced: true, fencing: true, initialStock: 10, clients: 3 },
      h,
      [],
    );
    const html = renderRunPage(
      runMeta('reissued', { faults: ['failover-lagged'], clients: 3 }),
      runResults('reissued', { verdict: outcome.verdict, checkers: outcome.checkers }),
      h,
    );
    expect(html).toMatch(/Verdict: <strong>illegal<\/strong> — convicted by fences \(1 violation\)/);
    // One mark per grant of the reused fence, on its client's lane.
    expect(html.match(/<path class="violation"[^>]*><title>fences: reissued fence 1 on /g)).toHaveLength(2);
    expect(html).toContain('<div id="findings">');
    expect(html).toContain('(fencing held)');
    expect(html).toMatch(
      /<pre id="violations">fences: 1 \(first 1 shown\)[^<]*&quot;kind&quot;: &quot;reissued&quot;/,
    );
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=');
  });
});

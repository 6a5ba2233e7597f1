import { describe, expect, it } from 'vitest';
import { checkBounds } from '../src/lock/lease-bounds.js';
import { LeaseHistory } from './lease-history-builder.js';

const MS = 1e6;

describe('checkBounds', () => {
  it('passes ops within their bound plus the slack', () => {
    const h = new LeaseHistory()
      .op(1, 'acquire', 0, 4_900 * MS, { resource: 'r', waitMs: 4_000 }, 'fail')
      .op(1, 'close', 5_000 * MS, 7_000 * MS, { boundMs: 2_000 });
    const result = checkBounds(h.sorted(), { slackMs: 1_000 });
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ bounded: 2, overran: 0, worstMarginMs: 900 });
  });

  it('convicts an acquire that overran its waitMs and a close that overran its bound', () => {
    const h = new LeaseHistory()
      .op(1, 'acquire', 0, 5_100 * MS, { resource: 'r', waitMs: 3_000 }, 'fail')
      .op(2, 'release', 0, 20_000 * MS, { grant: 'x', boundMs: 5_000 })
      .op(3, 'buy', 0, 60_000 * MS, {});
    const result = checkBounds(h.sorted(), { slackMs: 1_000 });
    expect(result.verdict).toBe('illegal');
    expect(result.violations.map((v) => [v.kind, v.f, v.process, v.boundMs, v.tookMs])).toEqual([
      ['overran', 'acquire', 1, 3_000, 5_100],
      ['overran', 'release', 2, 5_000, 20_000],
    ]);
    expect(result.violations[0]!.index).toBe(
      h.sorted().findIndex((e) => e.process === 1 && e.type === 'fail'),
    );
  });

  it('convicts an op still pending once the history runs on past its bound, not before', () => {
    const pending = new LeaseHistory()
      .op(1, 'close', 0, undefined, { boundMs: 2_000 })
      .op(2, 'buy', 4_000 * MS, 4_001 * MS, {});
    const result = checkBounds(pending.sorted(), { slackMs: 1_000 });
    expect(result.violations[0]).toMatchObject({ kind: 'pending', f: 'close', process: 1 });
    const soon = new LeaseHistory()
      .op(1, 'close', 0, undefined, { boundMs: 2_000 })
      .op(2, 'buy', 100 * MS, 101 * MS, {});
    expect(checkBounds(soon.sorted()).verdict).toBe('ok');
  });

  it('exempts ops of a client that a fault paused while they ran', () => {
    const h = new LeaseHistory()
      .fault('pause-client', 100 * MS, 5_000 * MS, { client: 1, process: 6 })
      .op(6, 'acquire', 0, 6_000 * MS, { resource: 'r', waitMs: 2_000 }, 'fail')
      .op(2, 'acquire', 0, 6_000 * MS, { resource: 'r', waitMs: 2_000 }, 'fail');
    const byProcess = checkBounds(h.sorted());
    expect(byProcess.stats).toMatchObject({ bounded: 2, exempt: 1, overran: 1 });
    expect(byProcess.violations[0]!.process).toBe(2);
    // With lanes known, the client's ops under another process id are exempt too.
    const later = new LeaseHistory()
      .fault('stall-holder', 100 * MS, 5_000 * MS, { client: 1 })
      .op(11, 'acquire', 0, 6_000 * MS, { resource: 'r', waitMs: 2_000 }, 'fail');
    expect(checkBounds(later.sorted(), { clients: 5 }).stats.exempt).toBe(1);
    expect(checkBounds(later.sorted()).verdict).toBe('illegal');
  });

  it('exempts nothing for a server fault aimed at a client’s op: the bound must hold whatever the servers do', () => {
    const h = new LeaseHistory()
      .fault('flicker', 100 * MS, 1_500 * MS, { node: 'n3', client: 1, process: 1, trigger: 'release' })
      .op(1, 'release', 50 * MS, 20_050 * MS, { grant: 'x', boundMs: 5_000 });
    const result = checkBounds(h.sorted());
    expect(result.stats).toMatchObject({ exempt: 0, overran: 1 });
    expect(checkBounds(h.sorted(), { clientPauses: ['flicker'] }).stats.exempt).toBe(1);
  });

  it('is unknown when no op carries a bound, and names a malformed bound', () => {
    expect(checkBounds(new LeaseHistory().op(1, 'buy', 0, 1, {}).sorted()).verdict).toBe('unknown');
    const bad = new LeaseHistory().op(1, 'close', 0, 1, { boundMs: 'soon' });
    expect(() => checkBounds(bad.sorted())).toThrow(
      /Event 0: expected a non-negative number "value.boundMs"/,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { checkFences } from '../src/lock/index.js';
import { HistoryBuilder } from './lock-history.js';

describe('checkFences', () => {
  it('accepts increasing fences and one holder reusing its fence; counts refused stale ones', () => {
    const h = new HistoryBuilder()
      .resource(1, 'write', { client: 1, fence: '10', stock: 9, accepted: true })
      .resource(2, 'write', { client: 1, fence: '10', stock: 8, accepted: true })
      .resource(3, 'write', { client: 2, fence: '11', stock: 7, accepted: true })
      .resource(4, 'write', { client: 1, fence: '10', stock: 6, accepted: false });
    const result = checkFences(h.events);
    expect(result.verdict).toBe('ok');
    expect(result.stats).toMatchObject({ accepted: 3, staleRefused: 1, freshRefused: 0 });
  });

  it('convicts a stale write that was accepted and two holders sharing one fence', () => {
    const h = new HistoryBuilder()
      .resource(1, 'enter', { client: 1, fence: '90071992547409930', accepted: true })
      .resource(2, 'enter', { client: 2, fence: '90071992547409931', accepted: true })
      .resource(3, 'write', { client: 1, fence: '90071992547409930', accepted: true })
      .resource(4, 'claim', { client: 3, term: 1, fence: '90071992547409931', accepted: true });
    const result = checkFences(h.events);
    expect(result.verdict).toBe('illegal');
    expect(
      result.violations.map((v) =>
        v.kind === 'reissued' ? [v.kind] : [v.kind, v.client, v.fence, v.highest, v.highestClient],
      ),
    ).toEqual([
      ['stale-accepted', 1, '90071992547409930', '90071992547409931', 2],
      ['shared-fence', 3, '90071992547409931', '90071992547409931', 2],
    ]);
    expect(result.stats.staleAccepted).toBe(2);
  });

  it('is unknown, not ok, when nothing carried a fence', () => {
    const h = new HistoryBuilder().resource(1, 'enter', { client: 1, accepted: true });
    expect(checkFences(h.events)).toMatchObject({ verdict: 'unknown', stats: { unfenced: 1 } });
  });

  it('convicts fences granted twice (the lock broke its promise) and still reports that the resource refused them', () => {
    // A failover: the promoted replica's counter restarts below the old primary's; its grants reuse fences 2 and 3.
    const h = new HistoryBuilder()
      .client(1, 1, 'ok', 'acquire', { grant: 'c1.1', resource: 'stock', fence: '2' })
      .resource(2, 'write', { client: 1, fence: '2', stock: 9, accepted: true })
      .client(3, 2, 'ok', 'acquire', { grant: 'c2.1', resource: 'stock', fence: '3' })
      .resource(4, 'write', { client: 2, fence: '3', stock: 8, accepted: true })
      .client(5, 3, 'ok', 'acquire', { grant: 'c3.1', resource: 'stock', fence: '2' })
      .resource(6, 'write', { client: 3, fence: '2', stock: 7, accepted: false })
      .client(7, 4, 'ok', 'acquire', { grant: 'c4.1', resource: 'stock', fence: 3 })
      .resource(8, 'write', { client: 4, fence: '3', stock: 7, accepted: false })
      // The same grant seen twice (a reclaim, a second record of one grant) is no reissue.
      .client(9, 4, 'ok', 'reclaim', { grant: 'c4.1', resource: 'stock', fence: '3' });
    const result = checkFences(h.events);
    expect(result.verdict).toBe('illegal');
    expect(
      result.violations.map((v) =>
        v.kind === 'reissued' ? [v.kind, v.key, v.fence, v.grants, v.indices, v.index, v.time] : [v.kind],
      ),
    ).toEqual([
      ['reissued', 'stock', '2', ['c1.1', 'c3.1'], [0, 4], 4, 5],
      ['reissued', 'stock', '3', ['c2.1', 'c4.1'], [2, 6], 6, 7],
    ]);
    expect(result.violations[0]?.message).toBe(
      "fence 2 on stock granted to c1.1 (#0) and again to c3.1 (#4): the lock's counter went backwards. " +
        'The resource refused 1 access of process 3 with fence 2 and accepted 0',
    );
    expect(result.stats).toMatchObject({ grants: 5, reissued: 2, staleRefused: 2, staleAccepted: 0 });
    expect(result.reissuedFences?.map((r) => [r.fence, r.grants])).toEqual([
      ['2', ['c1.1', 'c3.1']],
      ['3', ['c2.1', 'c4.1']],
    ]);
    expect(result.findings).toEqual([
      "fence reissued: 2 fences granted twice (first: fence 2 on stock to grants c1.1 and c3.1): the lock's counter went backwards. The resource refused 2 stale fences and accepted 0 (fencing held)",
    ]);
  });

  it('leaves one grant recorded twice alone (a reclaim): no reissue, ok', () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'ok', 'acquire', { grant: 'c1.1', resource: 'stock', fence: '4' })
      .resource(2, 'write', { client: 1, fence: '4', stock: 9, accepted: true })
      .client(3, 1, 'ok', 'reclaim', { grant: 'c1.1', resource: 'stock', fence: 4 });
    const result = checkFences(h.events);
    expect(result).toMatchObject({ verdict: 'ok', violations: [], stats: { grants: 2, reissued: 0 } });
    expect(result.findings).toBeUndefined();
  });

  it("convicts a reissued fence with no resource access to judge (the promise is the lock's)", () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'ok', 'acquire', { grant: 'c1.1', fence: '1' })
      .client(2, 2, 'ok', 'acquire', { grant: 'c2.1', fence: '1' });
    const result = checkFences(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations.map((v) => [v.kind, v.key, v.fence])).toEqual([['reissued', '', '1']]);
    expect(result.violations[0]?.message).toBe(
      "fence 1 granted to c1.1 (#0) and again to c2.1 (#1): the lock's counter went backwards. " +
        'The resource saw no access of process 2 with fence 1',
    );
  });

  it('names the second grant in history order, whatever the file order', () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'ok', 'acquire', { grant: 'a', resource: 'r', fence: '7' })
      .client(2, 2, 'ok', 'acquire', { grant: 'b', resource: 'r', fence: '7' })
      .client(3, 3, 'ok', 'acquire', { grant: 'c', resource: 'r', fence: '7' });
    const result = checkFences([...h.events].reverse());
    expect(result.violations.map((v) => (v.kind === 'reissued' ? [v.grants, v.index] : []))).toEqual([
      [['a', 'b', 'c'], 1],
    ]);
  });

  it('convicts a reissued fence the resource accepted twice: shared-fence and reissued', () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'ok', 'acquire', { grant: 'c1.1', resource: 'stock', fence: '5' })
      .resource(2, 'write', { client: 1, fence: '5', stock: 9, accepted: true })
      .client(3, 2, 'ok', 'acquire', { grant: 'c2.1', resource: 'stock', fence: '5' })
      .resource(4, 'write', { client: 2, fence: '5', stock: 8, accepted: true });
    const result = checkFences(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations.map((v) => v.kind)).toEqual(['shared-fence', 'reissued']);
    expect(result.findings?.[0]).toMatch(
      /^fence reissued: 1 fence granted twice .* accepted 1 \(see the violations\)$/,
    );
  });

  it('has no finding when every grant had a fence of its own', () => {
    const h = new HistoryBuilder()
      .client(1, 1, 'ok', 'acquire', { grant: 'c1.1', resource: 'stock', fence: '1' })
      .resource(2, 'write', { client: 1, fence: '1', stock: 9, accepted: true })
      .client(3, 2, 'ok', 'acquire', { grant: 'c2.1', resource: 'stock', fence: '2' })
      .resource(4, 'write', { client: 2, fence: '2', stock: 8, accepted: true });
    const result = checkFences(h.events);
    expect(result).toMatchObject({ verdict: 'ok', stats: { grants: 2, reissued: 0 } });
    expect(result.findings).toBeUndefined();
  });
});

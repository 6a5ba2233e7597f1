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
    expect(result.violations.map((v) => [v.kind, v.client, v.fence, v.highest, v.highestClient])).toEqual([
      ['stale-accepted', 1, '90071992547409930', '90071992547409931', 2],
      ['shared-fence', 3, '90071992547409931', '90071992547409931', 2],
    ]);
  });

  it('is unknown, not ok, when nothing carried a fence', () => {
    const h = new HistoryBuilder().resource(1, 'enter', { client: 1, accepted: true });
    expect(checkFences(h.events)).toMatchObject({ verdict: 'unknown', stats: { unfenced: 1 } });
  });
});

import { describe, expect, it } from 'vitest';
import { checkInventory } from '../src/lock/index.js';
import { HistoryBuilder } from './lock-history.js';

function sale(
  h: HistoryBuilder,
  t: number,
  client: number,
  stock: number,
  outcome: 'ok' | 'fail' | 'info' = 'ok',
) {
  h.client(t, client, 'invoke', 'buy');
  h.resource(t + 1, 'read', { client, stock: stock + 1 });
  h.resource(t + 2, 'write', { client, stock, accepted: true });
  h.client(t + 3, client, outcome, 'buy');
}

describe('checkInventory', () => {
  it('passes when every acknowledged sale took one unit off', () => {
    const h = new HistoryBuilder().resource(0, 'init', { stock: 3 });
    sale(h, 10, 1, 2);
    sale(h, 20, 2, 1);
    sale(h, 30, 1, 0, 'info');
    const result = checkInventory(h.events);
    expect(result.verdict).toBe('ok');
    expect(result.stats['']).toMatchObject({ initial: 3, final: 0, acknowledged: 2, indeterminate: 1 });
  });

  it('convicts a lost update: two buyers read the same stock and both write stock − 1', () => {
    const h = new HistoryBuilder()
      .resource(0, 'init', { stock: 1 })
      .client(1, 1, 'invoke', 'buy')
      .client(1, 2, 'invoke', 'buy')
      .resource(2, 'read', { client: 1, stock: 1 })
      .resource(3, 'read', { client: 2, stock: 1 })
      .resource(4, 'write', { client: 1, stock: 0, fence: '1', accepted: true })
      .resource(5, 'write', { client: 2, stock: 0, fence: '2', accepted: true })
      .client(6, 1, 'ok', 'buy')
      .client(6, 2, 'ok', 'buy');
    const result = checkInventory(h.events);
    expect(result.verdict).toBe('illegal');
    expect(result.violations.map((v) => v.kind)).toEqual(['lost-update', 'lost-update', 'oversell']);
    expect(result.violations[0]).toMatchObject({ client: 2, fence: '2', before: 0, wrote: 0 });
  });

  it('convicts overselling below zero and a failed sale that took effect', () => {
    const h = new HistoryBuilder().resource(0, 'init', { stock: 0 });
    sale(h, 10, 1, -1, 'fail');
    const kinds = checkInventory(h.events).violations.map((v) => v.kind);
    expect(kinds).toEqual(['oversell', 'phantom-sale']);
  });

  it('ignores refused writes and needs the starting stock', () => {
    const h = new HistoryBuilder().resource(1, 'write', { client: 1, stock: 4, accepted: false });
    expect(checkInventory(h.events)).toMatchObject({ verdict: 'unknown', error: /no starting stock/ });
    const result = checkInventory(h.events, { initialStock: 5 });
    expect(result).toMatchObject({ verdict: 'ok', stats: { '': { final: 5, writesRefused: 1 } } });
  });
});

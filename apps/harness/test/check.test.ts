import type { HistoryEvent } from '@fencekit/checker';
import { describe, expect, it } from 'vitest';
import { checkHistory } from '../src/index.js';

const plan = { workload: 'inventory' as const, fenced: true, initialStock: 10 };

/** A client's grant and the release of it, with the lease facts the harness records. */
const grant = (time: number, process: number, fence: string): Omit<HistoryEvent, 'index'>[] => [
  { time: time - 0.5, process, type: 'invoke', f: 'acquire', value: { resource: 'stock', waitMs: 1000 } },
  {
    time,
    process,
    type: 'ok',
    f: 'acquire',
    value: {
      grant: `c${process}.${fence}`,
      resource: 'stock',
      fence,
      validUntil: String(time + 1e9),
      at: String(time),
    },
  },
];
const release = (time: number, process: number, fence: string): Omit<HistoryEvent, 'index'>[] => [
  {
    time,
    process,
    type: 'invoke',
    f: 'release',
    value: { grant: `c${process}.${fence}`, fence, boundMs: 5000 },
  },
  { time: time + 0.1, process, type: 'ok', f: 'release', value: null },
];

/** A clean two-purchase history as the harness writes it. */
function cleanHistory(): HistoryEvent[] {
  const lines: Omit<HistoryEvent, 'index'>[] = [
    { time: 1, process: 'resource', type: 'ok', f: 'init', value: { stock: 10 } },
    ...grant(1.5, 0, '1'),
    { time: 2, process: 0, type: 'invoke', f: 'buy', value: { fence: '1' } },
    { time: 3, process: 'resource', type: 'ok', f: 'read', value: { client: 0, stock: 10, fence: '1' } },
    {
      time: 4,
      process: 'resource',
      type: 'ok',
      f: 'write',
      value: { client: 0, stock: 9, fence: '1', accepted: true },
    },
    { time: 5, process: 0, type: 'ok', f: 'buy', value: { stock: 9 } },
    ...release(5.2, 0, '1'),
    ...grant(5.5, 1, '2'),
    { time: 6, process: 1, type: 'invoke', f: 'buy', value: { fence: '2' } },
    { time: 7, process: 'resource', type: 'ok', f: 'read', value: { client: 1, stock: 9, fence: '2' } },
    {
      time: 8,
      process: 'resource',
      type: 'ok',
      f: 'write',
      value: { client: 1, stock: 8, fence: '2', accepted: true },
    },
    { time: 9, process: 1, type: 'ok', f: 'buy', value: { stock: 8 } },
    ...release(9.2, 1, '2'),
  ];
  return lines.map((e, index) => ({ index, ...e }));
}

describe('checkHistory', () => {
  it('passes a complete, clean history', async () => {
    const outcome = await checkHistory(plan, cleanHistory(), []);
    expect(outcome.verdict).toBe('ok');
    expect(Object.keys(outcome.checkers).sort()).toEqual([
      'bounds',
      'fences',
      'inventory',
      'lease',
      'liveness',
    ]);
  });

  it('never reports ok for an incomplete history', async () => {
    const outcome = await checkHistory(plan, cleanHistory(), [
      'client 2 ended without reporting its event count',
    ]);
    expect(outcome.verdict).toBe('unknown');
    expect(outcome.checkers.completeness?.error).toMatch(/history incomplete: client 2/);
  });

  it('reports unknown, not ok, when a checker crashes', async () => {
    // No init event and no starting stock: the inventory checker throws.
    const broken = cleanHistory().slice(1);
    const outcome = await checkHistory({ ...plan, initialStock: undefined as unknown as number }, broken, []);
    expect(outcome.verdict).toBe('unknown');
    expect(outcome.checkers.inventory?.verdict).toBe('unknown');
    expect(outcome.checkers.inventory?.error).toBeTruthy();
  });

  it('convicts a stale write the resource accepted', async () => {
    const history = cleanHistory();
    history.push(
      { index: history.length, time: 10, process: 0, type: 'invoke', f: 'buy', value: { fence: '1' } },
      {
        index: history.length + 1,
        time: 11,
        process: 'resource',
        type: 'ok',
        f: 'write',
        value: { client: 0, stock: 9, fence: '1', accepted: true },
      },
      { index: history.length + 2, time: 12, process: 0, type: 'ok', f: 'buy', value: { stock: 9 } },
    );
    const outcome = await checkHistory(plan, history, []);
    expect(outcome.verdict).toBe('illegal');
    expect(outcome.checkers.fences?.verdict).toBe('illegal');
    expect(outcome.checkers.inventory?.verdict).toBe('illegal');
  });
});
